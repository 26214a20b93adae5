"""Drift found and repaired: the periodic check of the whole config, and the check of what the watch saw change.

A repair rewrites the drifted files and units and checks them again; a hand edit made while it ran is repaired
in the next pass (up to REPAIR_PASSES), so only drift that keeps coming back faster than it is repaired, or
that cannot be written, leaves the node Degraded. `--drift report` repairs nothing and names every path.
"""

from __future__ import annotations

from collections.abc import Iterable

from applier.agentbase import AgentBase, SyncResult
from applier.drift import watch_map
from applier.errors import ApplyError
from applier.verify import on_disk_message
from fleet.diff import files_of, units_of
from fleet.rendered import RenderedConfig

REPAIR_PASSES = 3


class RepairSteps(AgentBase):
    """Checking the disk against a config and putting it back."""

    def _check_drift(self, config: RenderedConfig, *, repair: bool, paths: Iterable[str] | None = None,
                     units: Iterable[str] | None = None) -> tuple[list[str], list[str]]:
        """Compare the disk with `config` (or only the files `paths` and units `units`); with `repair`, rewrite
        what drifted and check it again, pass after pass.

        Returns (what was repaired, as `file P` / `unit U`; the mismatches left, naming each path).
        """
        cfg = config.spec.config or {}
        files, names, problems = self.drift.check(cfg, paths=paths, units=units)
        if not problems or not repair:
            return [], problems
        entries, unit_entries = files_of(cfg), units_of(cfg)
        repaired: dict[str, None] = {}
        for _ in range(REPAIR_PASSES):
            try:
                for path in files:
                    self.files.write(entries[path], managed_before=True)
                for name in names:
                    self.units.write_unit(unit_entries[name], managed_before=True)
                if names:
                    self.units.set_enablement(unit_entries[n] for n in names)
            except ApplyError as exc:
                return [], [*problems, f"repair failed: {exc}"]
            self.files.flush()
            self.drift.forget(files)
            repaired.update(dict.fromkeys([f"file {p}" for p in files] + [f"unit {u}" for u in names]))
            files, names, problems = self.drift.check(cfg, paths=files, units=names)
            if not problems:
                return list(repaired), []
        return [], problems

    def check_drift(self, current: RenderedConfig, *, repair: bool) -> SyncResult:
        """Files/units changed behind our back: restore them (repair) or report Degraded naming the path."""
        repaired, left = self._check_drift(current, repair=repair)
        if left:
            return self._result("Degraded", on_disk_message(current.name, left), current, current.name)
        if repaired:
            return self._result("Done", f"repaired drift: {', '.join(repaired)}", current, current.name,
                                changed=True)
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
        repaired, left = self._check_drift(current, repair=True, paths=paths, units=units)
        if not repaired and not left:
            return None
        if left:
            return self._result("Degraded", on_disk_message(current.name, left), current, current.name)
        return self._result("Done", f"repaired drift: {', '.join(repaired)}", current, current.name, changed=True)

    def _repair_note(self, config: RenderedConfig | None, repair: bool) -> tuple[str, str]:
        """An explicit repair of `config`'s drift, as text to append to a sync's message: (`; repaired drift:
        ...` or "", `; unexpected on-disk state ...` for what could not be repaired, or "")."""
        if not repair or config is None:
            return "", ""
        repaired, left = self._check_drift(config, repair=True)
        return (f"; repaired drift: {', '.join(repaired)}" if repaired else "",
                f"; {on_disk_message(config.name, left)}" if left else "")
