"""Kernel arguments of the next boot changed by hand, in service mode: the real agent (`mco apply --server URL
--interval 60 --backend ostree`) against a real `mco serve`, a real ostree sysroot. A deployment staged by hand
without fips=1 (what `rpm-ostree kargs --delete fips=1` does) and an edit of the next boot's entry are both
noticed and staged again within 2 s, far below the 60 s interval."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.applier.kargs_lab import KARG, kargs_lab, next_boot_has_karg
from tests.applier.sysroot import edit_next_boot_kargs, stage_by_hand_without_fips
from tests.tools import real_tool

GOAL = 2.0  # seconds from the hand change to the next boot having the argument again
TRIALS = 2

CHANGES: list[tuple[str, Callable[[Path], None]]] = [
    ("staged-by-hand", stage_by_hand_without_fips),
    ("entry-edited", lambda sysroot: edit_next_boot_kargs(sysroot, KARG)),
]


@pytest.mark.parametrize("change", [c for _, c in CHANGES], ids=[i for i, _ in CHANGES])
def test_next_boot_kargs_changed_by_hand_staged_again_within_2_s(tmp_path: Path, change) -> None:
    real_tool("ostree")
    with kargs_lab(tmp_path) as (lab, sysroot):
        for trial in range(TRIALS):
            time.sleep(1.0)  # the agent idle, waiting on the server's held answer
            change(sysroot)
            lab.until(lambda: next_boot_has_karg(sysroot), GOAL, f"trial {trial}: staged again")
        lab.until(lambda: lab.node().get("state") == "Done", 10, "reported Done")
        assert "staged again" in lab.log.read_text()
