"""The agent's live-state part: what a settled node runs, beside what is on its disk (applier/live.py reads it).

Kernel arguments: a next boot without the config's is staged again (repair); a booted command line without them is
reported, and a reboot into the (re-)staged deployment puts it right (applier/drift_steps.py asks for one in a
rollout slot). FIPS mode cannot be put right here: it is reported. Units the config enables that are not running
(live systems) are started again, RESTART_BUDGET times per RESTART_WINDOW seconds each, then left naming the unit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from applier.backends.base import Backend
from applier.errors import ApplyError
from applier.live import CMDLINE, booted_kargs, fips_problems, next_boot_kargs, stopped_units
from applier.repairing import Repair
from applier.units import Systemctl
from fleet.clock import Clock, system_clock, timestamp
from fleet.diff import ConfigDiff, ListChange
from fleet.drift_events import DriftEvent
from fleet.rendered import MachineConfigSpec, RenderedConfig

RESTART_BUDGET = 3  # starts of one unit the agent makes per window before it leaves the node Degraded
RESTART_WINDOW = 600.0


@dataclass(eq=False)
class LiveRepair:
    """Checks (and puts right) the kernel arguments, FIPS mode and running units of the node under `root`."""

    root: Path
    backend: Backend
    systemctl: Systemctl
    clock: Clock = system_clock
    starts: dict[str, list[float]] = field(default_factory=dict)  # unit -> when it was started again (the budget)

    def _restage(self, spec: MachineConfigSpec) -> str:
        """Stage the booted deployment again with the config's kernel arguments; the new deployment's ID."""
        staged = self.backend.stage(ConfigDiff(kernel_arguments=ListChange((), spec.kernel_arguments)), spec, spec)
        return str(staged.get("id", ""))

    def check_boot(self, current: RenderedConfig, *, repair: bool) -> Repair:
        """Kernel arguments and FIPS (module docstring): what was put right (`live`), the mismatches left."""
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
        """Units the config enables that are not running: started again within the budget, else named."""
        repaired: list[str] = []
        left: list[str] = []
        events: list[DriftEvent] = []
        now, at = time.monotonic(), timestamp(self.clock())
        for name, state in stopped_units(self.systemctl, current.spec.config or {}).items():
            starts = [t for t in self.starts.get(name, []) if now - t < RESTART_WINDOW]
            if not repair or len(starts) >= RESTART_BUDGET:
                spent = f" after {len(starts)} starts in {RESTART_WINDOW:.0f} s" if starts else ""
                left.append(f'unit "{name}" is {state}{spent}')
                events.append(DriftEvent("service", name, "active", state, at, False))
                self.starts[name] = starts
                continue
            self.starts[name] = [*starts, now]
            try:
                self.systemctl.live_action("start", name)
            except ApplyError as exc:
                left.append(f'unit "{name}" is {state}: {exc}')
                events.append(DriftEvent("service", name, "active", state, at, False))
                continue
            repaired.append(f"unit {name} started (was {state})")
            events.append(DriftEvent("service", name, "active", state, at, True))
        return Repair([], [], left, tuple(repaired), tuple(events))

    def add(self, current: RenderedConfig, found: Repair, *, repair: bool) -> Repair:
        """`found` (the disk's check) with the live state's checks added."""
        boot, running = self.check_boot(current, repair=repair), self.check_running(current, repair=repair)
        return found._replace(left=found.left + boot.left + running.left, live=(*boot.live, *running.live),
                              events=(*found.events, *boot.events, *running.events), reboot=boot.reboot)
