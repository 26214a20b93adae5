"""The on-node agent: one `sync()` moves the node one step towards its desired config; `run()` loops.

Flow of a sync (MCO `pkg/daemon/daemon.go`, `update.go`):
  1. An update waiting for its reboot (pending, phase `rebooting`): applier/rebooting.py. In the same boot
     it waits (Working) or requests the reboot again; in a new boot it verifies the booted deployment and
     the disk against the pending config, then Done (currentconfig written, uncordon) or Degraded with the
     exact mismatch (optionally rolling back to the previous deployment).
  2. Fetch the desired config. Same as current -> drift check (repair or report).
  3. Otherwise update (applier/updating.py).
A kill at any point leaves pending (never a currentconfig ahead of the disk); the next sync redoes the update
idempotently. The parts: applier/agentbase.py (settings, reporting, shared steps), repairing.py, rebooting.py,
updating.py, drift_steps.py.

The loop (`run`): the desired config is asked for on a thread of its own (the server may hold a "stay" answer
for the whole interval), while the main thread watches the config's paths (applier/watch.py) and repairs what
changes at once (applier/repairing.py `check_changed`); then, until `interval` seconds after the sync started,
it goes on watching. All disk work stays on the main thread.
"""

from __future__ import annotations

import shlex
import signal
import threading
import time
from pathlib import Path
from typing import Any

from applier.agentbase import AgentSettings, SyncResult, pool_of
from applier.background import Background
from applier.drift import watch_map
from applier.drift_steps import DriftSteps
from applier.errors import PermanentError, TemporaryError
from applier.rebooting import MAX_REBOOT_ATTEMPTS
from applier.retry import Backoff
from applier.watch import Watcher
from fleet.rendered import RenderedConfig

__all__ = ["MAX_REBOOT_ATTEMPTS", "Agent", "AgentSettings", "SyncResult", "pool_of", "reboot_command_for_ostree"]


class Agent(DriftSteps):
    """One node's applier (composition: settings, a desired-config source, a reporter, a backend, a runner)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._watching: tuple[str, Watcher] | None = None  # the current config's name and the watch over it

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
            return self._result("Degraded", str(failed.get("message", "")) + note + left, current, desired.name)
        soak = self.state.soak()
        if soak is not None and (current is None or soak.get("name") != current.name):
            self.state.clear_soak()  # the node moved on (a revert, a newer target)
        elif soak is not None and current is not None and desired.name == current.name and pending is None:
            return self.soak_step(current)
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
                    result = self._result("Degraded", str(exc), current, current.name if current else "")
                self.log(f"{result.state}: {result.message}")
                if self._stop or (max_syncs is not None and count >= max_syncs):
                    break  # a requested reboot ends the process; if it does not come, a later sync asks again
                self._watch(self.state.current(), deadline=started + self.settings.interval)
        finally:
            self._close_watcher()
        return result

    # --- watching -------------------------------------------------------------------------------------------

    def _fetch(self, current: RenderedConfig | None, *, watch: bool) -> RenderedConfig | None:
        """The desired config; with `watch`, asked for on a thread while `current`'s drift is repaired here."""
        def ask() -> RenderedConfig | None:
            return self.source.desired(self.settings.node, self._pool(current), current)

        if not watch:
            return ask()
        poll = Background(ask)
        self._watch(current, poll=poll)
        if not poll.done:  # stopped while the server holds the answer: the thread is left to end with us
            raise TemporaryError("desired", "the agent is stopping")
        return poll.result()

    def _watch(self, current: RenderedConfig | None, *, deadline: float | None = None,
               poll: Background[Any] | None = None) -> None:
        """Repair `current`'s drift the watch sees, until `deadline` or until `poll` is over (or a stop request)."""
        step = 0.5  # a stop request (SIGTERM) is seen within this
        while not self._stop and not (poll is not None and poll.done):
            remaining = deadline - time.monotonic() if deadline is not None else step
            if remaining <= 0:
                return
            watcher = self._watcher(current)
            also = [poll.fileno()] if poll is not None else []
            if current is None or watcher is None or not watcher.active:
                if also:
                    Watcher.idle(min(remaining, step), also)
                else:
                    time.sleep(min(remaining, step))
                continue
            # a watch set up just now missed what changed before it: everything it covers is checked once
            changed = watcher.wait(min(remaining, step), also=also) if watcher.checked else watcher.paths
            watcher.checked = True
            if changed:
                result = self.check_changed(current, changed, repair=self.settings.drift == "repair")
                if result is not None:
                    self.log(f"{result.state}: {result.message}")

    def _watcher(self, current: RenderedConfig | None) -> Watcher | None:
        """The watch over `current`'s paths, set up again when the config changes or a directory moved."""
        held = self._watching
        if held is not None and current is not None and held[0] == current.name and not held[1].stale:
            return held[1]
        self._close_watcher()
        if current is None:
            return None
        watcher = Watcher(self.root, watch_map(self.root, current.spec.config or {}))
        self._watching = (current.name, watcher)
        return watcher

    def _close_watcher(self) -> None:
        if self._watching is not None:
            self._watching[1].close()
            self._watching = None


def reboot_command_for_ostree(sysroot: Path, python: str, root: Path) -> str:
    """The `--reboot-command` that simulates a reboot of a directory sysroot and node root (tests, demos)."""
    return (f"{shlex.quote(python)} -m applier.backends.ostree simulate-reboot {shlex.quote(str(sysroot))} "
            f"{shlex.quote(str(root))}")
