"""Drift repaired at once in service mode: the real agent (`mco apply --server URL --interval 3600`) against a real
`mco serve`, while the server holds its "stay" answer (at most 300 s) and no periodic sync comes within the test. Each hand change is made several
times in a row, so the ones after the first happen while the agent waits on its held claim."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.applier.drift_lab import (
    APP,
    DROPIN,
    RULES,
    RULES_TEXT,
    UNIT,
    WANTS,
    WATCH_ONLY,
    DriftLab,
    drift_lab,
)
from tests.tools import real_tool

TRIALS = 3
SETTLE = 1.0  # seconds: the checks a repair's own writes cause are over
SOON = 60.0  # seconds: liveness only (how fast a repair is, bench/drift_bench.py measures)


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
    with drift_lab(tmp_path, interval=WATCH_ONLY) as lab:
        for trial in range(TRIALS):
            change(lab)
            lab.until(lambda: repaired(lab), SOON, f"trial {trial}: repaired")
        lab.until(lambda: lab.node().get("state") == "Done", SOON, "reported Done")
        assert (lab.root / APP).read_text() == "level=1\n"


def test_disable_repaired_at_once_after_the_wants_directory_was_gone(tmp_path: Path) -> None:
    """`systemctl disable` of the only unit wanted by a target removes the emptied `*.wants/` directory. An agent
    that starts (or sets its watch up again) while the directory is gone must still see the next disable at once,
    not at the next periodic sync: the directory a unit's [Install] section names is watched whether or not it
    exists yet."""
    real_tool("systemctl")
    with drift_lab(tmp_path, interval=WATCH_ONLY) as lab:
        lab.agent.terminate()
        lab.agent.wait(timeout=20)
        _disable(lab)
        assert not (lab.root / WANTS).parent.exists()  # what systemctl does with the emptied directory
        lab.start_agent()
        lab.until(lab.enabled, SOON, "repaired at start")
        for trial in range(TRIALS):
            time.sleep(SETTLE)  # the agent idle again (its repair's own writes checked), waiting on the server
            _disable(lab)
            lab.until(lab.enabled, SOON, f"trial {trial}: repaired")
