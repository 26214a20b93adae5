"""The agent's writing part: a plan put on disk (files, stale files, units, stale units, SSH keys, in that order),
an old config put back after a failed update, and the bookkeeping that makes a kill at any instant safe.

Files go through applier/files.py (atomic writes, originals backed up once), units through applier/units.py. An
update ends with `settle`: currentconfig recorded, then the markers of the paths that left dropped, then pending
cleared, so a kill in between leaves the update pending and the next sync settles it again. The post-config
actions (daemon-reload, reload, restart) run only on a live system.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from applier.drift import DriftChecker, watched_paths
from applier.errors import ApplyError
from applier.files import FileWriter, host_path
from applier.plan import Plan, make_plan
from applier.settings import LogFn, no_log
from applier.ssh import set_password_hashes, write_keys
from applier.state import StateDir
from applier.units import Systemctl, UnitWriter, dropin_path, unit_path
from fleet.atomic import sweep_temp
from fleet.diff import dropins_of, files_of, units_of
from fleet.disruption import Disruption
from fleet.rendered import MachineConfigSpec, RenderedConfig


def removed_paths(plan: Plan) -> tuple[str, ...]:
    """Every path a plan takes out of the config: files, unit files, drop-ins."""
    return tuple(sorted({*plan.remove_files, *(unit_path(n) for n in plan.remove_units),
                         *(dropin_path(*k.split("/", 1)) for k in plan.remove_dropins)}))


@dataclass(eq=False)
class Writer:
    """Writes plans under `root`, recording originals and markers in `state`; `drift` forgets what it wrote."""

    root: Path
    state: StateDir
    systemctl: Systemctl
    drift: DriftChecker
    durable: bool = True
    log: LogFn = no_log
    files: FileWriter = field(init=False)
    units: UnitWriter = field(init=False)

    def __post_init__(self) -> None:
        self.files = FileWriter(self.root, self.state, durable=self.durable)
        self.units = UnitWriter(self.root, self.files, self.systemctl)

    def apply(self, plan: Plan, *, first_run: bool) -> None:
        """Files, stale files, units, stale units, SSH keys, password hashes (in that order, as MCO update())."""
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
            write_keys(self.root, plan.new.config or {}, durable=self.durable)
        set_password_hashes(self.systemctl.runner, self.root, plan.new.config or {}, plan.old.config or {},
                            live=self.systemctl.live)
        self.drift.forget([str(e.get("path")) for e in plan.write_files] + list(plan.remove_files))

    def revert(self, plan: Plan) -> tuple[str, ...]:
        """Put the old config's files and units back after a failed update (best effort); returns the paths
        whose markers may go once the old config is recorded (none when the revert was incomplete)."""
        back = make_plan(plan.new, plan.old, leftover_paths=[str(e.get("path")) for e in plan.write_files])
        try:
            self.apply(back, first_run=False)
        except ApplyError as exc:
            self.log(f"revert incomplete: {exc}")
            return ()
        self.files.flush()
        return removed_paths(back)

    def undo(self, plan: Plan) -> None:
        """A failed update: the old config back, the markers of what it does not hold dropped."""
        self.files.drop_markers(self.revert(plan), keep=watched_paths(plan.old.config or {}))

    def adopt(self, spec: MachineConfigSpec) -> None:
        """Stamp the adopted entries as ours (files, unit files and masks, drop-ins: what Ignition wrote at first
        boot), so they are deleted (not left) when they leave the config, as MCO deleteStaleData
        (pkg/daemon/update.go) deletes a stale file, unit or drop-in that has no backup to restore."""
        cfg = spec.config or {}
        paths = set(files_of(cfg))
        paths |= {unit_path(n) for n, u in units_of(cfg).items() if u.get("contents") or u.get("mask")}
        paths |= {dropin_path(*k.split("/", 1)) for k, d in dropins_of(cfg).items() if d.get("contents")}
        for path in sorted(paths):
            self.files.adopt(path)

    def sweep(self, configs: Iterable[RenderedConfig | None]) -> None:
        """Remove the temp files a killed run may have left beside the configs' paths and their markers."""
        paths = {p for c in configs if c is not None for p in watched_paths(c.spec.config or {})}
        for directory in {host_path(self.root, p).parent for p in paths} | self.files.marker_dirs(paths):
            sweep_temp(directory)

    def settle(self, config: RenderedConfig, drop: Iterable[str]) -> None:
        """The disk matches `config`: record it, drop the markers of the paths that left (`drop`), end the update
        (in that order: module docstring)."""
        self.state.set_current(config)
        self.files.drop_markers(drop, keep=watched_paths(config.spec.config or {}))
        self.state.clear_pending()

    def post_actions(self, d: Disruption) -> list[str]:
        """Run the disruption's actions on a live system (the ones run, in order); under a directory root there
        is no running service to act on, so none is run.

        As MCO performPostConfigChangeNodeDisruptionAction (pkg/daemon/update.go): one pass over the list in its
        order, repeats kept (a policy's actions are applied in the order they are set), Special reloads CRI-O;
        Drain was done before the writes and None asks nothing."""
        done = []
        for action in d.actions:
            if action.type == "DaemonReload":
                args: tuple[str, ...] = ("daemon-reload",)
            elif action.type in ("Reload", "Restart"):
                args = (action.type.lower(), action.service)
            elif action.type == "Special":
                args = ("reload", "crio.service")
            else:
                continue
            if self.systemctl.live_action(*args):
                done.append(" ".join(args))
        return done
