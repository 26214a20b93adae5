"""The agent's drift part: drift of the current config while the node is settled: the periodic check of the whole
config, the check of what the watch saw change, and a repair as a small update.

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

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from applier.drift import watch_map
from applier.errors import ApplyError
from applier.live import fips_watch
from applier.live_repair import LiveRepair
from applier.planning import Planner
from applier.rebooting import Rebooter
from applier.repairing import Repair, Repairer
from applier.reporting import Reporting
from applier.settings import SyncResult
from applier.state import Pending, StateDir
from applier.verify import on_disk_message
from applier.writing import Writer
from fleet.drift_reboot import REBOOTING
from fleet.rendered import RenderedConfig

SlotAsk = Callable[[str], "str | None"]  # the server's rollout slot for a reboot: None when granted, else why not


@dataclass(eq=False)
class DriftSteps:
    """Checks the settled node for drift, repairs it, and runs what the policy asks for the repair."""

    node: str
    root: Path
    state: StateDir
    repairer: Repairer
    live: LiveRepair
    planner: Planner
    writer: Writer
    rebooter: Rebooter
    reporting: Reporting
    reboot_slot: SlotAsk | None = None  # only a server hands out slots

    def _reboot_in_slot(self, current: RenderedConfig, found: Repair) -> SyncResult:
        """Reboot into `current` to put `found.reboot` right, once the server granted a rollout slot."""
        if not self.rebooter.can_reboot():
            why: str | None = "no --reboot-command to reboot with"
        else:
            why = "no server to take a rollout slot from" if self.reboot_slot is None else self.reboot_slot(self.node)
        if why is not None:
            left = [*found.left, f"{found.reboot}; the next boot's deployment has them: a reboot puts them right, "
                                 f"waiting for a rollout slot: {why}"]
            return self.reporting.result("Degraded", on_disk_message(current.name, left) + found.note(), current,
                                         current.name, drift=found.events)
        self.reporting.result("Working", f"{REBOOTING}: {found.reboot}{found.note()}", current, current.name,
                              drift=found.events)
        return self.rebooter.request(current, Pending(current, "rebooting", previous=current.name),
                                     f"{REBOOTING} in a rollout slot: {found.reboot}")

    def _repaired(self, current: RenderedConfig, found: Repair) -> SyncResult:
        """The result of a check that found drift: Degraded naming what is left, or Done naming the repair and the
        actions run for it (or the reboot a policy asks for, or a booted mismatch's reboot in a rollout slot)."""
        if found.reboot and not found.left:
            return self._reboot_in_slot(current, found)
        if found.reboot:
            found = found._replace(left=[*found.left, found.reboot])
        if found.left:
            return self.reporting.result("Degraded", on_disk_message(current.name, found.left) + found.note(),
                                         current, current.name, drift=found.events)
        message = f"repaired drift: {', '.join(found.names)}"
        decided = self.planner.repair_disruption(current, found)
        if decided.reboot:  # the repair's events first: the reboot's reports carry none
            self.reporting.result("Done", message, current, current.name, drift=found.events)
            return self.rebooter.request(current, Pending(current, "rebooting", previous=current.name),
                                         f"{message}; the disruption policy asks for a reboot")
        try:
            actions = self.writer.post_actions(decided)
        except ApplyError as exc:  # the files are right, the running service is not
            return self.reporting.result("Degraded", f"{message}; post-repair action failed: {exc}", current,
                                         current.name, drift=found.events)
        if actions:
            message += f"; actions: {', '.join(actions)}"
        elif decided.verdict != "none":
            message += f"; no live system to {decided.verdict}"
        return self.reporting.result("Done", message, current, current.name, changed=True, drift=found.events)

    def check_drift(self, current: RenderedConfig, *, repair: bool) -> SyncResult:
        """Files/units changed behind our back: restore them (repair) or report Degraded naming the path."""
        found = self.live.add(current, self.repairer.check(current, repair=repair), repair=repair)
        if found.found:
            return self._repaired(current, found)
        return self.reporting.result("Done", "", current, current.name)

    def _settled(self, repair: bool) -> bool:
        """Whether only what changed needs a look: drift is repaired and the node's last report was Done."""
        last = self.state.last_report() or {}
        return repair and (last.get("report") or {}).get("state", "Done") == "Done"

    def check_next_boot(self, current: RenderedConfig, *, repair: bool) -> SyncResult | None:
        """The watch saw the next boot's entries change: check the kernel arguments (None when they are right)."""
        if not self._settled(repair):
            return self.check_drift(current, repair=repair)
        found = self.live.check_boot(current, repair=True)
        return self._repaired(current, found) if found.found else None

    def check_changed(self, current: RenderedConfig, changed: Iterable[str], *, repair: bool) -> SyncResult | None:
        """The watch saw `changed` (config paths) move: check what they belong to, and repair it.

        Only those files and units are checked while the node's last report was Done and drift is repaired; a
        change that turns out to match the config reports nothing (None). Otherwise (report mode, or a node
        already Degraded) the whole config is checked, so the report names every path still wrong.
        """
        if not self._settled(repair):
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
        self.repairer.drift.forget(paths)
        found = self.repairer.check(current, repair=True, paths=paths, units=units)
        return self._repaired(current, found) if found.left or found.names else None
