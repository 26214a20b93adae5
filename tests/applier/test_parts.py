"""The agent's parts (applier/agent.py) built one at a time, without an Agent: each over a real state directory and
node root, with the in-memory runner and reporter where a part needs one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from applier.backends.none import NoBackend
from applier.drift import DriftChecker
from applier.health import Health
from applier.live_repair import RESTART_BUDGET, LiveRepair
from applier.planning import Planner
from applier.rebooting import MAX_REBOOT_ATTEMPTS, Rebooter
from applier.repairing import Repairer
from applier.reporting import Reporting
from applier.runner import Result
from applier.settings import AgentSettings
from applier.state import Pending, StateDir
from applier.units import Systemctl
from applier.writing import Writer
from fleet.clock import ManualClock
from fleet.drift_events import DriftEvent
from tests.applier.doubles import MemoryReporter, RecordingRunner
from tests.applier.helpers import SERVICE, file_entry, make_root, new_boot, reboot_command, unit
from tests.builders import rendered_config

V1 = rendered_config("v1", [file_entry("/etc/app.conf", "one\n"), file_entry("/etc/kept.conf", "kept\n")],
                     [unit("app.service", SERVICE.format(name="app"), enabled=True)])
V2 = rendered_config("v2", [file_entry("/etc/app.conf", "two\n")])


class Node:
    """A node root with its state directory, and the shared pieces the parts are built from."""

    def __init__(self, tmp: Path) -> None:
        self.root = make_root(tmp / "root")
        self.state = StateDir(self.root / "etc" / "machine-config-daemon")
        self.state.ensure()
        self.runner = RecordingRunner()
        self.systemctl = Systemctl(self.runner, self.root)
        self.reporter = MemoryReporter()
        self.reporting = Reporting("n1", None, self.root, self.state, self.reporter)
        self.clock = ManualClock()

    def writer(self) -> Writer:
        return Writer(self.root, self.state, self.systemctl, DriftChecker(self.root, self.systemctl), durable=False)

    def rebooter(self, command: str | None, wait: float = 60.0) -> Rebooter:
        settings = AgentSettings(node="n1", root=self.root, reboot_command=command, reboot_wait=wait)
        return Rebooter(settings, self.root, self.state, self.systemctl, self.reporting, self.clock)


def test_reporting_sends_an_acknowledged_report_once_and_drift_every_time(tmp_path: Path) -> None:
    node = Node(tmp_path)
    for _ in range(2):
        node.reporting.result("Done", "", V1, V1.name)
    event = DriftEvent("file", "/etc/app.conf", "x", "y", "2026-12-06T00:00:00Z", True)
    for _ in range(2):
        node.reporting.result("Done", "repaired drift: file /etc/app.conf", V1, V1.name, drift=(event,))
    assert [(r.state, r.message, len(r.drift)) for r in node.reporter.reports] == [
        ("Done", "", 0), ("Done", "repaired drift: file /etc/app.conf", 1), ("Done", "repaired drift: file /etc/app.conf", 1)]
    assert node.reporter.reports[0].pool == "worker"  # from the config's name


def test_reporting_names_the_phase_a_failed_update_was_to_reach(tmp_path: Path) -> None:
    node = Node(tmp_path)
    node.reporting.working(V1, V2, "applying v2", phase="prepared")
    node.reporting.aim = "drained"
    node.reporting.result("Degraded", "drain failed", V1, V2.name)
    assert [(r.state, r.phase, r.detail, r.message) for r in node.reporter.reports] == [
        ("Working", "prepared", "", "applying v2"), ("Degraded", "degraded", "drained", "drain failed")]
    assert (node.reporting.phase, node.reporting.aim) == ("", "")


def test_writer_applies_a_plan_then_puts_the_old_config_back(tmp_path: Path) -> None:
    node = Node(tmp_path)
    (node.root / "etc/app.conf").write_text("the OS's own\n")
    writer = node.writer()
    planner = Planner(AgentSettings(node="n1", root=node.root), node.root, node.systemctl, NoBackend())
    first = planner.plan(None, V1, None)
    writer.apply(first, first_run=True)
    writer.settle(V1, ())
    assert (node.root / "etc/app.conf").read_text() == "one\n" and node.state.current() == V1
    plan = planner.plan(V1, V2, None)
    assert plan.remove_files == ("/etc/kept.conf",)
    writer.apply(plan, first_run=False)
    assert not (node.root / "etc/kept.conf").exists() and (node.root / "etc/app.conf").read_text() == "two\n"
    writer.undo(plan)  # a failed update: V1's files back
    assert (node.root / "etc/kept.conf").read_text() == "kept\n" and (node.root / "etc/app.conf").read_text() == "one\n"


def test_repairer_names_drift_then_writes_it_back(tmp_path: Path) -> None:
    node = Node(tmp_path)
    writer = node.writer()
    writer.apply(Planner(AgentSettings(node="n1"), node.root, node.systemctl, NoBackend()).plan(None, V1, None),
                 first_run=True)
    repairer = Repairer(node.root, node.systemctl, writer.drift, writer.files, writer.units, node.clock)
    assert not repairer.check(V1, repair=False).found
    (node.root / "etc/kept.conf").write_text("edited by hand\n")
    found = repairer.check(V1, repair=False)
    assert found.left == ['content mismatch for file "/etc/kept.conf"'] and not found.names
    assert [(e.kind, e.path, e.repaired) for e in found.events] == [("file", "/etc/kept.conf", False)]
    assert (node.root / "etc/kept.conf").read_text() == "edited by hand\n"  # report only
    found = repairer.check(V1, repair=True)
    assert (found.left, found.names, found.note()) == ([], ["file /etc/kept.conf"],
                                                       "; repaired drift: file /etc/kept.conf")
    assert (node.root / "etc/kept.conf").read_text() == "kept\n"


def test_rebooter_records_the_request_and_waits_asks_again_then_gives_up(tmp_path: Path) -> None:
    node = Node(tmp_path)
    log = tmp_path / "reboots.log"
    rebooter = node.rebooter(f"echo reboot >> {log}", wait=60)  # the reboot never comes: the boot ID stays
    result = rebooter.request(V1, Pending(V2, "applying", previous=V1.name), "Node will reboot")
    assert (result.state, result.rebooting, log.read_text()) == ("Working", True, "reboot\n")
    pending = node.state.pending()
    assert pending is not None and (pending.phase, pending.reboot_attempts) == ("rebooting", 1)
    assert node.reporter.reports[-1].phase == "reboot-requested" and node.reporting.aim == "rebooted"
    assert rebooter.step(pending) == "wait"
    node.clock.advance(61)
    assert rebooter.step(pending) == "request"
    assert rebooter.step(replace(pending, reboot_attempts=MAX_REBOOT_ATTEMPTS)) == "give-up"
    new_boot(node.root)
    assert rebooter.step(pending) == "verify"


def test_rebooter_reports_a_failing_command_and_only_logs_without_one(tmp_path: Path) -> None:
    node = Node(tmp_path)
    failed = node.rebooter("echo no way >&2; exit 3").request(None, Pending(V1, "applying"), "first boot")
    assert (failed.state, failed.message) == ("Degraded", "reboot: `echo no way >&2; exit 3` exited 3: no way")
    logged: list[str] = []
    quiet = replace(node.rebooter(None), log=logged.append)
    assert quiet.request(None, Pending(V1, "applying"), "first boot").rebooting
    assert logged == ["reboot required (first boot) but no --reboot-command is configured"]
    assert not quiet.can_reboot() and node.rebooter(reboot_command(node.root)).can_reboot()


def test_health_reports_done_at_once_without_a_gate(tmp_path: Path) -> None:
    node = Node(tmp_path)
    health = Health(node.root, node.state, node.reporting, node.clock)
    result = health.gated_done(V2, V1.name, "applied v2", changed=True)
    assert (result.state, result.message, node.state.soak()) == ("Done", "applied v2", None)



def test_planner_adopts_what_is_on_disk_on_a_node_without_state(tmp_path: Path) -> None:
    node = Node(tmp_path)
    (node.root / "etc/kept.conf").write_text("kept\n")  # as Ignition wrote it; /etc/app.conf is not there yet
    plan = Planner(AgentSettings(node="n1"), node.root, node.systemctl, NoBackend()).plan(None, V1, None)
    assert [e["path"] for e in plan.write_files] == ["/etc/app.conf"]
    assert [f["path"] for f in plan.old.config["storage"]["files"]] == ["/etc/kept.conf"]


def test_live_repair_starts_a_failed_unit_within_its_budget_then_names_it(tmp_path: Path) -> None:
    node = Node(tmp_path)
    node.systemctl.live = True  # what a node root of / is; every command goes to the recording runner
    node.runner.answers[("systemctl", "show")] = Result((), 0, "ActiveState=failed\nType=simple\n")
    live = LiveRepair(node.root, NoBackend(), node.systemctl, node.clock)
    for _ in range(RESTART_BUDGET):
        found = live.check_running(V1, repair=True)
        assert (found.live, found.left) == (("unit app.service started (was failed)",), [])
    found = live.check_running(V1, repair=True)
    assert found.left == [f'unit "app.service" is failed after {RESTART_BUDGET} starts in 600 s'] and not found.live
    assert node.runner.calls.count(("systemctl", "start", "app.service")) == RESTART_BUDGET
