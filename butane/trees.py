"""`storage.trees`: a local directory under the files directory becomes files, links (and directories).

Sugar step after the base copy. Like Butane (filepath.Walk: lexical order, symlinks not followed):
regular files become `files` with data-URL contents and mode 0755 when executable else 0644 (or the tree's
`file_mode`); symlinks become `links` with their target; directories become `directories` only when the
tree sets `dir_mode`, `user` or `group` (fcos 1.7). An explicit `files` entry for the same path may add
mode or owner, but one with contents, or a node of another type, is `matching filesystem node has
existing contents or different type`. Anything else (a FIFO, a socket) is refused.
"""

from __future__ import annotations

import os
import posixpath
import stat
from typing import Any

from butane import messages as m
from butane.context import Context
from butane.files import LocalFileError, ensure_within, go_error, join, make_data_url


class Tracker:
    """Index of the config's files, directories and links by path (Butane's nodeTracker)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.storage = config.setdefault("storage", {})
        self.index: dict[str, dict[str, int]] = {"files": {}, "directories": {}, "links": {}}
        for kind, table in self.index.items():
            for i, entry in enumerate(self.storage.get(kind) or []):
                table[entry.get("path", "")] = i

    def exists(self, path: str) -> bool:
        return any(path in table for table in self.index.values())

    def get(self, kind: str, path: str) -> tuple[int, dict[str, Any] | None]:
        i = self.index[kind].get(path)
        return (i, self.storage[kind][i]) if i is not None else (-1, None)

    def add(self, kind: str, entry: dict[str, Any]) -> int:
        items = self.storage.setdefault(kind, [])
        items.append(entry)
        self.index[kind][entry["path"]] = len(items) - 1
        return len(items) - 1


def _owner(tree: dict[str, Any], key: str) -> dict[str, Any]:
    owner = tree.get(key) or {}
    return {k: owner[k] for k in ("id", "name") if k in owner}


def _node(path: str, tree: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path}
    for key in ("user", "group"):
        owner = _owner(tree, key)
        if owner:
            entry[key] = owner
    return entry


def _walk(root: str, problems: list[str]) -> list[tuple[str, os.stat_result]]:
    """(relative path, lstat) of everything under `root`, in filepath.Walk order; unreadable entries are
    reported (Go's `open <dir>: permission denied`) and skipped, as Walk continues past them."""
    out: list[tuple[str, os.stat_result]] = []

    def visit(rel: str) -> None:
        full = os.path.join(root, rel) if rel != "." else root
        try:
            info = os.lstat(full)
        except OSError as exc:
            problems.append(go_error("lstat", full, exc))
            return
        out.append((rel, info))
        if stat.S_ISDIR(info.st_mode):
            try:
                names = sorted(os.listdir(full))
            except OSError as exc:
                problems.append(go_error("open", full, exc))
                return
            for name in names:
                visit(name if rel == "." else rel + "/" + name)

    visit(".")
    return out


def process_trees(trees: list[dict[str, Any]], config: dict[str, Any], ctx: Context) -> None:
    """Expand every tree into `config` (errors at `$.storage.trees.N`)."""
    if not trees:
        return
    tracker = Tracker(config)
    for i, tree in enumerate(trees):
        ypath = ("storage", "trees", i)
        if not ctx.files_dir:
            ctx.problems.error(ypath, m.ERR_NO_FILES_DIR)
            return
        src = join(ctx.files_dir, tree.get("local", ""))
        try:
            ensure_within(src, ctx.files_dir)
        except LocalFileError as exc:
            ctx.problems.error(ypath, str(exc))
            continue
        try:
            info = os.stat(src)
        except OSError as exc:
            ctx.problems.error(ypath, go_error("stat", src, exc))
            continue
        if not stat.S_ISDIR(info.st_mode):
            ctx.problems.error(ypath, m.ERR_TREE_NOT_DIRECTORY)
            continue
        dest = tree.get("path") or "/"
        _expand(src, dest, tree, tracker, ypath, ctx)
    if not config["storage"]:
        del config["storage"]


def _filled(kind: str, entry: dict[str, Any]) -> bool:
    """Whether an explicit entry already says what the tree would (a file's contents, a link's target)."""
    if kind == "files":
        return bool((entry.get("contents") or {}).get("source"))
    return bool(entry.get("target"))


def _claim(
    kind: str, dest_path: str, tree: dict[str, Any], tracker: Tracker, ypath: tuple, ctx: Context
) -> tuple[int, dict[str, Any]] | None:
    """The entry a tree's file or link fills in at `dest_path`: an explicit one of the same kind that left
    its contents (or target) unset, else a new one; None (the error reported) when the path is taken."""
    n, found = tracker.get(kind, dest_path)
    if found is not None:
        if _filled(kind, found):
            ctx.problems.error(ypath, m.ERR_NODE_EXISTS)
            return None
        return n, found
    if tracker.exists(dest_path):
        ctx.problems.error(ypath, m.ERR_NODE_EXISTS)
        return None
    entry = _node(dest_path, tree)
    n = tracker.add(kind, entry)
    add_translations(kind, n, ypath, ctx)
    return n, entry


def add_translations(kind: str, n: int, ypath: tuple, ctx: Context) -> None:
    """Record that generated `storage.<kind>[n]` and everything in it came from `ypath` (Butane's
    AddFromCommonSource); when it opens the list, so did the list (walkTree and the quadlet translators'
    `if i == 0` translation), so an error on the whole list, such as openshift's field filters, or on a
    generated field, such as Ignition's `path not absolute`, points at the tree or quadlet that made it."""
    ctx.translated(("storage", kind, n), ypath)
    ctx.common(("storage", kind, n), ypath)
    if n == 0:
        ctx.translated(("storage", kind), ypath)


def _expand(src: str, dest: str, tree: dict[str, Any], tracker: Tracker, ypath: tuple, ctx: Context) -> None:
    custom_dirs = "dir_mode" in tree or bool(_owner(tree, "user")) or bool(_owner(tree, "group"))
    walk_problems: list[str] = []
    entries = _walk(src, walk_problems)
    for message in walk_problems:
        ctx.problems.error(ypath, message)
    for rel, info in entries:
        dest_path = posixpath.normpath(posixpath.join(dest, rel))
        if dest_path.startswith("//"):
            dest_path = "/" + dest_path.lstrip("/")
        full = os.path.join(src, rel) if rel != "." else src
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            if not custom_dirs:
                continue
            if tracker.exists(dest_path):
                ctx.problems.error(ypath, m.ERR_NODE_EXISTS)
                continue
            entry = _node(dest_path, tree)
            entry["mode"] = tree.get("dir_mode", 0o755)
            n = tracker.add("directories", entry)
            add_translations("directories", n, ypath, ctx)
        elif stat.S_ISREG(mode):
            claimed = _claim("files", dest_path, tree, tracker, ypath, ctx)
            if claimed is None:
                continue
            n, entry = claimed
            try:
                with open(full, "rb") as handle:
                    data = handle.read()
            except OSError as exc:
                ctx.problems.error(ypath, go_error("open", full, exc))
                continue
            contents = entry.setdefault("contents", {})
            url, compression = make_data_url(data, contents.get("compression"), ctx.allow_compression)
            contents["source"] = url
            ctx.translated(("storage", "files", n, "contents", "source"), ypath)
            if compression is not None:
                contents["compression"] = compression
                ctx.translated(("storage", "files", n, "contents", "compression"), ypath)
            ctx.translated(("storage", "files", n, "contents"), ypath)
            if entry.get("mode") is None:
                entry["mode"] = tree.get("file_mode", 0o755 if mode & 0o111 else 0o644)
                ctx.translated(("storage", "files", n, "mode"), ypath)
        elif stat.S_ISLNK(mode):
            claimed = _claim("links", dest_path, tree, tracker, ypath, ctx)
            if claimed is None:
                continue
            n, entry = claimed
            try:
                entry["target"] = os.readlink(full)
            except OSError as exc:
                ctx.problems.error(ypath, go_error("readlink", full, exc))
                continue
            ctx.translated(("storage", "links", n, "target"), ypath)
        else:
            ctx.problems.error(ypath, m.ERR_FILE_TYPE)
