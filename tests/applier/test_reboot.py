"""A reboot is claimed only when the boot ID changed: the same boot means waiting, the reboot
is requested again after the wait, and the node turns Degraded after a bounded number of attempts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from applier.agent import MAX_REBOOT_ATTEMPTS, Agent, AgentSettings
from applier.backends.none import NoBackend
from cli.main import main
from tests.applier.doubles import MemoryReporter, MemorySource, RecordingRunner
from tests.applier.helpers import file_entry, make_root, reboot_command
from tests.builders import rendered_config

V1 = rendered_config("v1", [file_entry("/etc/r.conf", "one\n")])  # no disruption policy: a file change reboots


def _agent(tmp_path: Path, reboot: str, wait: float) -> tuple[Agent, MemoryReporter]:
    root = make_root(tmp_path / "root")
    reporter = MemoryReporter()
    agent = Agent(AgentSettings(node="n1", root=root, reboot_command=reboot, reboot_wait=wait, durable=False),
                  source=MemorySource(V1), reporter=reporter, backend=NoBackend(), runner=RecordingRunner())
    return agent, reporter


def _reboots(log: Path) -> int:
    return log.read_text().split().count("reboot") if log.exists() else 0


def test_same_boot_waits_and_claims_nothing(tmp_path: Path) -> None:
    log = tmp_path / "events.log"
    agent, reporter = _agent(tmp_path, f"echo reboot >> {log}", wait=3600)  # the reboot never happens
    assert agent.sync().rebooting
    for _ in range(3):
        result = agent.sync()
        assert (result.state, result.message, result.rebooting) == (
            "Working", "waiting for reboot into rendered-worker-v1", True)
    assert agent.state.current() is None and agent.state.pending().phase == "rebooting"
    assert "Done" not in [r.state for r in reporter.reports]
    assert _reboots(log) == 1  # within the wait: not requested again


def test_reboot_requested_again_then_degraded(tmp_path: Path) -> None:
    log = tmp_path / "events.log"
    agent, _ = _agent(tmp_path, f"echo reboot >> {log}", wait=0)
    assert agent.sync().rebooting
    for attempt in range(2, MAX_REBOOT_ATTEMPTS + 1):
        result = agent.sync()
        assert (result.state, result.rebooting) == ("Working", True), result.message
        assert _reboots(log) == attempt
    result = agent.sync()
    assert result.state == "Degraded"
    assert result.message == (f"reboot into rendered-worker-v1 did not happen: the boot ID is unchanged after "
                              f"{MAX_REBOOT_ATTEMPTS} reboot requests")
    assert _reboots(log) == MAX_REBOOT_ATTEMPTS and agent.state.current() is None
    # the node does reboot at last (by hand): verified then
    from tests.applier.helpers import new_boot

    new_boot(agent.root)
    done = agent.sync()
    assert (done.state, done.message) == ("Done", "rebooted into rendered-worker-v1; verification passed")


def test_new_boot_is_verified(tmp_path: Path) -> None:
    agent, _ = _agent(tmp_path, reboot_command(tmp_path / "root"), wait=3600)
    assert agent.sync().rebooting
    done = agent.sync()
    assert (done.state, done.current) == ("Done", "rendered-worker-v1"), done.message


@pytest.mark.parametrize("reboot,expected", [
    ("true", ("Working", "waiting for reboot into rendered-worker-v1")),
    ("simulated", ("Done", "rebooted into rendered-worker-v1; verification passed")),
], ids=["reboot-that-did-not-happen", "simulated-reboot"])
def test_cli_second_sync(tmp_path: Path, capsys: pytest.CaptureFixture[str], reboot: str,
                         expected: tuple[str, str]) -> None:
    """The failure this guards against: `--backend none`, a reboot command that does nothing, a second `--once`."""
    root = make_root(tmp_path / "root")
    desired = tmp_path / "v1.json"
    desired.write_text(json.dumps(V1.to_dict()))
    command = reboot_command(root) if reboot == "simulated" else reboot
    args = ["apply", "--once", "--node", "n1", "--desired", str(desired), "--root", str(root), "--backend", "none",
            "--reboot-command", command]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["rebooting"] is True
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["state"], result["message"]) == expected


STEPS = [
    ("new-boot", dict(recorded="a", booted="b", waited=0, attempts=1), "verify"),
    ("no-id-recorded", dict(recorded="", booted="b", waited=0, attempts=1), "verify"),
    ("same-boot-within-wait", dict(recorded="a", booted="a", waited=10, attempts=1), "wait"),
    ("same-boot-after-wait", dict(recorded="a", booted="a", waited=60, attempts=1), "request"),
    ("same-boot-limit-reached", dict(recorded="a", booted="a", waited=60, attempts=3), "give-up"),
]


@pytest.mark.parametrize("kw,step", [c[1:] for c in STEPS], ids=[c[0] for c in STEPS])
def test_reboot_step(kw: dict, step: str) -> None:
    from applier.boot import reboot_step

    assert reboot_step(wait=60, limit=3, **kw) == step
