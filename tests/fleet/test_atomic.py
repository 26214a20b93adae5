"""fleet/atomic.py, the one writer of whole files: a streamed write replaces the file whole or not at all, and a
symlink replaces what was there in one rename; nothing is left behind either way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fleet.atomic import TEMP_MARK, atomic_writer, symlink_atomic, write_atomic


def _leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if TEMP_MARK in p.name]


def test_a_streamed_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "d" / "blob"
    write_atomic(target, b"old")
    with atomic_writer(target, mode=0o600) as out:
        for i in range(3):
            out.write(b"chunk%d;" % i)
        assert target.read_bytes() == b"old"  # nothing shows before the block ends
    assert target.read_bytes() == b"chunk0;chunk1;chunk2;"
    assert target.stat().st_mode & 0o777 == 0o600
    assert _leftovers(target.parent) == []


def test_an_error_in_the_block_keeps_the_old_bytes(tmp_path: Path) -> None:
    target = tmp_path / "blob"
    write_atomic(target, b"old")
    with pytest.raises(ValueError, match="refused"), atomic_writer(target) as out:
        out.write(b"half of the new")
        raise ValueError("refused")
    assert target.read_bytes() == b"old"
    assert _leftovers(tmp_path) == []


def test_a_symlink_replaces_a_file_and_a_stale_temp_link(tmp_path: Path) -> None:
    target = tmp_path / "etc" / "unit.service"
    write_atomic(target, b"a file")
    os.symlink("/elsewhere", target.with_name(f".{target.name}{TEMP_MARK}-link"))  # a killed writer's leftover
    dirty: set[Path] = set()
    symlink_atomic(target, "/dev/null", dirty=dirty)
    assert target.is_symlink() and os.readlink(target) == "/dev/null"
    assert dirty == {target.parent}
    assert _leftovers(target.parent) == []
