"""A pre-existing file's original survives a kill at every step of its journal: a real
`mco apply` is SIGKILLed right after the Nth step of a phase (tests/applier/killpoint.py), then run towards either
target; every managed file holds old or new content, backups are intact, state files parse, the node converges."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from applier.state import StateDir
from tests.applier.helpers import file_entry, make_root
from tests.applier.kill_lab import PHASES, Lab, scratch
from tests.builders import rendered_config
from tests.tools import ROOT

POLICY = json.dumps({"files": [{"path": "/etc/k", "actions": [{"type": "None"}]}]})
ANN = {"machineconfiguration.openshift.io/node-disruption-policy": POLICY}
ORIGINAL = "shipped by the OS\n"
KEEP = "/etc/k/only-a.conf"  # pre-existing, managed by A only: B puts its original back


def _configs(tmp_path: Path) -> dict[str, Path]:
    a = [file_entry(KEEP, "a\n"), file_entry("/etc/k/both.conf", "a\n"), file_entry("/etc/k/new-a.conf", "a\n")]
    b = [file_entry("/etc/k/both.conf", "b\n"), file_entry("/etc/k/only-b.conf", "b\n")]
    out = {}
    for name, files in (("a", a), ("b", b)):
        out[name] = tmp_path / f"{name}.json"
        out[name].write_text(json.dumps(rendered_config(name, files, annotations=ANN).to_dict()))
    return out


def _apply(root: Path, desired: Path, *killpoint: str) -> subprocess.CompletedProcess[str]:
    args = ["--once", "--node", "n1", "--desired", str(desired), "--root", str(root), "--backend", "none"]
    command = [sys.executable, str(ROOT / "tests/applier/killpoint.py"), *killpoint, "--", *args] if killpoint \
        else [sys.executable, "-m", "cli.main", "apply", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})


def test_original_kept_when_a_restore_is_killed_and_the_old_target_returns(tmp_path: Path) -> None:
    """The sequence that lost an original: A, kill A->B right after the original was put back, A again, then A->B."""
    root = make_root(tmp_path / "root")
    (root / "etc/k").mkdir()
    (root / KEEP.lstrip("/")).write_text(ORIGINAL)
    configs = _configs(tmp_path)
    assert _apply(root, configs["a"]).returncode == 0
    killed = _apply(root, configs["b"], "restore", "1")
    assert killed.returncode == -9, killed.stderr
    assert (root / KEEP.lstrip("/")).read_text() == ORIGINAL
    again = _apply(root, configs["a"])
    assert again.returncode == 0, again.stderr
    state = StateDir(root / "etc/machine-config-daemon")
    assert state.orig(KEEP).read_text() == ORIGINAL and not state.noorig(KEEP).exists()
    assert _apply(root, configs["b"]).returncode == 0
    assert (root / KEEP.lstrip("/")).read_text() == ORIGINAL


@pytest.fixture(scope="module")
def steps() -> Iterator[Counter[str]]:
    """How many steps of each phase the update A->B of the lab takes."""
    with scratch() as work:
        lab = Lab.build(work, files=24)
        assert lab.converge("a") == []
        yield lab.counts("a", "b")


@pytest.mark.parametrize("phase", PHASES)
def test_kill_at_each_phase_then_converge(steps: Counter[str], phase: str) -> None:
    """Killed right after the first step of a phase, then on to B; right after its last step, then back to A
    (tests/applier/kill_lab.py's checks, the ones bench/kill_campaign.py's 1,000-trial campaign runs)."""
    assert steps[phase] >= 1, steps  # the lab's configs exercise every phase
    with scratch() as work:
        lab = Lab.build(work, files=24)
        assert lab.converge("a") == []
        for nth, target in ((1, "b"), (steps[phase], "a")):
            killed = lab.run("b", killpoint=(phase, nth))
            assert killed.returncode == -9, killed.stderr
            assert lab.check_after_kill() == []
            assert lab.converge(target) == []
            assert lab.converge("a") == []
