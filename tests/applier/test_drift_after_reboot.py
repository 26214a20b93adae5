"""Drift found at the post-reboot check: a file the update did not change, edited by hand
before the reboot, is restored and reported by path (`--drift repair`), or leaves the node Degraded naming each
path (`--drift report`); an explicit repair (`--once --repair`) fixes drift in every state where the config the
disk should match is known."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from applier.agent import Agent, AgentSettings
from applier.backends.none import NoBackend
from tests.applier.doubles import MemoryReporter, MemorySource, RecordingRunner
from tests.applier.helpers import file_entry, make_root, reboot_command
from tests.builders import rendered_config

KEPT = {"/etc/kept.conf": "kept\n", "/etc/also-kept.conf": "also\n"}


def config(name: str, loud: str, **kw):
    """No disruption policy: every file change needs a reboot."""
    return rendered_config(name, [file_entry(p, t) for p, t in KEPT.items()] + [file_entry("/etc/loud.conf", loud)], **kw)


def node(tmp_path: Path, drift: str, *, reboot: bool = True, wait: float = 3600) -> Agent:
    """A node at v1, with v2 (only /etc/loud.conf changes) requested and its reboot asked for."""
    root = make_root(tmp_path / "root")
    agent = Agent(AgentSettings(node="n1", root=root, drift=drift, reboot_wait=wait, durable=False,
                                reboot_command=reboot_command(root)),
                  source=MemorySource(config("v1", "1\n")), reporter=MemoryReporter(), backend=NoBackend(),
                  runner=RecordingRunner())
    assert agent.sync().rebooting and agent.sync().state == "Done"
    if not reboot:  # v1 reached through one simulated reboot, then reboots stop happening: the agent restarts
        agent = Agent(replace(agent.settings, reboot_command="true"), source=agent.source, reporter=agent.reporter,
                      backend=agent.backend, runner=agent.runner)
    agent.source.config = config("v2", "2\n")
    assert agent.sync().rebooting
    return agent


def edit(agent: Agent, *paths: str) -> None:
    for path in paths:
        (agent.root / path.lstrip("/")).write_text("edited by hand\n")


def assert_restored(agent: Agent) -> None:
    for path, text in KEPT.items():
        assert (agent.root / path.lstrip("/")).read_text() == text


def test_repair_restores_and_names_the_path(tmp_path: Path) -> None:
    agent = node(tmp_path, "repair")
    edit(agent, "/etc/kept.conf")
    result = agent.sync()
    assert (result.state, result.current) == ("Done", "rendered-worker-v2")
    assert result.message == ("rebooted into rendered-worker-v2; verification passed; "
                              "repaired drift: file /etc/kept.conf")
    assert_restored(agent)


def test_report_degrades_naming_each_path_then_repair_fixes(tmp_path: Path) -> None:
    agent = node(tmp_path, "report")
    edit(agent, "/etc/kept.conf", "/etc/also-kept.conf")
    result = agent.sync()
    assert result.state == "Degraded"
    assert result.message == ('unexpected on-disk state validating against rendered-worker-v2: '
                              'content mismatch for file "/etc/kept.conf"; '
                              'content mismatch for file "/etc/also-kept.conf"')
    assert (agent.root / "etc/kept.conf").read_text() == "edited by hand\n"
    assert agent.sync().state == "Degraded"  # stays so until repaired
    fixed = agent.sync(repair=True)  # `mco apply --once --repair`
    assert (fixed.state, fixed.current) == ("Done", "rendered-worker-v2"), fixed.message
    assert fixed.message.endswith("repaired drift: file /etc/kept.conf, file /etc/also-kept.conf")
    assert_restored(agent)


STATES = [
    ("waiting-for-reboot", dict(wait=3600), "Working", "waiting for reboot into rendered-worker-v2"),
    ("reboot-never-came", dict(wait=0), "Degraded", "reboot into rendered-worker-v2 did not happen"),
]


@pytest.mark.parametrize("kw,state,message", [c[1:] for c in STATES], ids=[c[0] for c in STATES])
def test_explicit_repair_while_the_reboot_is_outstanding(tmp_path: Path, kw: dict, state: str, message: str) -> None:
    agent = node(tmp_path, "report", reboot=False, **kw)
    for _ in range(3):  # with no wait, the requests run out and the node turns Degraded
        agent.sync()
    edit(agent, "/etc/kept.conf")
    result = agent.sync(repair=True)
    assert result.state == state and result.message.startswith(message), result.message
    assert result.message.endswith("; repaired drift: file /etc/kept.conf")
    assert_restored(agent)


def test_explicit_repair_when_the_target_is_refused(tmp_path: Path) -> None:
    agent = node(tmp_path, "report")
    assert agent.sync().state == "Done"
    agent.source.config = config("v3", "2\n", fips=True)  # not reconcilable: the node stays at v2
    assert agent.sync().state == "Degraded"
    edit(agent, "/etc/kept.conf")
    result = agent.sync(repair=True)
    assert (result.state, result.current) == ("Degraded", "rendered-worker-v2")
    assert "not reconcilable" in result.message
    assert result.message.endswith("; repaired drift: file /etc/kept.conf")
    assert_restored(agent)
