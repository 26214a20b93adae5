"""The agent's fetching and watching part, between syncs: the desired config is asked for on a thread of its own
(the server may hold a "stay" answer for the whole interval), while the main thread watches the current config's
paths (applier/watch.py) and the backend's boot entries, and repairs what changes at once (applier/drift_steps.py).
All disk work stays on the main thread. A watch set up anew (a new config, a directory replaced) first checks
everything it covers, since what changed before it existed was not seen.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from applier.backends.base import Backend
from applier.background import Background
from applier.drift import watch_map
from applier.drift_steps import DriftSteps
from applier.errors import TemporaryError
from applier.fetch import DesiredSource
from applier.live import fips_watch
from applier.reporting import Reporting
from applier.settings import LogFn, no_log
from applier.watch import Watcher
from fleet.rendered import RenderedConfig

STEP = 0.5  # seconds: a stop request (SIGTERM) is seen within this


@dataclass(eq=False)
class Watching:
    """Fetches the desired config from `source` for `node`, watching for drift (repaired when `repair`) meanwhile,
    until `stopping` is set."""

    node: str
    root: Path
    source: DesiredSource
    backend: Backend
    drift: DriftSteps
    reporting: Reporting
    repair: bool = True
    stopping: threading.Event = field(default_factory=threading.Event)
    log: LogFn = no_log
    # the current config's name, the watch over its paths, the watch over the next boot's entries
    _watching: tuple[str, Watcher, Watcher] | None = None

    def fetch(self, current: RenderedConfig | None, *, watch: bool) -> RenderedConfig | None:
        """The desired config; with `watch`, asked for on a thread while `current`'s drift is repaired here."""
        def ask() -> RenderedConfig | None:
            return self.source.desired(self.node, self.reporting.pool(current), current)

        if not watch:
            return ask()
        poll = Background(ask)
        self.watch(current, poll=poll)
        if not poll.done:  # stopped while the server holds the answer: the thread is left to end with us
            raise TemporaryError("desired", "the agent is stopping")
        return poll.result()

    def watch(self, current: RenderedConfig | None, *, deadline: float | None = None,
              poll: Background[Any] | None = None) -> None:
        """Repair `current`'s drift the watch sees, until `deadline` or until `poll` is over (or a stop request)."""
        while not self.stopping.is_set() and not (poll is not None and poll.done):
            remaining = min(deadline - time.monotonic() if deadline is not None else STEP, STEP)
            if remaining <= 0:
                return
            also = [poll.fileno()] if poll is not None else []
            watchers = self._watchers(current)
            if current is None or watchers is None:
                Watcher.ready([], remaining, also)
                continue
            files, boot = watchers
            if not (files.checked and boot.checked):  # new watches: what changed before them was not seen
                changed, boot_changed = files.paths, boot.paths
                files.checked = boot.checked = True
            else:
                ready = Watcher.ready([files, boot], remaining, also)
                changed = files.read() if files in ready else set()
                boot_changed = boot.read() if boot in ready else set()
            results = [self.drift.check_changed(current, changed, repair=self.repair) if changed else None,
                       self.drift.check_next_boot(current, repair=self.repair) if boot_changed else None]
            for result in results:
                if result is not None:
                    self.log(f"{result.state}: {result.message}")

    def _watchers(self, current: RenderedConfig | None) -> tuple[Watcher, Watcher] | None:
        """The watches over `current`'s paths and the next boot's entries, set up again when the config changes
        or a directory on the way moved."""
        held = self._watching
        if held is not None and current is not None and held[0] == current.name \
                and not held[1].stale and not held[2].stale:
            return held[1], held[2]
        self.close()
        if current is None:
            return None
        top, entries = self.backend.boot_watch()
        files = Watcher(self.root, {**watch_map(self.root, current.spec.config or {}), **fips_watch(current.spec)})
        boot = Watcher(top, [f"/{p.relative_to(top)}" for p in entries])
        self._watching = (current.name, files, boot)
        return files, boot

    def close(self) -> None:
        """Stop watching (the loop is over)."""
        if self._watching is not None:
            self._watching[1].close()
            self._watching[2].close()
            self._watching = None
