"""Planning `storage.files`, `directories` and `links` into image entries (plan.py states the rules):
numeric owners only (symlinks too), modes, contents decoded and verified (ignition/resource.py), hard links to files of this plan."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from ignition.resource import ResourceError, read_resource
from imagebuild.plan_builder import REFUSED, Entry, PlanBuilder, items_of

# Only data: sources can be baked into an image reproducibly: a remote one would make the image depend
# on whatever the URL serves at build time, so it is refused rather than fetched.
_NOT_INLINE = ("a remote source cannot be baked into an image reproducibly "
               "(inline it as a data URL, or leave the file to Ignition)")


def _owner(b: PlanBuilder, origin: str, node: Mapping[str, Any], key: str) -> int | None:
    """Numeric id of `user`/`group`; root by name is 0; other names cannot be resolved without the image."""
    value = node.get(key)
    if not value:
        return 0
    if not isinstance(value, Mapping):
        b.problem(f"{origin}.{key}", "json-type", REFUSED, "must be an object")
        return None
    if value.get("id") is not None:
        uid = value["id"]
        if isinstance(uid, bool) or not isinstance(uid, int) or uid < 0:
            b.problem(f"{origin}.{key}.id", "json-type", REFUSED, f"invalid id {uid!r}")
            return None
        return uid
    name = value.get("name")
    if name in (None, "", "root"):
        return 0
    b.problem(f"{origin}.{key}.name", "owner-by-name", REFUSED,
              f"owner {name!r} by name cannot be resolved in an image layer; give the numeric id")
    return None


def _mode(b: PlanBuilder, origin: str, node: Mapping[str, Any], default: int) -> int | None:
    mode = node.get("mode")
    if mode is None:
        return default
    if isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode <= 0o7777:
        b.problem(f"{origin}.mode", "mode", REFUSED, f"invalid mode {mode!r}")
        return None
    return mode


def plan_files(b: PlanBuilder, storage: Mapping[str, Any], base: str) -> None:
    """Add the files, directories and links of `storage` to the plan."""
    for i, f in items_of(b, storage, "files", base):
        origin = f"{base}.files.{i}"
        path = b.place(f"{origin}.path", f.get("path"))
        if path is None:
            continue
        if f.get("append"):
            b.problem(f"{origin}.append", "file-append", REFUSED,
                      "appending needs the base image's file; write the whole file instead")
            continue
        try:
            data = read_resource(f.get("contents")) or b""
        except ResourceError as exc:
            field_path = f"{origin}.contents" + (f".{exc.field}" if exc.field else "")
            b.problem(field_path, exc.code, REFUSED, _NOT_INLINE if exc.code == "remote-source" else exc.message)
            continue
        uid, gid, mode = _owner(b, origin, f, "user"), _owner(b, origin, f, "group"), _mode(b, origin, f, 0o644)
        if uid is None or gid is None or mode is None:
            continue
        b.add(Entry(path, "file", mode, data, uid=uid, gid=gid, origin=origin))
    for i, d in items_of(b, storage, "directories", base):
        origin = f"{base}.directories.{i}"
        path = b.place(f"{origin}.path", d.get("path"))
        if path is None:
            continue
        uid, gid, mode = _owner(b, origin, d, "user"), _owner(b, origin, d, "group"), _mode(b, origin, d, 0o755)
        if uid is None or gid is None or mode is None:
            continue
        b.add(Entry(path, "dir", mode, uid=uid, gid=gid, origin=origin))
    hard: list[tuple[str, str, str]] = []
    for i, link in items_of(b, storage, "links", base):
        origin = f"{base}.links.{i}"
        path = b.place(f"{origin}.path", link.get("path"))
        if path is None:
            continue
        target = link.get("target")
        if not isinstance(target, str) or not target:
            b.problem(f"{origin}.target", "link-target", REFUSED, "link target is required")
            continue
        if link.get("hard"):
            hard.append((origin, path, posixpath.normpath(posixpath.join(posixpath.dirname(path), target))))
            continue
        # Ignition's WriteLink lchowns a symlink to its user/group; a hard link shares its target's inode
        # (and owner), so Ignition ignores user/group there.
        uid, gid = _owner(b, origin, link, "user"), _owner(b, origin, link, "group")
        if uid is None or gid is None:
            continue
        b.add(Entry(path, "symlink", 0o777, target=target, uid=uid, gid=gid, origin=origin))
    for origin, path, target in hard:
        found = b.entries.get(target)
        if found is None or found.kind != "file":
            b.problem(f"{origin}.target", "hard-link", REFUSED,
                      f"hard link target {target} is not a file of this config")
            continue
        b.add(Entry(path, "hardlink", found.mode, target=target, uid=found.uid, gid=found.gid, origin=origin))
