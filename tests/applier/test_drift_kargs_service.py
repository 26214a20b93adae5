"""Kernel arguments changed by hand, in service mode: the real agent (`mco apply --server URL
--interval 3600 --backend ostree`) against a real `mco serve`, a real ostree sysroot. A deployment staged by hand
without fips=1 (what `rpm-ostree kargs --delete fips=1` does) and an edit of the next boot's entry are both
noticed and staged again by the watch, with no periodic sync due (how fast: bench/drift_bench.py --kargs-trials). A node booted without fips=1 reboots into its
config once the server grants it a rollout slot, and waits (Degraded, naming why) while maxUnavailable is taken."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from applier.agent import reboot_command_for_ostree
from tests.applier.drift_lab import WATCH_ONLY, DriftLab
from tests.applier.kargs_lab import KARG, kargs_lab, next_boot_has_karg
from tests.applier.sysroot import edit_next_boot_kargs, stage_by_hand_without_fips
from tests.tools import real_tool

SOON = 60.0  # seconds: liveness only (no periodic sync comes within it)
TRIALS = 2

CHANGES: list[tuple[str, Callable[[Path], None]]] = [
    ("staged-by-hand", stage_by_hand_without_fips),
    ("entry-edited", lambda sysroot: edit_next_boot_kargs(sysroot, KARG)),
]


@pytest.mark.parametrize("change", [c for _, c in CHANGES], ids=[i for i, _ in CHANGES])
def test_next_boot_kargs_changed_by_hand_staged_again_by_the_watch(tmp_path: Path, change) -> None:
    real_tool("ostree")
    with kargs_lab(tmp_path, interval=WATCH_ONLY) as (lab, sysroot):
        for trial in range(TRIALS):
            time.sleep(1.0)  # the agent idle, waiting on the server's held answer
            change(sysroot)
            lab.until(lambda: next_boot_has_karg(sysroot), SOON, f"trial {trial}: staged again")
        lab.until(lambda: lab.node().get("state") == "Done", SOON, "reported Done")
        # (Done all along: the repair keeps it so; its log line may follow the restaged entry by a moment)
        lab.until(lambda: "staged again" in lab.log.read_text(), SOON, "the repair logged")


def _boot_without_fips(lab: DriftLab, sysroot: Path) -> None:
    """With the agent stopped, the node boots a deployment staged by hand without fips=1 (the simulated reboot
    writes the root's /proc/cmdline and a new boot ID)."""
    lab.agent.terminate()
    lab.agent.wait(timeout=20)
    stage_by_hand_without_fips(sysroot)
    subprocess.run(reboot_command_for_ostree(sysroot, sys.executable, lab.root), shell=True, check=True)
    assert KARG not in _cmdline(lab)


def _cmdline(lab: DriftLab) -> list[str]:
    return (lab.root / "proc/cmdline").read_text().split()


def _report(lab: DriftLab, node: str, state: str) -> None:
    """Another node of the pool reports (at the pool's target)."""
    target = requests.get(f"{lab.url}/pools/worker", timeout=5).json()["spec"]["configuration"]["name"]
    report = {"pool": "worker", "currentConfig": target, "desiredConfig": target, "state": state}
    assert requests.post(f"{lab.url}/nodes/{node}/status", json=report, timeout=10).status_code == 200


def test_booted_without_a_karg_reboots_in_a_rollout_slot(tmp_path: Path) -> None:
    real_tool("ostree")
    with kargs_lab(tmp_path) as (lab, sysroot):
        _report(lab, "node-2", "Done")
        _boot_without_fips(lab, sysroot)
        lab.start_agent()
        lab.until(lambda: KARG in _cmdline(lab), 20, "rebooted into a command line with fips=1")
        assert "rebooting to repair drift in a rollout slot" in lab.log.read_text()
        lab.start_agent()  # a reboot starts the agent again
        lab.until(lambda: "verification passed" in lab.log.read_text(), 20, "the reboot verified")
        lab.until(lambda: lab.node().get("state") == "Done", 20, "Done after the reboot")


def test_booted_without_a_karg_waits_for_a_free_slot(tmp_path: Path) -> None:
    """maxUnavailable 1 and another node Working: no reboot, Degraded naming why; once that node is Done the
    next check takes the slot."""
    real_tool("ostree")
    with kargs_lab(tmp_path, interval=3.0) as (lab, sysroot):
        _report(lab, "node-2", "Working")
        _boot_without_fips(lab, sysroot)
        lab.start_agent()
        lab.until(lambda: lab.node().get("state") == "Degraded", 20, "Degraded while no slot is free")
        message = lab.node()["message"]
        assert "booted kernel command line (/proc/cmdline): missing expected kernel arguments: [fips=1]" in message
        assert "waiting for a rollout slot: 1 of 2 nodes unavailable (maxUnavailable 1)" in message
        time.sleep(4)  # a periodic check later, still no slot: no reboot
        assert KARG not in _cmdline(lab)
        _report(lab, "node-2", "Done")
        lab.until(lambda: KARG in _cmdline(lab), 20, "rebooted once the slot freed")


FIPS_CHANGES = [
    ("crypto-policy", "etc/crypto-policies/config", "DEFAULT",
     "FIPS mode: /etc/crypto-policies/config names DEFAULT, expected FIPS", "FIPS"),
    ("fips-enabled", "proc/sys/crypto/fips_enabled", "0",
     "FIPS mode: /proc/sys/crypto/fips_enabled reads 0, expected 1", "1"),
]


@pytest.mark.parametrize(("rel", "bad", "named", "good"), [c[1:] for c in FIPS_CHANGES], ids=[c[0] for c in FIPS_CHANGES])
def test_fips_mode_off_reported_at_once(tmp_path: Path, rel: str, bad: str, named: str, good: str) -> None:
    """The config asks for FIPS: the node goes Degraded naming what says it is off, at once (the watch), and Done
    again once it is back."""
    real_tool("ostree")
    with kargs_lab(tmp_path, interval=WATCH_ONLY) as (lab, _sysroot):
        time.sleep(1.0)  # the agent idle, waiting on the server's held answer
        (lab.root / rel).write_text(bad + "\n")  # (truncated, then written: the agent may read it empty first)
        lab.until(lambda: lab.node().get("state") == "Degraded" and named in lab.node().get("message", ""), SOON,
                  f"reported Degraded naming {named!r}")
        (lab.root / rel).write_text(good + "\n")
        lab.until(lambda: lab.node().get("state") == "Done", SOON, "Done again")
