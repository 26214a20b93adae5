"""The agent's verifying part: the disk checked against a config, and what drifted written back and checked again.

A repair rewrites the drifted files and units (a unit's files only when they drifted: a unit found disabled is
enabled again and its unchanged files are left alone, so the repair sets off no watch events of its own) and
checks them again; a hand edit made while it ran is repaired in the next pass (up to REPAIR_PASSES), so only
drift that keeps coming back faster than it is repaired, or that cannot be written, leaves the node Degraded.
`--drift report` repairs nothing and names every path.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from applier.drift import DriftChecker, file_event, unit_event
from applier.errors import ApplyError
from applier.files import FileWriter
from applier.units import Systemctl, UnitWriter
from applier.verify import check_unit, on_disk_message
from fleet.clock import Clock, system_clock, timestamp
from fleet.diff import files_of, units_of
from fleet.drift_events import DriftEvent
from fleet.rendered import RenderedConfig

REPAIR_PASSES = 3


class Repair(NamedTuple):
    """What a drift check found: the files and units repaired, and the mismatches left (naming each path)."""

    files: list[str]
    units: list[str]
    left: list[str]
    live: tuple[str, ...] = ()  # live state put right (applier/live_repair.py), named
    events: tuple[DriftEvent, ...] = ()  # every drift found, as the fleet sees it
    reboot: str = ""  # a booted mismatch the next boot puts right: repaired through a reboot in a rollout slot

    @property
    def names(self) -> list[str]:
        """What was repaired, as `file P` / `unit U` / the live state's own name."""
        return [f"file {p}" for p in self.files] + [f"unit {u}" for u in self.units] + list(self.live)

    @property
    def found(self) -> bool:
        """Whether there was anything to tell: drift repaired, left, or a reboot to put it right."""
        return bool(self.left or self.names or self.reboot)

    def note(self) -> str:
        """`; repaired drift: ...` to append to a sync's message (or "")."""
        return f"; repaired drift: {', '.join(self.names)}" if self.names else ""


@dataclass(eq=False)
class Repairer:
    """Checks the disk under `root` against a config through `drift`, writing back through `files` and `units`."""

    root: Path
    systemctl: Systemctl
    drift: DriftChecker
    files: FileWriter
    units: UnitWriter
    clock: Clock = system_clock

    def check(self, config: RenderedConfig, *, repair: bool, paths: Iterable[str] | None = None,
              units: Iterable[str] | None = None) -> Repair:
        """Compare the disk with `config` (or only the files `paths` and units `units`); with `repair`, rewrite
        what drifted and check it again, pass after pass.

        Returns what was repaired and what is left (nothing is repaired unless all of it was).
        """
        cfg = config.spec.config or {}
        files, names, problems = self.drift.check(cfg, paths=paths, units=units)
        if not problems:
            return Repair([], [], [])
        entries, unit_entries = files_of(cfg), units_of(cfg)
        at = timestamp(self.clock())
        found: dict[tuple[str, str], DriftEvent] = {}  # each path and unit as first found (before any repair)

        def record() -> None:
            for path in files:
                found.setdefault(("file", path), file_event(self.root, entries[path], at=at, repaired=repair,
                                                            carry=not repair))
            for name in names:
                found.setdefault(("unit", name), unit_event(unit_entries[name], self.systemctl, at=at,
                                                            repaired=repair))

        record()
        if not repair:
            return Repair([], [], problems, events=tuple(found.values()))
        repaired_files: dict[str, None] = {}
        repaired_units: dict[str, None] = {}
        for _ in range(REPAIR_PASSES):
            try:
                for path in files:
                    self.files.write(entries[path], managed_before=True)
                for name in names:
                    unit = unit_entries[name]
                    if check_unit(self.root, unit, None) or unit.get("mask") is False:  # not only its links
                        self.units.write_unit(unit, managed_before=True)
                if names:
                    self.units.set_enablement(unit_entries[n] for n in names)
            except ApplyError as exc:
                return Repair([], [], [*problems, f"repair failed: {exc}"], events=_unrepaired(found))
            self.files.flush()
            self.drift.forget(files)
            repaired_files.update(dict.fromkeys(files))
            repaired_units.update(dict.fromkeys(names))
            files, names, problems = self.drift.check(cfg, paths=files, units=names)
            if not problems:
                return Repair(list(repaired_files), list(repaired_units), [], events=tuple(found.values()))
            record()
        return Repair([], [], problems, events=_unrepaired(found))

    def note(self, config: RenderedConfig | None, repair: bool) -> tuple[str, str]:
        """An explicit repair of `config`'s drift, as text to append to a sync's message: (`; repaired drift:
        ...` or "", `; unexpected on-disk state ...` for what could not be repaired, or "")."""
        if not repair or config is None:
            return "", ""
        found = self.check(config, repair=True)
        return found.note(), f"; {on_disk_message(config.name, found.left)}" if found.left else ""


def _unrepaired(found: dict[tuple[str, str], DriftEvent]) -> tuple[DriftEvent, ...]:
    """The events of a repair that did not succeed."""
    return tuple(replace(e, repaired=False) for e in found.values())
