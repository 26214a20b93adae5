"""Live state, not only files: the next boot's kernel arguments (a real ostree sysroot: a deployment staged by hand
without `fips=1` is staged again, at once while the agent loops), the booted command line (`<root>/proc/cmdline`,
the root's own copy under a directory root), FIPS mode (`<root>/proc/sys/crypto/fips_enabled` and the crypto
policy file), and the units the config enables found stopped (a live system: systemd answers through the
command-runner seam), started again within a budget."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from applier.agent import Agent, AgentSettings, reboot_command_for_ostree
from applier.backends.none import NoBackend
from applier.backends.ostree import OstreeBackend
from applier.live_repair import RESTART_BUDGET
from applier.runner import Result, SubprocessRunner
from tests.applier.doubles import MemoryReporter, MemorySource, RecordingRunner
from tests.applier.helpers import SERVICE, file_entry, fips_root, make_root, reboot_command, unit
from tests.applier.sysroot import boot_entries, stage_by_hand_without_fips
from tests.builders import rendered_config

KARGS = ("fips=1", "audit=1")


def ostree_node(tmp_path: Path, sysroot: Path) -> Agent:
    """A node at a config with KARGS and fips, through its (simulated) reboot."""
    root = fips_root(tmp_path / "root")
    runner = SubprocessRunner()
    agent = Agent(AgentSettings(node="n1", root=root, durable=False, interval=3600.0,
                                reboot_command=reboot_command_for_ostree(sysroot, sys.executable, root)),
                  source=MemorySource(rendered_config("v1", [file_entry("/etc/motd", "hi\n")], kernel_arguments=KARGS,
                                               fips=True)),
                  reporter=MemoryReporter(), backend=OstreeBackend(runner=runner, sysroot=sysroot), runner=runner)
    assert agent.sync().rebooting
    done = agent.sync()
    assert done.state == "Done", done.message
    return agent


def test_next_boot_without_a_karg_is_staged_again(tmp_path: Path, sysroot: Path) -> None:
    agent = ostree_node(tmp_path, sysroot)
    stage_by_hand_without_fips(sysroot)
    result = agent.sync()
    assert result.state == "Done"
    assert result.message.startswith("repaired drift: kernel arguments of the next boot (staged again: ")
    assert "fips=1" in boot_entries(sysroot)[0].split()


def test_next_boot_change_noticed_at_once_while_looping(tmp_path: Path, sysroot: Path) -> None:
    agent = ostree_node(tmp_path, sysroot)
    thread = threading.Thread(target=agent.run, daemon=True)
    thread.start()
    try:
        time.sleep(1.0)  # the loop's first sync is over: it waits, watching
        stage_by_hand_without_fips(sysroot)
        deadline = time.monotonic() + 60  # liveness only: the next periodic sync is an hour away
        while "fips=1" not in boot_entries(sysroot)[0].split():
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        agent.stop()
        thread.join(timeout=10)


def test_booted_command_line_without_a_karg_is_reported(tmp_path: Path, sysroot: Path) -> None:
    agent = ostree_node(tmp_path, sysroot)
    cmdline = agent.root / "proc/cmdline"
    assert "fips=1" in cmdline.read_text().split()  # the simulated reboot wrote the booted command line
    cmdline.write_text(cmdline.read_text().replace("fips=1", ""))
    result = agent.sync()
    assert result.state == "Degraded"
    assert ("booted kernel command line (/proc/cmdline): missing expected kernel arguments: [fips=1]; the next "
            "boot's deployment has them: a reboot puts them right") in result.message


FIPS_CASES = [
    ("fips-disabled", {"enabled": "0"}, "FIPS mode: /proc/sys/crypto/fips_enabled reads 0, expected 1"),
    ("crypto-policy-default", {"policy": "DEFAULT"},
     "FIPS mode: /etc/crypto-policies/config names DEFAULT, expected FIPS"),
]


@pytest.mark.parametrize(("state", "expected"), [c[1:] for c in FIPS_CASES], ids=[c[0] for c in FIPS_CASES])
def test_fips_mode_checked(tmp_path: Path, state: dict, expected: str) -> None:
    root = fips_root(tmp_path / "root")
    source = MemorySource(rendered_config("v1", [file_entry("/etc/motd", "hi\n")], fips=True))
    agent = Agent(AgentSettings(node="n1", root=root, durable=False, reboot_command=reboot_command(root)),
                  source=source, reporter=MemoryReporter(), backend=NoBackend(), runner=RecordingRunner())
    assert agent.sync().rebooting and agent.sync().state == "Done"
    fips_root(root, **state)
    result = agent.sync()
    assert result.state == "Degraded" and expected in result.message


def systemd(states: dict[str, str], types: dict[str, str]) -> RecordingRunner:
    """The running system's units as `systemctl show` and `systemctl start` see them."""
    def show(cmd: tuple[str, ...]) -> Result:
        name = cmd[-1]
        kind, _, remain = types.get(name, "simple").partition("+")
        return Result(cmd, 0, f"ActiveState={states.get(name, 'active')}\nType={kind}\n"
                              f"RemainAfterExit={'yes' if remain else 'no'}\n")

    def start(cmd: tuple[str, ...]) -> Result:
        states[cmd[-1]] = "active"
        return Result(cmd, 0)

    return RecordingRunner({("systemctl", "show"): show, ("systemctl", "start"): start,
                            ("systemctl", "is-enabled"): Result((), 0, "enabled\n")})


