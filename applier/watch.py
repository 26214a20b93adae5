"""inotify over the paths the drift check covers, so a hand change is seen at once, not at the next interval.

A path is watched through its parent directory (an edit, chmod, `touch`, delete, rename or create of that entry)
and through every ancestor up to the root (the entry on the way to it: `rm -rf /etc/audit` is seen as a change of
every managed path under it). Enablement links in `*.wants/` and `*.requires/` directories are paths like any
other (applier/drift.py `watch_map` lists them). `wait(timeout)` answers which watched paths changed; after an
ancestor changed (a directory removed or replaced) or the kernel dropped events, `stale` says the watches must
be set up again. inotify is reached through libc (ctypes); without it (or out of watches) `active` is False and
the periodic check is all there is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from applier.files import host_path

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ONLYDIR = 0x4000, 0x8000, 0x1000000
_FLAGS = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
          | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR)
_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_EVENT = struct.Struct("iIII")


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "inotify_init1") else None


class Watcher:
    """inotify on the parents and ancestors of `paths` (config paths under `root`)."""

    def __init__(self, root: Path, paths: Iterable[str]) -> None:
        """Watch `paths` (config paths under `root`) through their parents and ancestors up to `root`."""
        self.root = Path(root)
        self.fd = -1
        self.stale = False
        self.checked = False  # set by the owner once it checked what changed before the watch was set up
        self._dirs: dict[int, Path] = {}
        self._host: dict[Path, str] = {host_path(self.root, p): p for p in paths}
        # directory -> the names in it on the way to a watched path, and the watched paths below each name
        self._below: dict[Path, dict[str, list[str]]] = {}
        top = host_path(self.root, "/")
        for target, path in self._host.items():
            child = target
            while child != top and child.parent != child:
                self._below.setdefault(child.parent, {}).setdefault(child.name, []).append(path)
                child = child.parent
        libc = _libc()
        if libc is None:
            return
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return
        self.fd = fd
        for directory in sorted(self._below):
            wd = libc.inotify_add_watch(fd, os.fsencode(directory), _FLAGS)
            if wd >= 0:  # a missing directory is watched through its parent; out of watches: the periodic check
                self._dirs[wd] = directory

    @property
    def paths(self) -> set[str]:
        """Every watched path."""
        return set(self._host.values())

    @property
    def active(self) -> bool:
        """True when inotify is in use."""
        return self.fd >= 0 and bool(self._dirs)

    def fileno(self) -> int:
        """The inotify descriptor (for select)."""
        return self.fd

    @staticmethod
    def ready(watchers: Sequence[Watcher], timeout: float, also: Sequence[int] = ()) -> list[Watcher]:
        """Block up to `timeout` s, until an active watcher of `watchers` has events or a descriptor of `also` is
        readable; the watchers with events."""
        active = [w for w in watchers if w.active]
        fds = [w.fd for w in active] + list(also)
        if not fds:
            time.sleep(max(timeout, 0))
            return []
        readable, _, _ = select.select(fds, [], [], max(timeout, 0))
        return [w for w in active if w.fd in readable]

    def wait(self, timeout: float, *, also: Sequence[int] = ()) -> set[str]:
        """Block up to `timeout` s (or until a descriptor of `also` is readable); the watched paths that changed."""
        fds = ([self.fd] if self.active else []) + list(also)
        if not fds:
            return set()
        ready, _, _ = select.select(fds, [], [], max(timeout, 0))
        return self.read() if self.fd in ready else set()

    def read(self) -> set[str]:
        """The watched paths changed by the events queued now (none when nothing is queued)."""
        changed: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except (BlockingIOError, OSError):
                return changed
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size: offset + _EVENT.size + length].split(b"\0", 1)[0]
                offset += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW:
                    self.stale = True
                    changed.update(self._host.values())
                    continue
                directory = self._dirs.get(wd)
                if directory is None:
                    continue
                if mask & _GONE:
                    self.stale = True
                    continue
                hit = self._below.get(directory, {}).get(os.fsdecode(raw))
                if hit:
                    changed.update(hit)
                    if (directory / os.fsdecode(raw)) not in self._host:
                        self.stale = True  # a directory on the way was created, removed or replaced
            if len(data) < 65536 - 4096:
                return changed

    def close(self) -> None:
        """Release the inotify descriptor."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
