"""What every part of the agent shares: its settings, its result, its collaborators, reporting, and the steps
used both by an update and after a reboot (applying a plan, putting the old config back, repairing drift,
running the reboot command). applier/agent.py composes the parts; the flow is described there.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from applier.backends.base import Backend
from applier.drift import DriftChecker, watched_paths
from applier.errors import ApplyError, PermanentError
from applier.fetch import DesiredSource
from applier.files import FileWriter, host_path
from applier.hooks import Hooks
from applier.plan import Plan, make_plan
from applier.report import NodeReport, Reporter
from applier.runner import CommandRunner
from applier.ssh import write_keys
from applier.state import StateDir
from applier.units import Systemctl, UnitWriter, dropin_path, unit_path
from fleet.atomic import sweep_temp
from fleet.clock import Clock, system_clock
from fleet.diff import files_of, units_of
from fleet.disruption_policy import DisruptionPolicy, PolicyError, policy_from_annotations
from fleet.drift_events import DriftEvent
from fleet.rendered import RenderedConfig, pool_of_name

NODE_ANNOTATIONS = "node-annotations.json"


@dataclass(frozen=True)
class AgentSettings:
    """How the agent runs on this node.

    root: the node's filesystem (`/` live); state_dir: defaults to <root>/etc/machine-config-daemon;
    backend: which OS backend manages images and kernel arguments; reboot_command: shell command run
    to reboot (default `systemctl reboot` on `/`, none elsewhere); reboot_wait: seconds a requested reboot
    may take before it is requested again; drift: `repair` or `report`; policy: disruption policy overriding
    the one the rendered config carries; rollback: roll back to the previous deployment when post-reboot
    verification fails.
    """

    node: str
    root: Path = Path("/")
    state_dir: Path | None = None
    pool: str | None = None
    reboot_command: str | None = None
    reboot_wait: float = 300.0
    drift: str = "repair"
    interval: float = 60.0
    policy: DisruptionPolicy | None = None
    overrides: tuple[str, ...] = ()
    hooks: Hooks = field(default_factory=Hooks)
    rollback: bool = False
    durable: bool = True

    @property
    def state_path(self) -> Path:
        """The state directory."""
        return self.state_dir or self.root / "etc" / "machine-config-daemon"


@dataclass(frozen=True)
class SyncResult:
    """What one sync ended with."""

    state: str  # Done | Working | Degraded
    message: str
    current: str
    desired: str
    rebooting: bool = False
    changed: bool = False


def removed_paths(plan: Plan) -> tuple[str, ...]:
    """Every path a plan takes out of the config: files, unit files, drop-ins."""
    return tuple(sorted({*plan.remove_files, *(unit_path(n) for n in plan.remove_units),
                         *(dropin_path(*k.split("/", 1)) for k in plan.remove_dropins)}))


def pool_of(name: str) -> str:
    """The pool in a rendered name `rendered-<pool>-<hash>` (or a machine's, `rendered-<pool>-<hash>-<hash>`)."""
    return pool_of_name(name)


class AgentBase:
    """One node's applier: its collaborators (settings, a desired-config source, a reporter, a backend, a runner)
    and the steps the update and the post-reboot check share."""

    def __init__(self, settings: AgentSettings, *, source: DesiredSource, reporter: Reporter, backend: Backend,
                 runner: CommandRunner, log: Callable[[str], None] | None = None,
                 clock: Clock = system_clock) -> None:
        self.settings = settings
        self.source = source
        self.reporter = reporter
        self.backend = backend
        self.runner = runner
        self.root = Path(settings.root)
        self.state = StateDir(settings.state_path)
        self.files = FileWriter(self.root, self.state, durable=settings.durable)
        self.systemctl = Systemctl(runner, self.root)
        self.units = UnitWriter(self.root, self.files, self.systemctl)
        self.drift = DriftChecker(self.root, self.systemctl)
        self.log = log or (lambda message: None)
        self.clock = clock  # the time every stamp and stored time reads (fleet/clock.py); deadlines use monotonic
        self._stop = False
        self._phase = ""  # the update phase last entered in this process ("" outside an update)
        self.aim = ""  # the phase its current step is to reach: what a failure names
        self._doing = ""  # the message of the update's Working report, repeated by each phase report

    # --- reporting ------------------------------------------------------------------------------------------

    def _pool(self, current: RenderedConfig | None, desired: RenderedConfig | None = None) -> str:
        if self.settings.pool:
            return self.settings.pool
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

    def _result(self, state: str, message: str, current: RenderedConfig | None, desired: str, *,
                drift: tuple[DriftEvent, ...] = (), **kw: Any) -> SyncResult:
        result = SyncResult(state=state, message=message, current=current.name if current else "", desired=desired,
                            **kw)
        phase, detail = "", ""
        if self._phase and state == "Done":
            phase = "done"
        elif self._phase and state == "Degraded":
            phase, detail = "degraded", self.aim or self._phase  # the phase it failed to reach
        if state != "Working":
            self._phase = self.aim = ""
        report = NodeReport(node=self.settings.node, pool=self._pool(current), current=result.current,
                            desired=desired, state=state, message=message, phase=phase, detail=detail,
                            drift=drift)
        self._send(report)
        return result

    def _enter(self, phase: str, current: RenderedConfig | None, desired: RenderedConfig, detail: str = "") -> None:
        """Report the update phase entered now (fleet/phases.py), as the MCO's MachineConfigNode shows it."""
        self._phase, self.aim = phase, ""
        self._send(NodeReport(node=self.settings.node, pool=self._pool(current, desired),
                              current=current.name if current else "", desired=desired.name, state="Working",
                              message=self._doing or f"updating to {desired.name}", phase=phase, detail=detail))

    def _send(self, report: NodeReport) -> None:
        """Deliver a report; an undelivered one stays in the state dir for the next sync."""
        last = self.state.last_report()
        body = {"node": report.node, **report.body()}
        if last and last.get("report") == body and last.get("acked") and not report.drift:
            return  # a report with drift events goes out every time: the same path drifting again is news
        acked = self.reporter.send(report)
        self.state.set_last_report({"report": body, "acked": bool(acked)})

    def _working(self, current: RenderedConfig | None, desired: RenderedConfig, message: str, *, phase: str = "",
                 detail: str = "") -> None:
        self._doing = message
        if phase:
            self._enter(phase, current, desired, detail)
            return
        self._send(NodeReport(node=self.settings.node, pool=self._pool(current, desired),
                              current=current.name if current else "", desired=desired.name, state="Working",
                              message=message))

    def _policy(self, desired: RenderedConfig) -> DisruptionPolicy:
        if self.settings.policy is not None:
            return self.settings.policy
        try:
            return policy_from_annotations(desired.annotations)
        except PolicyError as exc:
            raise PermanentError(exc.path, exc.message) from exc

    # --- applying a plan ------------------------------------------------------------------------------------

    def _apply_plan(self, plan: Plan, *, first_run: bool) -> None:
        """Files, stale files, units, stale units, SSH keys (in that order)."""
        old_paths = set(files_of(plan.old.config or {}))
        for entry in plan.write_files:
            self.files.write(entry, managed_before=str(entry.get("path")) in old_paths and not first_run)
        for path in plan.remove_files:
            self.files.remove(path)
        old_units = set(units_of(plan.old.config or {}))
        for unit in plan.write_units:
            self.units.write_unit(unit, managed_before=str(unit.get("name")) in old_units)
        for key in plan.remove_dropins:
            self.units.remove_dropin(key)
        for name in plan.remove_units:
            self.units.remove_unit(name)
        if plan.write_units:
            self.units.set_enablement(plan.write_units)
        if plan.write_ssh:
            write_keys(self.root, plan.new.config or {}, durable=self.settings.durable)
        self.drift.forget([str(e.get("path")) for e in plan.write_files] + list(plan.remove_files))

    def _revert(self, plan: Plan) -> tuple[str, ...]:
        """Put the old config's files and units back after a failed update (best effort); returns the paths
        whose markers may go once the old config is recorded (none when the revert was incomplete)."""
        back = make_plan(plan.new, plan.old, leftover_paths=[str(e.get("path")) for e in plan.write_files])
        try:
            self._apply_plan(back, first_run=False)
        except ApplyError as exc:
            self.log(f"revert incomplete: {exc}")
            return ()
        self.files.flush()
        return removed_paths(back)

    def _sweep(self, configs: Iterable[RenderedConfig | None]) -> None:
        """Remove the temp files a killed run may have left beside the configs' paths and their markers."""
        paths = {p for c in configs if c is not None for p in watched_paths(c.spec.config or {})}
        for directory in {host_path(self.root, p).parent for p in paths} | self.files.marker_dirs(paths):
            sweep_temp(directory)

    def _settle(self, config: RenderedConfig, drop: Iterable[str]) -> None:
        """The disk matches `config`: record it, drop the markers of the paths that left (`drop`), end the update.

        In that order, so a kill in between leaves the update pending (with its `drop`) and the next sync
        settles it again.
        """
        self.state.set_current(config)
        self.files.drop_markers(drop, keep=watched_paths(config.spec.config or {}))
        self.state.clear_pending()

    # --- the reboot command ---------------------------------------------------------------------------------

    def _reboot(self, reason: str) -> None:
        command = self.settings.reboot_command
        if command is None and self.systemctl.live:
            command = "systemctl reboot"
        if not command:
            self.log(f"reboot required ({reason}) but no --reboot-command is configured")
            return
        self.log(f"rebooting: {reason}")
        proc = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0:
            raise PermanentError("reboot", f"`{command}` exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