UNIT_CASES = [
    ("failed-started", "failed", "simple", "Done", "repaired drift: unit a.service started (was failed)"),
    ("inactive-started", "inactive", "simple", "Done", "repaired drift: unit a.service started (was inactive)"),
    ("oneshot-ended-by-design", "inactive", "oneshot", "Done", ""),
    ("oneshot-remaining-started", "inactive", "oneshot+remain", "Done",
     "repaired drift: unit a.service started (was inactive)"),
    ("running", "active", "simple", "Done", ""),
]


def live_agent(tmp_path: Path, runner: RecordingRunner) -> Agent:
    policy = '{"units": [{"name": "a.service", "actions": [{"type": "None"}]}]}'
    cfg = rendered_config("v1", units=[unit("a.service", SERVICE.format(name="a"), True)],
                   annotations={"machineconfiguration.openshift.io/node-disruption-policy": policy})
    agent = Agent(AgentSettings(node="n1", root=make_root(tmp_path / "root"), durable=False),
                  source=MemorySource(cfg), reporter=MemoryReporter(), backend=NoBackend(), runner=runner)
    assert agent.sync().state == "Done"
    agent.systemctl.live = True  # what a node root of / is: systemctl answers for the running system
    return agent


@pytest.mark.parametrize(("state", "kind", "result", "message"), [c[1:] for c in UNIT_CASES],
                         ids=[c[0] for c in UNIT_CASES])
def test_enabled_unit_found_stopped(tmp_path: Path, state: str, kind: str, result: str, message: str) -> None:
    states = {"a.service": state}
    agent = live_agent(tmp_path, systemd(states, {"a.service": kind}))
    found = agent.sync()
    assert (found.state, found.message) == (result, message)


def test_restart_budget_then_degraded(tmp_path: Path) -> None:
    runner = systemd({}, {})
    agent = live_agent(tmp_path, runner)
    runner.answers[("systemctl", "start")] = Result((), 0)  # it starts, and fails again at once
    runner.answers[("systemctl", "show")] = Result((), 0, "ActiveState=failed\nType=simple\n")
    for _ in range(RESTART_BUDGET):
        assert agent.sync().message == "repaired drift: unit a.service started (was failed)"
    last = agent.sync()
    assert last.state == "Degraded"
    assert f'unit "a.service" is failed after {RESTART_BUDGET} starts in 600 s' in last.message
