"""The on-node agent: one `sync()` moves the node one step towards its desired config; `run()` loops.

Flow of a sync (MCO `pkg/daemon/daemon.go`, `update.go`):
  1. An update waiting for its reboot (pending, phase `rebooting`): applier/verifying.py. In the same boot
     it waits (Working) or requests the reboot again; in a new boot it verifies the booted deployment and
     the disk against the pending config, then Done (currentconfig written, uncordon) or Degraded with the
     exact mismatch (optionally rolling back to the previous deployment).
  2. Fetch the desired config. Same as current -> drift check (repair or report), or, when the server lets the
     node pull the next OS image before its slot, that (applier/prestage.py).
  3. Otherwise update (applier/updating.py).
A kill at any point leaves pending (never a currentconfig ahead of the disk); the next sync redoes the update
idempotently.

`Agent` only wires parts that each have one job and hold only what it needs (settings, state dir, source,
reporter, backend, runner, clock), so each can be built and tested alone:
  reporting.py  Reporting    every state report and the update phase it is in
  planning.py   Planner      the update's plan (policy, overrides, what is on disk); what a repair asks for
  writing.py    Writer       a plan put on disk, an old config put back, the update settled
  repairing.py  Repairer     the disk verified against a config, drift written back
  live_repair.py LiveRepair  kernel arguments, FIPS and running units checked (and put right)
  health.py     Health       the pool's health gate and soak after an update
  rebooting.py  Rebooter     a reboot requested and its command run; what to do while waiting for it
  verifying.py  AfterReboot  the new boot verified (or rolled back) and the update settled
  updating.py   Updater      the move to a new config
  drift_steps.py DriftSteps  drift of the settled node: checked, repaired, the policy's actions, a reboot slot
  watching.py   Watching     the desired config fetched while the node's paths are watched

The loop (`run`): the desired config is asked for while the node's paths are watched and what changes is
repaired at once (applier/watching.py); then, until `interval` seconds after the sync started, it goes on
watching. After a sync that staged the next OS image before its slot it claims again at once, held, so the slot is
taken as soon as it frees, with the image already there.
"""

from __future__ import annotations

import shlex
import signal
import threading
import time
from pathlib import Path
from typing import Any

from applier.backends.base import Backend
from applier.drift import DriftChecker
from applier.drift_steps import DriftSteps
from applier.errors import PermanentError, TemporaryError
from applier.fetch import DesiredSource
from applier.health import Health
from applier.live_repair import LiveRepair
from applier.planning import Planner
from applier.prestage import prestage
from applier.rebooting import MAX_REBOOT_ATTEMPTS, Rebooter
from applier.repairing import Repairer
from applier.report import Reporter
from applier.reporting import Reporting, pool_of
from applier.retry import Backoff
from applier.runner import CommandRunner
from applier.settings import AgentSettings, LogFn, SyncResult, no_log
from applier.state import StateDir
from applier.units import Systemctl
from applier.updating import Updater
from applier.verifying import AfterReboot
from applier.watching import Watching
from applier.writing import Writer
from fleet.clock import Clock, system_clock

__all__ = ["MAX_REBOOT_ATTEMPTS", "Agent", "AgentSettings", "SyncResult", "pool_of", "reboot_command_for_ostree"]


