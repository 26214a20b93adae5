"""What the agent's steps share: its collaborators (reporting is applier/reporting.py's part, settings and
results applier/settings.py's), and the steps used both by an update and after a reboot (applying a plan, putting the old config back, repairing drift,
running the reboot command). applier/agent.py composes the parts; the flow is described there.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

from applier.backends.base import Backend
from applier.drift import DriftChecker, watched_paths
from applier.errors import ApplyError, PermanentError
from applier.fetch import DesiredSource
from applier.files import FileWriter, host_path
from applier.plan import Plan, make_plan
from applier.report import Reporter
from applier.reporting import Reporting
from applier.runner import CommandRunner
from applier.settings import AgentSettings
from applier.ssh import write_keys
from applier.state import StateDir
from applier.units import Systemctl, UnitWriter, dropin_path, unit_path
from fleet.atomic import sweep_temp
from fleet.clock import Clock, system_clock
from fleet.diff import files_of, units_of
from fleet.disruption_policy import DisruptionPolicy, PolicyError, policy_from_annotations
from fleet.rendered import RenderedConfig


def removed_paths(plan: Plan) -> tuple[str, ...]:
    """Every path a plan takes out of the config: files, unit files, drop-ins."""
    return tuple(sorted({*plan.remove_files, *(unit_path(n) for n in plan.remove_units),
                         *(dropin_path(*k.split("/", 1)) for k in plan.remove_dropins)}))


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
        self.reporting = Reporting(settings.node, settings.pool, self.root, self.state, reporter)

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
