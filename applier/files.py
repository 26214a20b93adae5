"""Writing and removing the config's files under a root, with MCO's backup rules (MCO `pkg/daemon/file_writers.go`, `update.go`).

- Writes are atomic (fleet/atomic.py): mode set before data, owner from `user`/`group` (id or name,
  looked up in the root's own passwd/group files; default 0:0), fsync, rename.
- Originals are backed up once: the first time the applier writes a path it records either a backup
  (`orig/<path>.mcdorig`, when a file the config did not manage already existed) or a stamp
  (`noorig/<path>.mcdnoorig`). A backup is never overwritten.
- When a path leaves the config: a stamp means delete the file; a backup is copied back over the path
  (atomically). A path with neither is not ours and is left alone.
- Backups and stamps outlive that step: they are dropped (`drop_markers`, the paths listed in the pending
  update) only once the state records a config without the path, so a kill at any step leaves every original in its backup or in place, whichever
  target the next run has (a path managed again while its backup exists keeps that backup).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from applier.errors import PermanentError
from applier.state import StateDir
from fleet.atomic import copy_atomic, fsync_dirs, symlink_atomic, write_atomic
from fleet.diff import ContentsError, file_contents, file_mode


def host_path(root: Path, path: str) -> Path:
    """The path under `root` for an absolute config path; refuses relative paths and `..`."""
    pure = PurePosixPath(path)
    if not pure.is_absolute() or ".." in pure.parts:
        raise PermanentError(path, "path must be absolute and must not contain '..'")
    return root.joinpath(*pure.parts[1:])


PASSWD_FILES = ("etc/passwd", "usr/lib/passwd")  # nss-altfiles on CoreOS keeps system users in /usr/lib
GROUP_FILES = ("etc/group", "usr/lib/group")


def account_entry(root: Path, files: tuple[str, ...], name: str) -> list[str] | None:
    """The colon-separated fields of `name` in the root's passwd or group files (first match), or None."""
    for rel in files:
        try:
            text = (root / rel).read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            parts = line.split(":")
            if len(parts) >= 3 and parts[0] == name and parts[2].isdigit():
                return parts
    return None


def owner_of(root: Path, entry: Mapping[str, Any]) -> tuple[int, int]:
    """uid and gid of a file entry: `id`, else the name looked up in the root's passwd/group; default 0:0."""
    path = str(entry.get("path", "?"))
    ids = []
    for key, dbs, label in (("user", PASSWD_FILES, "UserID for username"), ("group", GROUP_FILES, "GroupID for group")):
        spec = entry.get(key) or {}
        if isinstance(spec, Mapping) and isinstance(spec.get("id"), int):
            ids.append(int(spec["id"]))
        elif isinstance(spec, Mapping) and spec.get("name"):
            found = account_entry(root, dbs, str(spec["name"]))
            if found is None:
                raise PermanentError(f"{path}.{key}.name", f"failed to retrieve {label}: {spec['name']}")
            ids.append(int(found[2]))
        else:
            ids.append(0)
    return ids[0], ids[1]


class FileWriter:
    """Applies file entries under `root`, keeping backups in the state directory."""

    def __init__(self, root: Path, state: StateDir, *, durable: bool = True) -> None:
        self.root = Path(root)
        self.state = state
        self.durable = durable
        self.dirty: set[Path] = set()

    def flush(self) -> None:
        """Make every rename so far durable (one fsync per touched directory); call before recording state."""
        if self.durable:
            fsync_dirs(self.dirty)

    def record_original(self, path: str, target: Path, managed_before: bool) -> None:
        """Back up the original once, or stamp that there is none."""
        orig, noorig = self.state.orig(path), self.state.noorig(path)
        if orig.exists() or noorig.exists():
            return
        if not managed_before and target.is_file() and not target.is_symlink():
            copy_atomic(target, orig)
        else:
            write_atomic(noorig, b"", durable=self.durable, dirty=self.dirty)

    def adopt(self, path: str) -> None:
        """Stamp a path the config already put there (e.g. Ignition at first boot) as ours."""
        self.record_original(path, host_path(self.root, path), True)

    def write_bytes(self, path: str, data: bytes, *, mode: int, uid: int = 0, gid: int = 0,
                    managed_before: bool = False) -> None:
        """Write one path (recording its original first)."""
        target = host_path(self.root, path)
        try:
            if target.is_dir() and not target.is_symlink():
                raise PermanentError(path, "cannot write file: a directory is in the way")
            self.record_original(path, target, managed_before)
            write_atomic(target, data, mode=mode, uid=uid, gid=gid, durable=self.durable, dirty=self.dirty)
        except OSError as exc:
            raise PermanentError(path, f"cannot write file: {exc.strerror or exc}") from exc

    def write(self, entry: Mapping[str, Any], *, managed_before: bool = False) -> None:
        """Write one Ignition file entry (contents decoded, mode, owner)."""
        path = str(entry.get("path", ""))
        if entry.get("append"):
            raise PermanentError(path, "found an append section when writing files. Append is not supported")
        try:
            data = file_contents(entry)
        except ContentsError as exc:
            raise PermanentError(exc.path, exc.message) from exc
        uid, gid = owner_of(self.root, entry)
        self.write_bytes(path, data, mode=file_mode(entry), uid=uid, gid=gid, managed_before=managed_before)

    def symlink(self, path: str, target_link: str, *, managed_before: bool = False) -> None:
        """Make `path` a symlink to `target_link` (unit masks), atomically."""
        target = host_path(self.root, path)
        try:
            self.record_original(path, target, managed_before)
            symlink_atomic(target, target_link, dirty=self.dirty)
        except OSError as exc:
            raise PermanentError(path, f"cannot create symlink: {exc.strerror or exc}") from exc

    def remove(self, path: str) -> str:
        """Undo the applier's ownership of `path`: restore the backup, delete a stamped file, else leave it.
        The backup or stamp itself stays (`drop_markers` removes it once the state no longer has the path)."""
        target = host_path(self.root, path)
        orig, noorig = self.state.orig(path), self.state.noorig(path)
        try:
            if orig.exists():
                if target.is_dir() and not target.is_symlink():
                    raise PermanentError(path, "cannot restore the original: a directory is in the way")
                copy_atomic(orig, target)  # the backup stays until the state records the path's end
                return "restored"
            if noorig.exists():
                if target.is_symlink() or target.exists():
                    target.unlink()
                    self.dirty.add(target.parent)
                return "deleted"
        except OSError as exc:
            raise PermanentError(path, f"cannot remove file: {exc.strerror or exc}") from exc
        return "left"

    def marker_dirs(self, paths: Iterable[str]) -> set[Path]:
        """The directories holding the backups and stamps of `paths` (swept of temp files after a kill)."""
        return {m.parent for p in paths for m in (self.state.orig(p), self.state.noorig(p))}

    def drop_markers(self, paths: Iterable[str], keep: Iterable[str] = ()) -> int:
        """Remove the backups and stamps of `paths` (except those in `keep`); returns how many.

        Call only after the state records a config whose paths are `keep`: every other path was restored or
        deleted before that record was written, so its marker is no longer anyone's only copy of anything.
        """
        kept = set(keep)
        dropped = 0
        for path in sorted(set(paths) - kept):
            for marker in (self.state.orig(path), self.state.noorig(path)):
                try:
                    os.unlink(marker)
                except FileNotFoundError:
                    continue
                dropped += 1
                for parent in marker.parents:  # empty directories of the marker tree go too
                    if parent in (self.state.path / "orig", self.state.path / "noorig"):
                        break
                    try:
                        parent.rmdir()
                    except OSError:
                        break
        return dropped
