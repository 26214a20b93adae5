"""Fixtures of the applier tests: `sysroot`, a real ostree sysroot (tests/applier/sysroot.py), one builder for every
test that needs one."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.applier.sysroot import make_sysroot, unlock


@pytest.fixture
def sysroot(tmp_path: Path) -> Iterator[Path]:
    """`make_sysroot` under `tmp_path` (v1 deployed, v2 committed); made removable again afterwards (`unlock`)."""
    s = make_sysroot(tmp_path)  # (skips, or fails under MCO_REQUIRE_TOOLS, without ostree)
    yield s
    unlock(s)
