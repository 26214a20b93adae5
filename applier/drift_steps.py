"""Drift of the current config while the node is settled: the periodic check of the whole config, the check of what
the watch saw change, and a repair as a small update.

A repair (applier/repairing.py) writes back what drifted; then, as after an update, the node disruption policy
says what the running system must do for those paths and units (MCO pkg/daemon/update.go:
calculatePostConfigChangeNodeDisruptionAction): daemon-reload, reload, restart, so the service takes the
declared settings again. A path or unit no policy names asks nothing of a repair (an update would reboot for it:
a repair never reboots unless a policy asks for it, and then the reboot goes through the usual request and
post-reboot check of the same config).
"""

from __future__ import annotations

from collections.abc import Iterable

from applier.agentbase import SyncResult
from applier.drift import watch_map
from applier.errors import ApplyError
from applier.repairing import Repair
from applier.state import Pending
from applier.updating import UpdateSteps
from applier.verify import on_disk_message
from fleet.diff import ConfigDiff, SetChange
from fleet.disruption import Disruption, disruption
from fleet.rendered import RenderedConfig


class DriftSteps(UpdateSteps):
    """Checking the settled node for drift, repairing it, and running what the policy asks for the repair."""

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
        actions run for it (or the reboot a policy asks for)."""
        if found.left:
            return self._result("Degraded", on_disk_message(current.name, found.left), current, current.name)
        message = f"repaired drift: {', '.join(found.names)}"
        decided = self.repair_disruption(current, found)
        if decided.reboot:
            return self.request_reboot(current, Pending(current, "rebooting", previous=current.name),
                                       f"{message}; the disruption policy asks for a reboot")
        try:
            actions = self._post_actions(decided)
        except ApplyError as exc:  # the files are right, the running service is not
            return self._result("Degraded", f"{message}; post-repair action failed: {exc}", current, current.name)
        if actions:
            message += f"; actions: {', '.join(actions)}"
        elif decided.verdict != "none":
            message += f"; no live system to {decided.verdict}"
        return self._result("Done", message, current, current.name, changed=True)

    def check_drift(self, current: RenderedConfig, *, repair: bool) -> SyncResult:
        """Files/units changed behind our back: restore them (repair) or report Degraded naming the path."""
        found = self._check_drift(current, repair=repair)
        if found.left or found.names:
            return self._repaired(current, found)
        return self._result("Done", "", current, current.name)

    def check_changed(self, current: RenderedConfig, changed: Iterable[str], *, repair: bool) -> SyncResult | None:
        """The watch saw `changed` (config paths) move: check what they belong to, and repair it.

        Only those files and units are checked while the node's last report was Done and drift is repaired; a
        change that turns out to match the config reports nothing (None). Otherwise (report mode, or a node
        already Degraded) the whole config is checked, so the report names every path still wrong.
        """
        last = self.state.last_report() or {}
        if not repair or (last.get("report") or {}).get("state", "Done") != "Done":
            return self.check_drift(current, repair=repair)
        owners = watch_map(self.root, current.spec.config or {})
        paths: set[str] = set()
        units: set[str] = set()
        for path in changed:
            kind, key = owners.get(path, ("", ""))
            if kind == "file":
                paths.add(key)
            elif kind == "unit":
                units.add(key)
        if not paths and not units:
            return None
        self.drift.forget(paths)
        found = self._check_drift(current, repair=True, paths=paths, units=units)
        return self._repaired(current, found) if found.left or found.names else None
