"""Which nodes are online, as this server process knows it: the `present` verdict of fleet/rollout_turn.py.

A node is present when, within its pool's `offline-grace` (fleet/rollout_settings.py): it asked this process for its
desired config, or a claim of it is held here now (server/handout_wait.py), or its last stored report is that
recent (reports reach every process through the store), or this process started that recently (a restarted server
has heard from nobody yet: it passes nobody over before the grace period has run out once). A node pulling its next
OS image with the server's permission (fleet/image_pulls.py, within the pull's lease) is present too: an agent is
silent while it pulls, and a pull may well last longer than the grace. A node that is none of
these is offline when its turn comes: the rollout passes it over.

Kept in memory: a node's claims are not written to the store (that would be a write per poll). With several server
processes or replicas behind one address, each publishes what it heard of the nodes waiting for a slot through the
store every few seconds (`exchange`, fleet/presence_digest.py), so a node holding its claim at one is online for
the others too, known there up to two exchange intervals late.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter
from datetime import datetime, timedelta

from fleet.clock import Clock, timestamp
from fleet.image_pulls import PULL_LEASE, holds_pull
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.rollout import NodeStatuses
from fleet.rollout_settings import MAX_OFFLINE_GRACE, OFFLINE_GRACE
from fleet.rollout_turn import Present, waiting
from fleet.store import NotFound, Store, StoreError

log = logging.getLogger("mco.server")
EXCHANGE_INTERVAL = 5.0  # seconds between two publications of this process's presence (and reads of the others')


class Presence:
    """The nodes this process heard from, when, and which are held now. Thread-safe."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.started = clock().timestamp()
        self._seen: dict[str, float] = {}
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._checkers: dict[tuple[int, int], Present] = {}
        self._remote: frozenset[str] = frozenset()  # what the live processes heard (`exchange`)
        self.published: frozenset[str] | None = None  # the names this process last published (`exchange_once`)

    def saw(self, node: str) -> None:
        """`node` asked now."""
        at = self.clock().timestamp()
        with self._lock:
            self._seen[node] = at

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

    def heard_elsewhere(self, nodes: frozenset[str]) -> None:
        """Take in what the live processes heard (`exchange`); verdicts made before it are dropped."""
        self._remote = nodes
        self._checkers = {}

    def digest(self) -> frozenset[str]:
        """What this process publishes: the nodes it holds a claim of or heard from within the default offline grace.
        Names only, so the digest changes only when that set does: for another process, a node in it is online
        (for a pool with a shorter grace, up to the default grace and an exchange longer than it would be here)."""
        now = self.clock().timestamp()
        self._forget(now - MAX_OFFLINE_GRACE)
        since = now - OFFLINE_GRACE
        with self._lock:
            nodes = {node for node, at in self._seen.items() if at >= since}
            nodes.update(self._held)
        return frozenset(nodes)

    def remembered(self) -> int:
        """How many nodes this process remembers hearing from (bounded by `digest`'s pruning)."""
        return len(self._seen)

    def _forget(self, before: float) -> None:
        """Drop the nodes last heard before `before`: no pool's grace reaches back that far (`offline-grace` is at
        most MAX_OFFLINE_GRACE), so no verdict reads them, and a fleet's churn, or names a client made up, would
        otherwise be kept for the process's life."""
        with self._lock:
            stale = [node for node, at in self._seen.items() if at < before]
            for node in stale:
                del self._seen[node]

    def _make(self, grace: int, now: datetime) -> Present:
        since = now.timestamp() - grace
        if self.started >= since:
            return lambda status: True
        reported_since = timestamp(now - timedelta(seconds=grace))
        lease_from = timestamp(now - timedelta(seconds=PULL_LEASE))
        seen, held, remote = self._seen, self._held, self._remote

        def present(status: NodeStatus) -> bool:
            name = status.name
            return (name in held or seen.get(name, 0.0) >= since or name in remote
                    or status.reported_at >= reported_since or holds_pull(status, lease_from))
        return present


def waiting_only(store: Store, nodes: frozenset[str]) -> frozenset[str]:
    """`nodes` narrowed to those waiting for their pool's target (fleet/rollout_turn.py `waiting`): the only ones
    whose presence the turn rule reads. A fleet between rollouts then publishes nothing, and one mid-rollout only
    the machines still to go."""
    records: dict[str, PoolRecord] = {}
    for pool in store.list_pools():
        try:
            records[pool] = store.get_pool(pool)
        except NotFound:
            continue  # removed meanwhile

    def read(statuses: NodeStatuses) -> frozenset[str]:
        out = set()
        for node in nodes:
            status = statuses.get(node)
            record = records.get(status.pool) if status is not None else None
            if record is not None and waiting(status, record):
                out.add(node)
        return frozenset(out)
    return store.read_statuses(read)


async def exchange_once(presence: Presence, store: Store, owner: str, interval: float = EXCHANGE_INTERVAL) -> None:
    """Publish this process's digest as `owner` (written when its names changed, else only kept alive, for three
    intervals: a process that died stops counting soon after) and take in every live process's. A store that fails
    is logged: the turn rule then reads this process's own presence and the stored reports."""
    try:
        nodes = presence.digest()
        if nodes:
            nodes = await asyncio.to_thread(waiting_only, store, nodes)
        changed = nodes != presence.published
        await asyncio.to_thread(store.publish_presence, owner, nodes if changed else None, 3 * interval)
        presence.published = nodes
        presence.heard_elsewhere(await asyncio.to_thread(store.read_presence))
    except StoreError as exc:
        log.warning("sharing which nodes are online failed: %s", exc)


async def exchange(presence: Presence, store: Store, owner: str, interval: float = EXCHANGE_INTERVAL) -> None:
    """`exchange_once` every `interval` seconds, until cancelled; a fault of ours is logged with its traceback and
    the exchange goes on (ended, the other processes would pass this one's waiting nodes over)."""
    while True:
        try:
            await exchange_once(presence, store, owner, interval)
        except Exception:
            log.exception("sharing which nodes are online failed")
        await asyncio.sleep(interval)
