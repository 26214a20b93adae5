"""The on-node agent: one `sync()` moves the node one step towards its desired config; `run()` loops.

Flow of a sync (MCO `pkg/daemon/daemon.go`, `update.go`):
  1. An update waiting for its reboot (pending, phase `rebooting`): applier/rebooting.py. In the same boot
     it waits (Working) or requests the reboot again; in a new boot it verifies the booted deployment and
     the disk against the pending config, then Done (currentconfig written, uncordon) or Degraded with the
     exact mismatch (optionally rolling back to the previous deployment).
  2. Fetch the desired config. Same as current -> drift check (repair or report).
  3. Otherwise update (applier/updating.py).
A kill at any point leaves pending (never a currentconfig ahead of the disk); the next sync redoes the update
idempotently. The parts: applier/agentbase.py (settings, reporting, shared steps), rebooting.py, updating.py.
"""

from __future__ import annotations

import shlex
import signal
import threading
import time
from pathlib import Path
from typing import Any

from applier.agentbase import AgentSettings, SyncResult, pool_of
from applier.drift import Watcher, watched_paths
from applier.errors import PermanentError, TemporaryError
from applier.rebooting import MAX_REBOOT_ATTEMPTS
from applier.updating import UpdateSteps
from applier.verify import on_disk_message
from fleet.rendered import RenderedConfig

__all__ = ["MAX_REBOOT_ATTEMPTS", "Agent", "AgentSettings", "SyncResult", "pool_of", "reboot_command_for_ostree"]


class Agent(UpdateSteps):
    """One node's applier (composition: settings, a desired-config source, a reporter, a backend, a runner)."""

    # --- drift ----------------------------------------------------------------------------------------------

    def check_drift(self, current: RenderedConfig, *, repair: bool) -> SyncResult:
        """Files/units changed behind our back: restore them (repair) or report Degraded naming the path."""
        repaired, left = self._check_drift(current, repair=repair)
        if left:
            return self._result("Degraded", on_disk_message(current.name, left), current, current.name)
        if repaired:
            return self._result("Done", f"repaired drift: {', '.join(repaired)}", current, current.name,
                                changed=True)
        return self._result("Done", "", current, current.name)

    # --- the sync and the loop ------------------------------------------------------------------------------

    def sync(self, *, repair: bool | None = None) -> SyncResult:
        """One step (module docstring). Raises TemporaryError when the desired config cannot be fetched.

        `repair`: True is `--once --repair` (drift repaired in every state where the config the disk should
        match is known), False reports drift; None follows `--drift`. After a verified reboot the same sync
        goes on to a newer desired config (`--once` ends with it applied or pending its reboot).
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
        desired = self.source.desired(self.settings.node, self._pool(current), current)
        if desired is None:
            if current is None:
                raise PermanentError("desired", "the server has no config for this node yet")
            desired = current
        failed = self.state.failed()
        if failed and failed.get("name") != desired.name:
            self.state.clear_failed()
        elif failed and current is not None and current.name != desired.name and pending is None:
            note, left = self._repair_note(current, explicit)
            return self._result("Degraded", str(failed.get("message", "")) + note + left, current, desired.name)
        if current is not None and desired.name == current.name and pending is None:
            return settled or self.check_drift(current, repair=fix)
        return self.update(current, desired, pending, repair=explicit)

    def stop(self, *_: Any) -> None:
        """Ask the loop to end after the current sync (SIGTERM does not interrupt an update)."""
        self._stop = True

    def run(self, *, max_syncs: int | None = None) -> SyncResult | None:
        """Sync every `interval` seconds (sooner when inotify sees a watched path change) until stopped."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.stop)  # an update in progress is finished, then the loop ends
        result: SyncResult | None = None
        count = 0
        delay = 1.0
        while not self._stop and (max_syncs is None or count < max_syncs):
            count += 1
            started = time.monotonic()
            try:
                result = self.sync()
                delay = 1.0
            except TemporaryError as exc:
                self.log(f"will retry: {exc}")
                time.sleep(min(delay, self.settings.interval))
                delay = min(delay * 2, 60.0)
                continue
            except PermanentError as exc:
                current = self.state.current()
                result = self._result("Degraded", str(exc), current, current.name if current else "")
            self.log(f"{result.state}: {result.message}")
            if self._stop or (max_syncs is not None and count >= max_syncs):
                break  # a requested reboot ends the process; if it does not come, a later sync asks again
            self._wait(started)
        return result

    def _wait(self, started: float) -> None:
        """Until the next sync, `interval` seconds after this one started (the server may have held its claim
        most of that time), cut short by a watched path changing or by a stop request."""
        current = self.state.current()
        watcher = Watcher(self.root, watched_paths(current.spec.config or {})) if current else None
        deadline = started + self.settings.interval
        try:
            while not self._stop and (remaining := deadline - time.monotonic()) > 0:
                step = min(remaining, 0.5)
                if watcher is not None and watcher.active:
                    if watcher.wait(step):
                        return
                else:
                    time.sleep(step)
        finally:
            if watcher is not None:
                watcher.close()


def reboot_command_for_ostree(sysroot: Path, python: str, root: Path) -> str:
    """The `--reboot-command` that simulates a reboot of a directory sysroot and node root (tests, demos)."""
    return (f"{shlex.quote(python)} -m applier.backends.ostree simulate-reboot {shlex.quote(str(sysroot))} "
            f"{shlex.quote(str(root))}")