class Agent:
    """One node's applier: the parts (module docstring) over one settings, state dir, source, reporter, backend,
    runner and clock."""

    def __init__(self, settings: AgentSettings, *, source: DesiredSource, reporter: Reporter, backend: Backend,
                 runner: CommandRunner, log: LogFn | None = None, clock: Clock = system_clock) -> None:
        self.settings, self.source, self.reporter = settings, source, reporter
        self.backend, self.runner = backend, runner
        self.root, self.log, self.clock = Path(settings.root), log or no_log, clock
        self.state = StateDir(settings.state_path)
        self.systemctl = Systemctl(runner, self.root)
        self.stopping = threading.Event()
        root, state, node = self.root, self.state, settings.node
        checker = DriftChecker(root, self.systemctl)
        report = self.reporting = Reporting(node, settings.pool, root, state, reporter)
        write = self.writer = Writer(root, state, self.systemctl, checker, durable=settings.durable, log=self.log)
        plan = self.planner = Planner(settings, root, self.systemctl, backend)
        repair = self.repairer = Repairer(root, self.systemctl, checker, write.files, write.units, clock)
        self.live = LiveRepair(root, backend, self.systemctl, clock)
        health = self.health = Health(root, state, report, clock)
        reboot = self.rebooter = Rebooter(settings, root, state, self.systemctl, report, clock, self.log)
        self.after_reboot = AfterReboot(settings, state, backend, write, repair, reboot, health, report)
        self.updater = Updater(settings, state, backend, plan, write, repair, reboot, health, report)
        self.drift = DriftSteps(node, root, state, repair, self.live, plan, write, reboot, report,
                                reboot_slot=getattr(source, "reboot_slot", None))
        self.watching = Watching(node, root, source, backend, self.drift, report, repair=settings.drift == "repair",
                                 stopping=self.stopping, log=self.log)

    def sync(self, *, repair: bool | None = None, watch: bool = False) -> SyncResult:
        """One step (module docstring). Raises TemporaryError when the desired config cannot be fetched.

        `repair`: True is `--once --repair` (drift repaired in every state where the config the disk should
        match is known), False reports drift; None follows `--drift`. After a verified reboot the same sync
        goes on to a newer desired config (`--once` ends with it applied or pending its reboot). `watch`: drift
        of the current config is repaired while the desired config is asked for (the loop's way).
        """
        self.state.ensure()
        fix = self.settings.drift == "repair" if repair is None else repair
        explicit = repair is True
        current = self.state.current()
        pending = self.state.pending()
        settled: SyncResult | None = None
        if pending is not None and pending.phase == "rebooting":
            settled = self.after_reboot.check(current, pending, repair=fix, explicit=explicit)
            if settled.state != "Done" or settled.rebooting:
                return settled
            current, pending = self.state.current(), None
        desired = self.watching.fetch(current, watch=watch and pending is None and current is not None
                                      and not self.state.failed())
        if desired is None:
            if current is None:
                raise PermanentError("desired", "the server has no config for this node yet")
            desired = current
        failed = self.state.failed()
        if failed and failed.get("name") != desired.name:
            self.state.clear_failed()
        elif failed and current is not None and current.name != desired.name and pending is None:
            note, left = self.repairer.note(current, explicit)
            return self.reporting.result("Degraded", str(failed.get("message", "")) + note + left, current,
                                         desired.name)
        soak = self.state.soak()
        if soak is not None and (current is None or soak.get("name") != current.name):
            self.state.clear_soak()  # the node moved on (a revert, a newer target)
        elif soak is not None and current is not None and desired.name == current.name and pending is None:
            return self.health.soak_step(current)
        upcoming = getattr(self.source, "upcoming", None)  # the next OS image, to pull before the slot
        if upcoming is not None and current is not None and desired.name == current.name and pending is None:
            return prestage(self.backend, self.reporting, current, upcoming, log=self.log)
        if current is not None and desired.name == current.name and pending is None:
            return settled or self.drift.check_drift(current, repair=fix)
        return self.updater.update(current, desired, pending, repair=explicit)

    def sync_once(self, *, repair: bool | None = None) -> SyncResult:
        """`mco apply --once`: one sync; one that staged the next OS image before its slot (the server's `prefetch`)
        claims the slot at once and goes on, as the loop does (`run`), so one run still applies an update that
        changes the OS image when its slot is free."""
        result = self.sync(repair=repair)
        if result.staged and result.state == "Done" and result.current != result.staged:
            result = self.sync(repair=repair)
        return result

    def stop(self, *_: Any) -> None:
        """Ask the loop to end after the current sync (SIGTERM does not interrupt an update)."""
        self.stopping.set()

    def run(self, *, max_syncs: int | None = None) -> SyncResult | None:
        """Sync every `interval` seconds, repairing drift the watch sees at once in between, until stopped."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.stop)  # an update in progress is finished, then the loop ends
        result: SyncResult | None = None
        count = 0
        staged = ""  # the last config staged before its slot: claimed for again at once, once
        backoff = Backoff(min(1.0, self.settings.interval), min(60.0, self.settings.interval))
        try:
            while not self.stopping.is_set() and (max_syncs is None or count < max_syncs):
                count += 1
                started = time.monotonic()
                try:
                    result = self.sync(watch=True)
                    backoff.reset()
                except TemporaryError as exc:
                    if self.stopping.is_set():
                        break
                    self.log(f"will retry: {exc}")
                    time.sleep(backoff.wait_after(exc))
                    continue
                except PermanentError as exc:
                    current = self.state.current()
                    result = self.reporting.result("Degraded", str(exc), current, current.name if current else "")
                self.log(f"{result.state}: {result.message}")
                if self.stopping.is_set() or (max_syncs is not None and count >= max_syncs):
                    break  # a requested reboot ends the process; if it does not come, a later sync asks again
                if result.staged and result.staged != staged:
                    # staged before its slot: claim the slot now (the claim is held, so this is no poll) rather than
                    # an interval after the claim that let it pull, which ended as soon as the target moved
                    staged = result.staged
                    continue
                self.watching.watch(self.state.current(), deadline=started + self.settings.interval)
        finally:
            self.watching.close()
        return result


def reboot_command_for_ostree(sysroot: Path, python: str, root: Path) -> str:
    """The `--reboot-command` that simulates a reboot of a directory sysroot and node root (tests, demos)."""
    return (f"{shlex.quote(python)} -m applier.backends.ostree simulate-reboot {shlex.quote(str(sysroot))} "
            f"{shlex.quote(str(root))}")
