"""Atomic file writes: temp file in the same directory, mode set before data, fsync, rename, fsync the directory.

The one writer of whole files (and replaced symlinks) for every package: the directory store's records, the agent's files and
state, certificates, OCI layouts and the pointer config. A reader (or a node killed at any instant) sees
the old bytes or the new bytes, never a mix, and a stray temp file is the only possible leftover (named
`.<name[:80]>.mco-tmp*`, so within the file systems' 255-byte limit; swept by `sweep_temp`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

TEMP_MARK = ".mco-tmp"


def fsync_dir(path: Path) -> None:
    """Make a rename in `path` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: Path, mode: int = 0o755) -> None:
    """mkdir -p with the given mode for created directories."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=mode)


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644, uid: int | None = None, gid: int | None = None,
                 durable: bool = True, dirty: set[Path] | None = None) -> None:
    """Replace `path` with `data` atomically, with the given mode and (when given) owner.

    `durable`: the data is fsynced before the rename, so a renamed file is never empty after a crash; the
    directory is fsynced too, or, when a `dirty` set is given, added to it for one `fsync_dirs` later.
    """
    with atomic_writer(path, mode=mode, uid=uid, gid=gid, durable=durable, dirty=dirty) as fh:
        fh.write(data)


@contextmanager
def atomic_writer(path: Path, *, mode: int = 0o644, uid: int | None = None, gid: int | None = None,
                  durable: bool = True, dirty: set[Path] | None = None) -> Iterator[BinaryIO]:
    """A file to write (stream) whose bytes replace `path` when the block ends; an exception in the block
    discards them and leaves `path` as it was. `durable` and `dirty` as in `write_atomic`."""
    make_dirs(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:80]}{TEMP_MARK}")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            if uid is not None or gid is not None:
                os.fchown(fh.fileno(), -1 if uid is None else uid, -1 if gid is None else gid)
            if durable and fh.tell():
                os.fdatasync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        if dirty is not None:
            dirty.add(path.parent)
        else:
            fsync_dir(path.parent)


def symlink_atomic(path: Path, target: str, *, dirty: set[Path] | None = None) -> None:
    """Make `path` a symlink to `target`, replacing whatever is there in one rename (a temp link beside it);
    the directory is fsynced, or added to `dirty` for one `fsync_dirs` later."""
    make_dirs(path.parent)
    tmp = path.with_name(f".{path.name[:80]}{TEMP_MARK}-link")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(target, tmp)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if dirty is not None:
        dirty.add(path.parent)
    else:
        fsync_dir(path.parent)


def fsync_dirs(dirs: set[Path]) -> None:
    """fsync each directory once (makes a batch of renames durable), then forget them."""
    for directory in sorted(dirs):
        try:
            fsync_dir(directory)
        except FileNotFoundError:
            pass
    dirs.clear()


def copy_atomic(src: Path, dst: Path) -> None:
    """Copy `src` to `dst` atomically, keeping mode and owner (cp -a for one regular file)."""
    st = src.stat()
    write_atomic(dst, src.read_bytes(), mode=st.st_mode & 0o7777, uid=st.st_uid, gid=st.st_gid)


def sweep_temp(directory: Path) -> int:
    """Remove temp files a killed writer left in `directory`; returns how many."""
    count = 0
    try:
        entries = list(directory.iterdir())
    except OSError:
        return 0
    for entry in entries:
        if TEMP_MARK in entry.name and entry.name.startswith("."):
            try:
                entry.unlink()
                count += 1
            except OSError:
                pass
    return count
