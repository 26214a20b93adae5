"""The agent's reporting part: every state report of a sync (Working / Done / Degraded) and the update phase it
is in (fleet/phases.py), as the MCO's MachineConfigNode shows it.

It remembers, within one process, the phase last entered, the phase the current step is to reach (what a failure
names) and the update's Working message (repeated by each phase report). A report the server did not take stays
in the state directory and goes out again; the same acknowledged report is not sent twice, except one carrying
drift events (the same path drifting again is news). While the node is drained (`drained`), its Working reports
(the phases drained, written, image-staged, the reboot request) wait for no server: the drained window holds the
writes and the reboot, not a slow server's answers; Done and Degraded still wait and retry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from applier.report import NodeReport, Reporter
from applier.settings import SyncResult
from applier.state import StateDir
from fleet.drift_events import DriftEvent
from fleet.rendered import RenderedConfig, pool_of_name

NODE_ANNOTATIONS = "node-annotations.json"


def pool_of(name: str) -> str:
    """The pool in a rendered name `rendered-<pool>-<hash>` (or a machine's, `rendered-<pool>-<hash>-<hash>`)."""
    return pool_of_name(name)


@dataclass(eq=False)
class Reporting:
    """Sends the node's reports; `phase`, `aim` and `doing` are the update's progress in this process."""

    node: str
    configured_pool: str | None
    root: Path
    state: StateDir
    reporter: Reporter
    phase: str = ""  # the update phase last entered in this process ("" outside an update)
    aim: str = ""  # the phase the update's current step is to reach: what a failure names
    doing: str = ""  # the message of the update's Working report, repeated by each phase report
    drained: bool = False  # the node is drained: its Working reports wait for no server (`Reporter.send` prompt)

    def pool(self, current: RenderedConfig | None, desired: RenderedConfig | None = None) -> str:
        """The node's pool: configured, else the configs', else the one the server annotated."""
        if self.configured_pool:
            return self.configured_pool
        for config in (current, desired):
            if config is not None and config.pool:
                return config.pool
        annotations = self.root / "etc" / "machine-config-daemon" / NODE_ANNOTATIONS  # appended by the server
        try:
            data = json.loads(annotations.read_text())
            name = str(data.get("machineconfiguration.openshift.io/currentConfig", ""))
        except (OSError, ValueError, AttributeError):
            name = ""
        return pool_of(name)

    def result(self, state: str, message: str, current: RenderedConfig | None, desired: str, *,
               drift: tuple[DriftEvent, ...] = (), **kw: Any) -> SyncResult:
        """Report how a sync ended (an update's `done` or `degraded` phase with it) and return it."""
        result = SyncResult(state=state, message=message, current=current.name if current else "", desired=desired,
                            **kw)
        phase, detail = "", ""
        if self.phase and state == "Done":
            phase = "done"
        elif self.phase and state == "Degraded":
            phase, detail = "degraded", self.aim or self.phase  # the phase it failed to reach
        if state != "Working":
            self.phase = self.aim = ""
        self.send(NodeReport(node=self.node, pool=self.pool(current), current=result.current, desired=desired,
                             state=state, message=message, phase=phase, detail=detail, drift=drift))
        return result

    def enter(self, phase: str, current: RenderedConfig | None, desired: RenderedConfig, detail: str = "") -> None:
        """Report the update phase entered now."""
        self.phase, self.aim = phase, ""
        self.send(NodeReport(node=self.node, pool=self.pool(current, desired), current=current.name if current else "",
                             desired=desired.name, state="Working", message=self.doing or f"updating to {desired.name}",
                             phase=phase, detail=detail))

    def working(self, current: RenderedConfig | None, desired: RenderedConfig, message: str, *, phase: str = "",
                detail: str = "") -> None:
        """Report Working on `desired` with `message` (which the update's phase reports then repeat)."""
        self.doing = message
        if phase:
            self.enter(phase, current, desired, detail)
            return
        self.send(NodeReport(node=self.node, pool=self.pool(current, desired), current=current.name if current else "",
                             desired=desired.name, state="Working", message=message))

    def report_as(self, previous: str, config: RenderedConfig, state: str, message: str,
                  phase: tuple[str, str]) -> SyncResult:
        """Report `previous` as the current config and `config` as the desired one (a soaking node), entering
        `phase` (name, detail) of the update's timeline."""
        self.send(NodeReport(node=self.node, pool=self.pool(config), current=previous, desired=config.name,
                             state=state, message=message, phase=phase[0], detail=phase[1]))
        return SyncResult(state=state, message=message, current=previous, desired=config.name)

    def send(self, report: NodeReport) -> None:
        """Deliver a report; an undelivered one stays in the state dir for the next sync."""
        last = self.state.last_report()
        body = {"node": report.node, **report.body()}
        if last and last.get("report") == body and last.get("acked") and not report.drift:
            return  # a report with drift events goes out every time: the same path drifting again is news
        acked = self.reporter.send(report, prompt=self.drained and report.state == "Working")
        self.state.set_last_report({"report": body, "acked": bool(acked)})
