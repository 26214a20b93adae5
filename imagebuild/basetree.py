"""Fit the plan to the base image's tree (oci mode), so the layer changes only what the config asks for.

A layer's directory entries replace the lower layers' directory metadata, and a directory entry where the
base has a symlink (`/lib -> usr/lib`) would shadow the link. Ignition on a real root (and MCO's build,
which runs Ignition inside the image) creates missing parents 0755 root and writes *through* existing
symlinked directories. So, from the base layers' tar headers (whiteouts applied, later layers win):

- a path whose ancestor is a symlinked directory in the base is rewritten through the link
  (`/lib/udev/x` -> `/usr/lib/udev/x`) and checked again against the image path rules;
- parent directories the config does not name take the base's mode and owner when the base has them.

Only headers are read; layers are streamed (gzip or plain tar; others are skipped with a warning).
"""

from __future__ import annotations

import posixpath
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from imagebuild.errors import OCIError
from imagebuild.oci import BaseImage
from imagebuild.plan import add_parents
from imagebuild.plan_builder import Entry, Problem, image_path_problem

Progress = Callable[[str], None]
_MAX_LINKS = 40


@dataclass(frozen=True)
class BaseNode:
    """What the base image has at a path."""

    kind: str     # dir | symlink | file
    mode: int
    uid: int
    gid: int
    target: str = ""


def _norm(name: str) -> str:
    """A tar member name (`./etc/`, `etc/x`, `/usr`) as a normalised absolute path."""
    while name.startswith("./"):
        name = name[2:]
    name = name.lstrip("/")
    if name in ("", "."):
        return "/"
    return "/" + posixpath.normpath(name).lstrip("/")


def _ancestors(path: str) -> Iterable[str]:
    parent = posixpath.dirname(path)
    while parent != "/":
        yield parent
        parent = posixpath.dirname(parent)


def scan_base(base: BaseImage, wanted: set[str], *, progress: Progress = lambda _m: None) -> dict[str, BaseNode]:
    """The base's final node for each wanted path (after every layer and whiteout)."""
    nodes: dict[str, BaseNode] = {}
    for desc in base.layers:
        if not ("tar" in desc.media_type and ("gzip" in desc.media_type or desc.media_type.endswith(".tar")
                                              or desc.media_type.endswith("tar"))):
            progress(f"warning: cannot read base layer {desc.digest[:19]} ({desc.media_type}); "
                     "parent directories keep default metadata")
            continue
        progress(f"reading base layer {desc.digest[:19]} for directory metadata")
        try:
            with base.open_blob(desc) as stream, tarfile.open(fileobj=stream, mode="r|*") as tar:
                for member in tar:
                    _apply(nodes, member, wanted)
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise OCIError(desc.digest, f"cannot read base layer: {exc}") from exc
    return nodes


def _apply(nodes: dict[str, BaseNode], member: tarfile.TarInfo, wanted: set[str]) -> None:
    path = _norm(member.name)
    base_name = posixpath.basename(path)
    if base_name == ".wh..wh..opq":
        directory = posixpath.dirname(path)
        for p in [p for p in nodes if p.startswith(directory + "/")]:
            del nodes[p]
        return
    if base_name.startswith(".wh."):
        gone = posixpath.join(posixpath.dirname(path), base_name[4:])
        for p in [p for p in nodes if p == gone or p.startswith(gone + "/")]:
            del nodes[p]
        return
    if path not in wanted:
        return
    if member.isdir():
        nodes[path] = BaseNode("dir", member.mode & 0o7777, member.uid, member.gid)
    elif member.issym():
        nodes[path] = BaseNode("symlink", 0o777, member.uid, member.gid, member.linkname)
    else:
        nodes[path] = BaseNode("file", member.mode & 0o7777, member.uid, member.gid)


def wanted_paths(entries: Iterable[Entry]) -> set[str]:
    """Every path and ancestor the plan touches (symlink resolution may add more, see fit_to_base)."""
    out: set[str] = set()
    for e in entries:
        out.add(e.path)
        out.update(_ancestors(e.path))
    return out


def _resolve(path: str, nodes: dict[str, BaseNode]) -> str | None:
    """`path` with every symlinked ancestor in the base replaced by its target; None on a loop."""
    for _ in range(_MAX_LINKS):
        for ancestor in sorted(_ancestors(path), key=len):
            node = nodes.get(ancestor)
            if node is not None and node.kind == "symlink":
                target = node.target if node.target.startswith("/") else \
                    posixpath.join(posixpath.dirname(ancestor), node.target)
                path = _norm(posixpath.join(target, path[len(ancestor) + 1:]))
                break
        else:
            return path
    return None


def fit_to_base(entries: Iterable[Entry], base: BaseImage, *, progress: Progress = lambda _m: None
                ) -> tuple[tuple[Entry, ...], tuple[Problem, ...]]:
    """Rewrite paths through the base's symlinked directories and give implicit parents the base's metadata."""
    explicit = [e for e in entries if not (e.kind == "dir" and not e.origin)]
    wanted = wanted_paths(explicit)
    nodes = scan_base(base, wanted, progress=progress)
    moved = {e.path: _resolve(e.path, nodes) for e in explicit}
    if any(new != old for old, new in moved.items()):
        # the new locations' ancestors may be symlinks or have metadata too: read them as well
        nodes = scan_base(base, wanted | wanted_paths(Entry(p, "file") for p in moved.values() if p),
                          progress=progress)
        moved = {e.path: _resolve(e.path, nodes) for e in explicit}
    problems: list[Problem] = []
    out: dict[str, Entry] = {}
    for e in explicit:
        new = moved[e.path]
        if new is None:
            problems.append(Problem(e.origin, "path-conflict", "refused", f"{e.path}: symlink loop in the base image"))
            continue
        if new != e.path:
            found = image_path_problem(new)
            if found is not None:
                code, disposition, message = found
                problems.append(Problem(e.origin, code, disposition, f"{e.path} resolves to {new} in the base: {message}"))
                continue
        target = moved.get(e.target, e.target) if e.kind == "hardlink" else e.target
        if new in out and out[new] != replace(e, path=new, target=target or ""):
            problems.append(Problem(e.origin, "path-conflict", "refused",
                                    f"{e.path} and {out[new].origin} both land on {new} in the base image"))
            continue
        out[new] = replace(e, path=new, target=target or "")
    for path, entry in sorted(out.items()):
        above = next((a for a in _ancestors(path) if a in out and out[a].kind != "dir"), None)
        if above is not None:
            problems.append(Problem(entry.origin, "path-conflict", "refused",
                                    f"{path} lies below {above}, which {out[above].origin} makes a {out[above].kind}"))
    add_parents(out)
    for path, entry in out.items():
        node = nodes.get(path)
        if entry.kind == "dir" and not entry.origin and node is not None and node.kind == "dir":
            out[path] = replace(entry, mode=node.mode, uid=node.uid, gid=node.gid)
    return tuple(out[p] for p in sorted(out)), tuple(problems)
