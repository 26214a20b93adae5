"""The on-node agent: one `sync()` moves the node one step towards its desired config; `run()` loops.

Flow of a sync (MCO `pkg/daemon/daemon.go`, `update.go`):
  1. An update waiting for its reboot (pending, phase `rebooting`): applier/rebooting.py. In the same boot
     it waits (Working) or requests the reboot again; in a new boot it verifies the booted deployment and
     the disk against the pending config, then Done (currentconfig written, uncordon) or Degraded with the
     exact mismatch (optionally rolling back to the previous deployment).
  2. Fetch the desired config. Same as current -> drift check (repair or report), or, when the server lets the
     node pull the next OS image before its slot, that (applier/prestage.py).
  3. Otherwise update (applier/updating.py).
A kill at any point leaves pending (never a currentconfig ahead of the disk); the next sync redoes the update
idempotently. The parts: applier/agentbase.py (settings, reporting, shared steps), repairing.py, rebooting.py,
updating.py, drift_steps.py, watching.py.

The loop (`run`): the desired config is asked for while the node's paths are watched and what changes is
repaired at once (applier/watching.py); then, until `interval` seconds after the sync started, it goes on
watching.
"""

from __future__ import annotations

import shlex
import signal
import threading
import time
from pathlib import Path
from typing import Any

from applier.errors import PermanentError, TemporaryError
from applier.prestage import prestage
from applier.rebooting import MAX_REBOOT_ATTEMPTS
from applier.reporting import pool_of
from applier.retry import Backoff
from applier.settings import AgentSettings, SyncResult
from applier.watching import WatchSteps

__all__ = ["MAX_REBOOT_ATTEMPTS", "Agent", "AgentSettings", "SyncResult", "pool_of", "reboot_command_for_ostree"]


class Agent(WatchSteps):
    """One node's applier (composition: settings, a desired-config source, a reporter, a backend, a runner)."""

    # --- the sync and the loop ------------------------------------------------------------------------------

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
            settled = self.after_reboot(current, pending, repair=fix, explicit=explicit)
            if settled.state != "Done" or settled.rebooting:
                return settled
            current, pending = self.state.current(), None
        desired = self._fetch(current, watch=watch and pending is None and current is not None
                              and not self.state.failed())
        if desired is None:
            if current is None:
                raise PermanentError("desired", "the server has no config for this node yet")
            desired = current
        failed = self.state.failed()
        if failed and failed.get("name") != desired.name:
            self.state.clear_failed()
        elif failed and current is not None and current.name != desired.name and pending is None:
            note, left = self._repair_note(current, explicit)
            return self.reporting.result("Degraded", str(failed.get("message", "")) + note + left, current, desired.name)
        soak = self.state.soak()
        if soak is not None and (current is None or soak.get("name") != current.name):
            self.state.clear_soak()  # the node moved on (a revert, a newer target)
        elif soak is not None and current is not None and desired.name == current.name and pending is None:
            return self.soak_step(current)
        upcoming = getattr(self.source, "upcoming", None)  # the next OS image, to pull before the slot
        if upcoming is not None and current is not None and desired.name == current.name and pending is None:
            return prestage(self, current, upcoming)
        if current is not None and desired.name == current.name and pending is None:
            return settled or self.check_drift(current, repair=fix)
        return self.update(current, desired, pending, repair=explicit)

    def stop(self, *_: Any) -> None:
        """Ask the loop to end after the current sync (SIGTERM does not interrupt an update)."""
        self._stop = True

    def run(self, *, max_syncs: int | None = None) -> SyncResult | None:
        """Sync every `interval` seconds, repairing drift the watch sees at once in between, until stopped."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.stop)  # an update in progress is finished, then the loop ends
        result: SyncResult | None = None
        count = 0
        backoff = Backoff(min(1.0, self.settings.interval), min(60.0, self.settings.interval))
        try:
            while not self._stop and (max_syncs is None or count < max_syncs):
                count += 1
                started = time.monotonic()
                try:
                    result = self.sync(watch=True)
                    backoff.reset()
                except TemporaryError as exc:
                    if self._stop:
                        break
                    self.log(f"will retry: {exc}")
                    time.sleep(backoff.wait_after(exc))
                    continue
                except PermanentError as exc:
                    current = self.state.current()
                    result = self.reporting.result("Degraded", str(exc), current, current.name if current else "")
                self.log(f"{result.state}: {result.message}")
                if self._stop or (max_syncs is not None and count >= max_syncs):
                    break  # a requested reboot ends the process; if it does not come, a later sync asks again
                self._watch(self.state.current(), deadline=started + self.settings.interval)
        finally:
            self._close_watchers()
        return result


def reboot_command_for_ostree(sysroot: Path, python: str, root: Path) -> str:
    """The `--reboot-command` that simulates a reboot of a directory sysroot and node root (tests, demos)."""
    return (f"{shlex.quote(python)} -m applier.backends.ostree simulate-reboot {shlex.quote(str(sysroot))} "
            f"{shlex.quote(str(root))}")
