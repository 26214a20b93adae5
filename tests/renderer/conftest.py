"""Fixtures: a writable copy of the bundled example cluster."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cluster"


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    """A copy of examples/cluster that a test may edit."""
    target = tmp_path / "cluster"
    shutil.copytree(EXAMPLE, target)
    return target
