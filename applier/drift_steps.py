"""Drift of the current config while the node is settled: the periodic check of the whole config, the check of what
the watch saw change, and a repair as a small update.

A repair (applier/repairing.py) writes back what drifted; then, as after an update, the node disruption policy
says what the running system must do for those paths and units (MCO pkg/daemon/update.go:
calculatePostConfigChangeNodeDisruptionAction): daemon-reload, reload, restart, so the service takes the
declared settings again. A path or unit no policy names asks nothing of a repair (an update would reboot for it:
a repair never reboots unless a policy asks for it, and then the reboot goes through the usual request and
post-reboot check of the same config).

A booted command line without the config's kernel arguments, while the next boot has them, is put right by a
reboot, which the MCO's rule for kernel arguments always asks for: in repair mode, with a way to reboot, the
agent asks the server for a rollout slot (server/reboot_slot.py; fleet/drift_reboot.py decides it like any
hand-out, never beyond maxUnavailable) and reboots into the same config, checked after the reboot as an update
is. Without a slot (or a server, or a way to reboot) the node is Degraded naming the mismatch and why.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from applier.drift import watch_map
from applier.errors import ApplyError
from applier.live import CMDLINE, booted_kargs, fips_problems, fips_watch, next_boot_kargs, stopped_units
from applier.repairing import Repair
from applier.settings import SyncResult
from applier.state import Pending
from applier.updating import UpdateSteps
from applier.verify import on_disk_message
from fleet.clock import timestamp
from fleet.diff import ConfigDiff, ListChange, SetChange
from fleet.disruption import Disruption, disruption
from fleet.drift_events import DriftEvent
from fleet.drift_reboot import REBOOTING
from fleet.rendered import MachineConfigSpec, RenderedConfig

RESTART_BUDGET = 3  # starts of one unit the agent makes per window before it leaves the node Degraded
RESTART_WINDOW = 600.0


class DriftSteps(UpdateSteps):
    """Checking the settled node for drift, repairing it, and running what the policy asks for the repair."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._starts: dict[str, list[float]] = {}  # unit -> when the agent started it again (the restart budget)

    # --- live state -----------------------------------------------------------------------------------------

    def _restage(self, spec: MachineConfigSpec) -> str:
        """Stage the booted deployment again with the config's kernel arguments; the new deployment's ID."""
        staged = self.backend.stage(ConfigDiff(kernel_arguments=ListChange((), spec.kernel_arguments)), spec, spec)
        return str(staged.get("id", ""))

    def check_boot(self, current: RenderedConfig, *, repair: bool) -> Repair:
        """Kernel arguments and FIPS (applier/live.py): what was put right (`live`), the mismatches left.

        A next boot without the config's kernel arguments is staged again (repair); a booted command line
        without them is reported, and a reboot into the (re-)staged deployment puts it right."""
        spec, at = current.spec, timestamp(self.clock())
        wanted = " ".join(spec.kernel_arguments)
        fips = [DriftEvent("fips", problem.split(":", 2)[1].split()[0], "FIPS", problem, at, False)
                for problem in fips_problems(self.root, spec)]
        if self.backend.name == "none":
            return Repair([], [], [e.found for e in fips], events=tuple(fips))
        repaired: list[str] = []
        left: list[str] = []
        events: list[DriftEvent] = []
        try:
            wrong_next = next_boot_kargs(self.backend.next_boot(), spec)
            if wrong_next and repair:
                was = wrong_next
                staged = self._restage(spec)
                wrong_next = next_boot_kargs(self.backend.next_boot(), spec)
                if not wrong_next:
                    repaired.append(f"kernel arguments of the next boot (staged again: {staged})")
                    events.append(DriftEvent("kargs", "next boot", wanted, was, at, True))
        except ApplyError as exc:
            wrong_next = f"next boot's kernel arguments: {exc}"
        if wrong_next:
            left.append(wrong_next)
            events.append(DriftEvent("kargs", "next boot", wanted, wrong_next, at, False))
        wrong_booted = booted_kargs(self.root, spec)
        reboot = ""
        if wrong_booted:
            events.append(DriftEvent("kargs", f"/{CMDLINE}", wanted, wrong_booted, at, False))
            if wrong_next:
                left.append(wrong_booted)
            elif repair:
                reboot = wrong_booted
            else:
                left.append(wrong_booted + "; the next boot's deployment has them: a reboot puts them right")
        return Repair([], [], left + [e.found for e in fips], tuple(repaired), (*events, *fips), reboot)

    def check_running(self, current: RenderedConfig, *, repair: bool) -> Repair:
        """Units the config enables that are not running (live systems): started again, RESTART_BUDGET times per
        RESTART_WINDOW seconds each, then left naming the unit."""
        repaired: list[str] = []
        left: list[str] = []
        events: list[DriftEvent] = []
        now, at = time.monotonic(), timestamp(self.clock())
        for name, state in stopped_units(self.systemctl, current.spec.config or {}).items():
            starts = [t for t in self._starts.get(name, []) if now - t < RESTART_WINDOW]
            if not repair or len(starts) >= RESTART_BUDGET:
                spent = f" after {len(starts)} starts in {RESTART_WINDOW:.0f} s" if starts else ""
                left.append(f'unit "{name}" is {state}{spent}')
                events.append(DriftEvent("service", name, "active", state, at, False))
                self._starts[name] = starts
                continue
            self._starts[name] = [*starts, now]
            try:
                self.systemctl.live_action("start", name)
            except ApplyError as exc:
                left.append(f'unit "{name}" is {state}: {exc}')
                events.append(DriftEvent("service", name, "active", state, at, False))
                continue
            repaired.append(f"unit {name} started (was {state})")
            events.append(DriftEvent("service", name, "active", state, at, True))
        return Repair([], [], left, tuple(repaired), tuple(events))

    def _live(self, current: RenderedConfig, found: Repair, *, repair: bool) -> Repair:
        """`found` with the live state's checks added."""
        boot, running = self.check_boot(current, repair=repair), self.check_running(current, repair=repair)
        return found._replace(left=found.left + boot.left + running.left, live=(*boot.live, *running.live),
                              events=(*found.events, *boot.events, *running.events), reboot=boot.reboot)

    def _reboot_in_slot(self, current: RenderedConfig, found: Repair) -> SyncResult:
        """Reboot into `current` to put `found.reboot` right, once the server granted a rollout slot."""
        ask = getattr(self.source, "reboot_slot", None)  # only the server hands out slots
        if not (self.settings.reboot_command or self.systemctl.live):
            why: str | None = "no --reboot-command to reboot with"
        else:
            why = "no server to take a rollout slot from" if ask is None else ask(self.settings.node)
        note = f"; repaired drift: {', '.join(found.names)}" if found.names else ""
        if why is not None:
            left = [*found.left, f"{found.reboot}; the next boot's deployment has them: a reboot puts them right, "
                                 f"waiting for a rollout slot: {why}"]
            return self.reporting.result("Degraded", on_disk_message(current.name, left) + note, current, current.name,
                                drift=found.events)
        self.reporting.result("Working", f"{REBOOTING}: {found.reboot}{note}", current, current.name, drift=found.events)
        return self.request_reboot(current, Pending(current, "rebooting", previous=current.name),
                                   f"{REBOOTING} in a rollout slot: {found.reboot}")

    def repair_disruption(self, config: RenderedConfig, repair: Repair) -> Disruption:
        """What the policy asks for the repaired paths and units (those no policy names ask nothing)."""
        policy = self._policy(config)
        files = tuple(sorted(p for p in repair.files if policy.for_file(p) is not None))
        units = tuple(sorted(u for u in repair.units if policy.for_unit(u) is not None))
        cfg = config.spec.config or {}
        entries = {p: e for e in (cfg.get("storage") or {}).get("files") or () if (p := str(e.get("path"))) in files}
        return disruption(ConfigDiff(files=SetChange(changed=files), units=SetChange(changed=units),
                                     new_files=entries), policy)

    def _repaired(self, current: RenderedConfig, found: Repair) -> SyncResult:
        """The result of a check that found drift: Degraded naming what is left, or Done naming the repair and the
        actions run for it (or the reboot a policy asks for, or a booted mismatch's reboot in a rollout slot)."""
        if found.reboot and not found.left:
            return self._reboot_in_slot(current, found)
        if found.reboot:
            found = found._replace(left=[*found.left, found.reboot])
        if found.left:
            note = f"; repaired drift: {', '.join(found.names)}" if found.names else ""
            return self.reporting.result("Degraded", on_disk_message(current.name, found.left) + note, current,
                                current.name, drift=found.events)
        message = f"repaired drift: {', '.join(found.names)}"
        decided = self.repair_disruption(current, found)
        if decided.reboot:
            self._send_events(current, found)
            return self.request_reboot(current, Pending(current, "rebooting", previous=current.name),
                                       f"{message}; the disruption policy asks for a reboot")
        try:
            actions = self._post_actions(decided)
        except ApplyError as exc:  # the files are right, the running service is not
            return self.reporting.result("Degraded", f"{message}; post-repair action failed: {exc}", current, current.name,
                                drift=found.events)
        if actions:
            message += f"; actions: {', '.join(actions)}"
        elif decided.verdict != "none":
            message += f"; no live system to {decided.verdict}"
        return self.reporting.result("Done", message, current, current.name, changed=True, drift=found.events)

    def _send_events(self, current: RenderedConfig, found: Repair) -> None:
        """Report the repair's events before a reboot the policy asks for (the reboot's reports carry none)."""
        self.reporting.result("Done", f"repaired drift: {', '.join(found.names)}", current, current.name, drift=found.events)

    def check_drift(self, current: RenderedConfig, *, repair: bool) -> SyncResult:
        """Files/units changed behind our back: restore them (repair) or report Degraded naming the path."""
        found = self._live(current, self._check_drift(current, repair=repair), repair=repair)
        if found.left or found.names or found.reboot:
            return self._repaired(current, found)
        return self.reporting.result("Done", "", current, current.name)

    def check_next_boot(self, current: RenderedConfig, *, repair: bool) -> SyncResult | None:
        """The watch saw the next boot's entries change: check the kernel arguments (None when they are right)."""
        last = self.state.last_report() or {}
        if not repair or (last.get("report") or {}).get("state", "Done") != "Done":
            return self.check_drift(current, repair=repair)
        found = self.check_boot(current, repair=True)
        return self._repaired(current, found) if found.left or found.names or found.reboot else None

    def check_changed(self, current: RenderedConfig, changed: Iterable[str], *, repair: bool) -> SyncResult | None:
        """The watch saw `changed` (config paths) move: check what they belong to, and repair it.

        Only those files and units are checked while the node's last report was Done and drift is repaired; a
        change that turns out to match the config reports nothing (None). Otherwise (report mode, or a node
        already Degraded) the whole config is checked, so the report names every path still wrong.
        """
        last = self.state.last_report() or {}
        if not repair or (last.get("report") or {}).get("state", "Done") != "Done":
            return self.check_drift(current, repair=repair)
        owners = {**watch_map(self.root, current.spec.config or {}), **fips_watch(current.spec)}
        paths: set[str] = set()
        units: set[str] = set()
        for path in changed:
            kind, key = owners.get(path, ("", ""))
            if kind == "fips":  # FIPS mode cannot be repaired here: the whole check reports it
                return self.check_drift(current, repair=repair)
            if kind == "file":
                paths.add(key)
            elif kind == "unit":
                units.add(key)
        if not paths and not units:
            return None
        self.drift.forget(paths)
        found = self._check_drift(current, repair=True, paths=paths, units=units)
        return self._repaired(current, found) if found.left or found.names else None
