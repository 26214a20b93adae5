"""applier/health.py: the default check's verdict on systemd's state, and the pool's checks against real commands
and a real HTTP server."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from applier.health import check_failure, systemd_failure
from fleet.rollout_settings import HealthCheck

SYSTEMD = [
    ("running", "running", [], (), True),
    ("degraded-allowed", "degraded", ["kdump.service"], ("kdump.service",), True),
    ("degraded-other", "degraded", ["kdump.service", "app.service"], ("kdump.service",), False),
    ("degraded-nothing-allowed", "degraded", ["kdump.service"], (), False),
    ("starting", "starting", [], ("kdump.service",), False),
    ("unknown", "", [], (), False),
]


@pytest.mark.parametrize("state,failed,allowed,passes", [c[1:] for c in SYSTEMD], ids=[c[0] for c in SYSTEMD])
def test_systemd_verdict(state: str, failed: list[str], allowed: tuple[str, ...], passes: bool) -> None:
    verdict = systemd_failure(state, failed, allowed)
    assert (verdict is None) is passes
    if state == "degraded" and not passes:  # names the failed units the pool does not allow, and only those
        assert [u for u in failed if u in str(verdict)] == [u for u in failed if u not in allowed]


@pytest.fixture
def web() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            self.send_response(204 if self.path == "/healthz" else 503)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_checks(tmp_path: Path, web: str) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "ok").write_text("")
    look = ["/bin/sh", "-c", 'test -e "$MCO_ROOT/etc/ok"']
    assert check_failure(HealthCheck("file", command=tuple(look)), root=tmp_path) is None
    assert "exit status 1" in str(check_failure(HealthCheck("file", command=tuple(look)), root=tmp_path / "etc"))
    assert check_failure(HealthCheck("web", url=f"{web}/healthz", status=204), root=tmp_path) is None
    assert "answered 503, expected 200" in str(check_failure(HealthCheck("web", url=f"{web}/other"), root=tmp_path))
    assert "FileNotFoundError" in str(check_failure(HealthCheck("x", command=("/nonexistent",)), root=tmp_path))


GATE_CASES = [
    ("passes", ["/bin/true"], ["prepared", "drained", "written", "reboot-requested", "rebooted", "verified",
                               "uncordoned", "health-checked", "done"], "Done"),
    ("fails", ["/bin/false"], ["prepared", "drained", "written", "reboot-requested", "rebooted", "verified",
                               "uncordoned", "degraded"], "Degraded"),
]


@pytest.mark.parametrize("command,phases,state", [c[1:] for c in GATE_CASES], ids=[c[0] for c in GATE_CASES])
def test_gate_results_are_phases(tmp_path: Path, command: list[str], phases: list[str], state: str) -> None:
    """The real agent with a pool's gate (soak 0): its checks' results are phases of the update's timeline, and
    while failed it reports the config it came from as current."""
    from applier.agent import Agent, AgentSettings
    from applier.backends.none import NoBackend
    from applier.hooks import Hooks
    from applier.runner import SubprocessRunner
    from fleet.rollout_settings import gate_annotation
    from tests.applier.doubles import MemoryReporter, MemorySource
    from tests.applier.helpers import file_entry, make_root, reboot_command
    from tests.builders import rendered_config
    from tests.tools import real_tool

    real_tool("systemctl")
    root = make_root(tmp_path / "root")
    source, reporter = MemorySource(), MemoryReporter()
    agent = Agent(AgentSettings(node="n1", root=root, reboot_command=reboot_command(root),
                                hooks=Hooks(drain="true", uncordon="true"), durable=False),
                  source=source, reporter=reporter, backend=NoBackend(), runner=SubprocessRunner())
    gate = gate_annotation({"soakSeconds": 0, "healthChecks": [{"name": "app", "command": command}]})
    source.config = rendered_config("v1", [file_entry("/etc/a.conf", "a\n")], annotations=gate)
    assert agent.sync().rebooting
    result = agent.sync()
    assert result.state == state, result.message
    assert [r.phase for r in reporter.reports if r.phase] == phases
    last = reporter.reports[-1]
    if state == "Degraded":
        assert (last.detail, last.current, last.desired) == ("health-checked", "", source.config.name)
        assert "health check app: exit status 1" in last.message
        assert agent.sync().state == "Degraded"  # it stays failed


def test_the_soak_reads_the_agents_clock(tmp_path: Path) -> None:
    """The soak's start is stored and compared through the agent's clock (fleet/clock.py), so a set clock decides
    when a gated update is done: soaking until start + soakSeconds, done once the clock has passed it."""
    from applier.agent import Agent, AgentSettings
    from applier.backends.none import NoBackend
    from applier.hooks import Hooks
    from applier.runner import SubprocessRunner
    from fleet.clock import ManualClock, timestamp
    from fleet.rollout_settings import gate_annotation
    from tests.applier.doubles import MemoryReporter, MemorySource
    from tests.applier.helpers import file_entry, make_root, reboot_command
    from tests.builders import rendered_config
    from tests.tools import real_tool

    real_tool("systemctl")
    root = make_root(tmp_path / "root")
    source, clock = MemorySource(), ManualClock()
    agent = Agent(AgentSettings(node="n1", root=root, reboot_command=reboot_command(root),
                                hooks=Hooks(drain="true", uncordon="true"), durable=False),
                  source=source, reporter=MemoryReporter(), backend=NoBackend(), runner=SubprocessRunner(), clock=clock)
    gate = gate_annotation({"soakSeconds": 600, "healthChecks": [{"name": "app", "command": ["/bin/true"]}]})
    source.config = rendered_config("v1", [file_entry("/etc/a.conf", "a\n")], annotations=gate)
    assert agent.sync().rebooting
    start = clock.advance(5)  # the reboot took five seconds
    soaking = agent.sync()
    until = timestamp(start + timedelta(seconds=600))
    assert (soaking.state, soaking.message) == ("Working", f"health checks pass; soaking until {until}")
    clock.advance(599)
    assert agent.sync().state == "Working"
    clock.advance(1)
    assert agent.sync().state == "Done"
