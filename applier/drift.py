"""Drift: files and units changed behind the applier's back (MCO `pkg/daemon/on_disk_validation.go`).

`DriftChecker.check(config)` verifies the current config's files and units; a file whose `lstat` (mtime,
size, inode, mode) is unchanged since it last verified is not re-read, so a periodic check of a large
config is cheap. `Watcher` adds inotify (through libc, when available) on the parent directories of the
managed paths, so a change is noticed at once instead of at the next interval.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from applier.files import host_path
from applier.units import Systemctl, dropin_path, unit_path
from applier.verify import check_file, check_unit
from fleet.diff import dropins_of, files_of, units_of

_IN_FLAGS = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400  # MODIFY ATTRIB CLOSE_WRITE MOVED_* CREATE DELETE*
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_EVENT = struct.Struct("iIII")


class DriftChecker:
    """Verifies the current config on disk, remembering what it already verified."""

    def __init__(self, root: Path, systemctl: Systemctl | None) -> None:
        self.root = Path(root)
        self.systemctl = systemctl
        self._seen: dict[str, tuple[int, int, int, int]] = {}

    def _stat_key(self, path: str) -> tuple[int, int, int, int] | None:
        try:
            st = os.lstat(host_path(self.root, path))
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode)

    def forget(self, paths: Iterable[str] | None = None) -> None:
        """Drop remembered verifications (all, or of some paths) after the applier wrote them."""
        if paths is None:
            self._seen.clear()
        else:
            for p in paths:
                self._seen.pop(p, None)

    def check(self, config: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
        """(drifted file paths, drifted unit names, problem texts) for the config."""
        files, units, problems = [], [], []
        for name, unit in units_of(config).items():
            unit_problems = check_unit(self.root, unit, self.systemctl)
            if unit_problems:
                units.append(name)
                problems += unit_problems
        for path, entry in files_of(config).items():
            key = self._stat_key(path)
            if key is not None and self._seen.get(path) == key:
                continue
            problem = check_file(self.root, entry)
            if problem:
                files.append(path)
                problems.append(problem)
                self._seen.pop(path, None)
            elif key is not None:
                self._seen[path] = key
        return files, units, problems


def watched_paths(config: Mapping[str, Any]) -> set[str]:
    """Every path of the config the drift watch covers: files, unit files, drop-ins."""
    paths = set(files_of(config))
    paths |= {unit_path(n) for n in units_of(config)}
    paths |= {dropin_path(*k.split("/", 1)) for k in dropins_of(config)}
    return paths


class Watcher:
    """inotify on the parent directories of the watched paths; `wait(timeout)` says whether one changed."""

    def __init__(self, root: Path, paths: Iterable[str]) -> None:
        self.root = Path(root)
        self.fd = -1
        self._dirs: dict[int, Path] = {}
        self._targets = {host_path(self.root, p) for p in paths}
        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name, use_errno=True) if name else None
            init = libc.inotify_init1 if libc else None
        except (OSError, AttributeError):
            init = None
        if init is None or libc is None:
            return
        fd = init(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return
        self.fd = fd
        for directory in sorted({t.parent for t in self._targets}):
            wd = libc.inotify_add_watch(fd, str(directory).encode(), _IN_FLAGS)
            if wd < 0:  # out of watches or missing directory: the periodic check still covers it
                continue
            self._dirs[wd] = directory

    @property
    def active(self) -> bool:
        """True when inotify is in use."""
        return self.fd >= 0 and bool(self._dirs)

    def wait(self, timeout: float) -> bool:
        """Block up to `timeout` s; True when a watched path changed."""
        if not self.active:
            return False
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return False
        offset, hit = 0, False
        while offset + _EVENT.size <= len(data):
            wd, _mask, _cookie, length = _EVENT.unpack_from(data, offset)
            raw = data[offset + _EVENT.size: offset + _EVENT.size + length].split(b"\0", 1)[0]
            offset += _EVENT.size + length
            directory = self._dirs.get(wd)
            if directory is not None and (directory / raw.decode(errors="replace")) in self._targets:
                hit = True
        return hit

    def close(self) -> None:
        """Release the inotify descriptor."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
