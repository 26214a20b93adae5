"""The agent reports each update phase as it enters it, in order, and a failure names the phase it failed to
reach (MCO MachineConfigNode's conditions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from applier.agent import Agent, AgentSettings
from applier.backends.none import NoBackend
from applier.hooks import Hooks
from applier.runner import SubprocessRunner
from tests.applier.doubles import MemoryReporter, MemorySource
from tests.applier.helpers import file_entry, make_root, reboot_command
from tests.builders import rendered_config
from tests.tools import real_tool

POLICY = ('{"files": [{"path": "/etc/app.conf", "actions": [{"type": "None"}]}]}')
ANN = {"machineconfiguration.openshift.io/node-disruption-policy": POLICY}


def _agent(tmp: Path, drain: str = "true") -> tuple[Agent, MemorySource, MemoryReporter]:
    real_tool("systemctl")
    root = make_root(tmp / "root")
    source, reporter = MemorySource(), MemoryReporter()
    agent = Agent(AgentSettings(node="n1", root=root, reboot_command=reboot_command(root, tmp / "events.log"),
                                hooks=Hooks(drain=drain, uncordon="true"), durable=False),
                  source=source, reporter=reporter, backend=NoBackend(), runner=SubprocessRunner())
    return agent, source, reporter


def _phases(reporter: MemoryReporter) -> list[tuple[str, str]]:
    return [(r.phase, r.detail) for r in reporter.reports if r.phase]


def test_a_rebooting_update_goes_through_every_phase_in_order(tmp_path: Path) -> None:
    agent, source, reporter = _agent(tmp_path)
    source.config = rendered_config("v1", [file_entry("/etc/a.conf", "a\n")])
    assert agent.sync().rebooting
    assert agent.sync().state == "Done"
    phases = _phases(reporter)
    assert [p for p, _ in phases] == ["prepared", "drained", "written", "reboot-requested", "rebooted", "verified",
                                      "uncordoned", "done"]
    requested, rebooted = phases[3][1], phases[4][1]
    assert requested and rebooted and requested != rebooted  # the boot that asked, and the new one


def test_reports_sent_while_drained_wait_for_no_server(tmp_path: Path) -> None:
    """From the drain to the reboot, Working reports are sent not to wait (one attempt, a short deadline: the
    drained window holds the writes and the reboot, not a slow server); the others wait and retry as always."""
    agent, source, reporter = _agent(tmp_path)
    source.config = rendered_config("v1", [file_entry("/etc/a.conf", "a\n")])
    assert agent.sync().rebooting
    assert [(r.phase, p) for r, p in zip(reporter.reports, reporter.prompt, strict=True)] == [
        ("prepared", False), ("drained", True), ("written", True), ("reboot-requested", True)]
    assert agent.sync().state == "Done"
    sent = list(zip(reporter.reports, reporter.prompt, strict=True))
    assert [(r.phase, p) for r, p in sent[-2:]] == [("uncordoned", False), ("done", False)]


def test_a_rebootless_update(tmp_path: Path) -> None:
    agent, source, reporter = _agent(tmp_path)
    source.config = rendered_config("v1", [file_entry("/etc/app.conf", "a\n")], annotations=ANN)
    assert agent.sync().state == "Done"
    assert [p for p, _ in _phases(reporter)] == ["prepared", "written", "done"]
    reporter.reports.clear()
    assert agent.sync().state == "Done"  # nothing to do: no update, no phase
    assert _phases(reporter) == []


@pytest.mark.parametrize(("drain", "blocked", "failed_in"), [
    ("false", False, "drained"),
    ("true", True, "written"),
], ids=["drain-hook-fails", "file-cannot-be-written"])
def test_a_failure_names_the_phase(tmp_path: Path, drain: str, blocked: bool, failed_in: str) -> None:
    agent, source, reporter = _agent(tmp_path, drain=drain)
    if blocked:
        (agent.root / "etc/a.conf").mkdir(parents=True)
    source.config = rendered_config("v1", [file_entry("/etc/a.conf", "a\n")])
    assert agent.sync().state == "Degraded"
    assert _phases(reporter)[-1] == ("degraded", failed_in)
