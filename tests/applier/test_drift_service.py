"""Drift repaired at once in service mode: the real agent (`mco apply --server URL --interval 60`) against a real
`mco serve`, while the server holds its "stay" answer for the whole interval. Each hand change is made several
times in a row, so the ones after the first happen while the agent waits on its held claim."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.applier.drift_lab import APP, DROPIN, RULES, RULES_TEXT, UNIT, DriftLab, drift_lab
from tests.tools import real_tool

TRIALS = 3
SOON = 10.0  # seconds: far below the 60 s interval, far above a repair on a loaded machine


def _edit(lab: DriftLab) -> None:
    (lab.root / RULES).write_text("-D\n")


def _chmod(lab: DriftLab) -> None:
    os.chmod(lab.root / RULES, 0o644)


def _delete(lab: DriftLab) -> None:
    (lab.root / RULES).unlink()


def _same_size_mtime_back(lab: DriftLab) -> None:
    """Same size, the mtime put back (`touch -r`): only ctime tells the change."""
    path = lab.root / RULES
    before = path.stat()
    path.write_text(RULES_TEXT.upper())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _dropin(lab: DriftLab) -> None:
    (lab.root / DROPIN).write_text("[Service]\nEnvironment=MCO=0\n")


def _disable(lab: DriftLab) -> None:
    subprocess.run(["systemctl", f"--root={lab.root}", "disable", UNIT], check=True, capture_output=True)


def _dropin_ok(lab: DriftLab) -> bool:
    try:
        return (lab.root / DROPIN).read_text() == "[Service]\nEnvironment=MCO=1\n"
    except OSError:
        return False


CHANGES: list[tuple[str, Callable[[DriftLab], None], Callable[[DriftLab], bool]]] = [
    ("edit", _edit, DriftLab.rules_ok),
    ("chmod", _chmod, DriftLab.rules_ok),
    ("delete", _delete, DriftLab.rules_ok),
    ("same-size-mtime-back", _same_size_mtime_back, DriftLab.rules_ok),
    ("dropin-edit", _dropin, _dropin_ok),
    ("systemctl-disable", _disable, DriftLab.enabled),
]


@pytest.mark.parametrize(("change", "repaired"), [(c, r) for _, c, r in CHANGES], ids=[i for i, _, _ in CHANGES])
def test_hand_change_repaired_at_once_in_service_mode(tmp_path: Path, change, repaired) -> None:
    real_tool("systemctl")
    with drift_lab(tmp_path) as lab:
        for trial in range(TRIALS):
            change(lab)
            lab.until(lambda: repaired(lab), SOON, f"trial {trial}: repaired")
        lab.until(lambda: lab.node().get("state") == "Done", SOON, "reported Done")
        assert (lab.root / APP).read_text() == "level=1\n"
