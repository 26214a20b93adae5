"""Path rules (Ignition `types/path.go`) and Go's `path.Clean`, which decides "fully simplified"."""

from __future__ import annotations


def go_clean(p: str) -> str:
    """Go's `path.Clean`: lexical simplification (`//` -> `/`, drop `.`, resolve `..`, no trailing slash)."""
    if p == "":
        return "."
    rooted = p.startswith("/")
    out: list[str] = []
    for part in p.split("/"):
        if part == "" or part == ".":
            continue
        if part == "..":
            if out and out[-1] != "..":
                out.pop()
            elif not rooted:
                out.append("..")
            continue
        out.append(part)
    joined = "/".join(out)
    if rooted:
        return "/" + joined
    return joined or "."


def go_join(*parts: str) -> str:
    """Go's `path.Join`: join non-empty parts with `/`, then Clean."""
    kept = [p for p in parts if p]
    return go_clean("/".join(kept)) if kept else ""


def go_ext(p: str) -> str:
    """Go's `path.Ext`: the suffix from the last dot of the last element, or ""."""
    for i in range(len(p) - 1, -1, -1):
        if p[i] == "/":
            return ""
        if p[i] == ".":
            return p[i:]
    return ""


def check_path(p: str) -> str | None:
    """Ignition's validatePath: non-empty, absolute, fully simplified."""
    if p == "":
        return "path not specified"
    if not p.startswith("/"):
        return "path not absolute"
    if ("//" in p or "/." in p or p.endswith("/")) and go_clean(p) != p:
        return "path is not fully simplified"
    return None
