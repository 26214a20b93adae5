"""Which nodes are online, as this server process knows it: the `present` verdict of fleet/rollout_turn.py.

A node is present when, within its pool's `offline-grace` (fleet/rollout_settings.py): it asked this process for its
desired config, or a claim of it is held here now (server/handout_wait.py), or its last stored report is that
recent (reports reach every process through the store), or this process started that recently (a restarted server
has heard from nobody yet: it passes nobody over before the grace period has run out once). A node that is none of
these is offline when its turn comes: the rollout passes it over.

Kept in memory: a node's claims are not written to the store (that would be a write per poll). So with several
server processes or replicas behind one address, a node is known to the one it asks, and to the others through its
reports only.
"""

from __future__ import annotations

import threading
from collections import Counter
from datetime import datetime, timedelta

from fleet.clock import Clock, timestamp
from fleet.node_status import NodeStatus
from fleet.rollout_turn import Present


class Presence:
    """The nodes this process heard from, when, and which are held now. Thread-safe."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.started = clock().timestamp()
        self._seen: dict[str, float] = {}
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._checkers: dict[tuple[int, int], Present] = {}

    def saw(self, node: str) -> None:
        """`node` asked now."""
        self._seen[node] = self.clock().timestamp()

    def hold(self, node: str) -> None:
        """A claim of `node` is held now."""
        with self._lock:
            self._held[node] += 1

    def release(self, node: str) -> None:
        """A held claim of `node` was answered (it was heard from until now)."""
        self.saw(node)
        with self._lock:
            self._held[node] -= 1
            if self._held[node] <= 0:
                del self._held[node]

    def checker(self, grace: int, now: datetime) -> Present:
        """The verdict at `now` with a pool's grace period (seconds): the same object for every decision of one
        second (fleet/rollout_turn.py caches what it found with it)."""
        key = (grace, int(now.timestamp()))
        cached = self._checkers.get(key)
        if cached is None:
            if len(self._checkers) > 64:
                self._checkers.clear()
            cached = self._checkers[key] = self._make(grace, now)
        return cached

    def now_checker(self, grace: int) -> tuple[Present, datetime]:
        """(`checker` now, now): what the counts that wake held claims read the turn rule with."""
        now = self.clock()
        return self.checker(grace, now), now

    def _make(self, grace: int, now: datetime) -> Present:
        since = now.timestamp() - grace
        if self.started >= since:
            return lambda status: True
        reported_since = timestamp(now - timedelta(seconds=grace))
        seen, held = self._seen, self._held

        def present(status: NodeStatus) -> bool:
            return (status.name in held or seen.get(status.name, 0.0) >= since
                    or status.reported_at >= reported_since)
        return present
