"""Everything under `state/` in memory, kept current by an etcd watch: what a stateless replica serves from.

It starts from one consistent (linearizable) range read at revision R, then watches from R + 1. A watch that
dies (its member was killed, the channel reconnected) is re-created from the last applied revision + 1; one
cancelled because that revision was compacted away re-lists the whole prefix and watches again. A probe every
second reads the newest revision under `state/`, so `health()` can say whether the mirror is current and how
far behind it is; when etcd answers but the watch delivers nothing new for a while, the watch is re-created.
While etcd is unreachable (no quorum) the mirror keeps the last state: replicas go on serving it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import aetcd
from aetcd import rpc

from fleet.etcd_client import Connection, range_request
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.rollout import NodeStatuses
from ignition.canonical import parse_json

log = logging.getLogger("mco.etcd")
T = TypeVar("T")

PROBE_INTERVAL = 1.0   # seconds between checks of etcd's newest revision under state/
STALE_AFTER = 3.0      # without an answer from etcd for this long, the mirror no longer claims to be current
STUCK_AFTER = 5.0      # etcd answers, has newer revisions, and the watch delivered nothing: re-create it


@dataclass(frozen=True)
class Health:
    """Whether the mirror is current, the revision it has applied, etcd's newest, and the last contact."""

    current: bool
    revision: int
    latest: int
    seconds_since_contact: float
    relists: int

    @property
    def behind(self) -> int:
        """Revisions under state/ not applied yet (0 when current)."""
        return max(self.latest - self.revision, 0)

    def text(self) -> str:
        """One line for /healthz."""
        if self.current:
            return f"current at etcd revision {self.revision}"
        return (f"behind: {self.behind} revisions (applied {self.revision}, etcd has {self.latest}); "
                f"etcd last answered {self.seconds_since_contact:.1f} s ago")


def _decode(raw: bytes) -> Any:
    try:
        return parse_json(raw)
    except (ValueError, RecursionError):
        return None


class Mirror:
    """The `state/` keys of one etcd prefix, decoded, plus the revision they are current at."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.prefix = conn.key("state", "")
        self._end = self.prefix[:-1] + bytes([self.prefix[-1] + 1])
        self._pools_at = conn.key("state", "pools", "")
        self._nodes_at = conn.key("state", "nodes", "")
        self._rendered_at = conn.key("state", "rendered", "")
        self._fences_at = conn.key("state", "rollout", "")
        self._lock = threading.Condition()
        self._raw: dict[bytes, bytes] = {}
        self._pools: dict[str, PoolRecord] = {}
        self._nodes = NodeStatuses()  # with each pool's rollout counts, kept current by the watch
        self._rendered: set[str] = set()  # rendered config names (a listing without a scan of every key)
        self._node_revisions: dict[str, int] = {}  # each node key's mod revision (the compare of a report's write)
        self.revision = 0
        self.shared_version = 0  # counts changes of what is served (pools, configs, controller): not node statuses,
        # nor the pools' hand-out fences (fleet/etcd_store.py), which every hand-out of a rollout moves
        self.loaded = False
        self.relists = 0
        self._latest = 0
        self._contact = 0.0
        self._progress = time.monotonic()
        self._watch: Any = None
        self._listeners: list[Callable[[], None]] = []
        self._tasks: list[Any] = []
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []  # `applied` on the loop: (revision, its future)

    # -- reading (any thread) -------------------------------------------------------------------------------
    def raw(self, key: bytes) -> bytes | None:
        """A key's current value."""
        with self._lock:
            return self._raw.get(key)

    def pool(self, name: str) -> PoolRecord | None:
        """A pool's record."""
        with self._lock:
            return self._pools.get(name)

    def pool_names(self) -> list[str]:
        """Every pool, sorted."""
        with self._lock:
            return sorted(self._pools)

    def rendered_names(self) -> list[str]:
        """Every rendered config's name, sorted."""
        with self._lock:
            return sorted(self._rendered)

    def node(self, name: str) -> NodeStatus | None:
        """A node's status."""
        with self._lock:
            return self._nodes.get(name)

    def nodes(self) -> list[NodeStatus]:
        """Every node's status, sorted by name (the list is shared: do not modify it)."""
        with self._lock:
            return self._nodes.ordered()

    def node_at(self, name: str) -> tuple[NodeStatus | None, int]:
        """The node's record and the revision that last changed it ((None, 0): no record), read together."""
        with self._lock:
            return self._nodes.get(name), self._node_revisions.get(name, 0)

    def decide(self, fn: Callable[[NodeStatuses], T]) -> tuple[int, T]:
        """(applied revision, `fn(statuses)`), with no change applied meanwhile (`fn` must be quick and must not
        call etcd: it holds the watch up). The statuses are those of the revision returned (applied and published together)."""
        with self._lock:
            return self.revision, fn(self._nodes)

    def controller(self) -> dict[str, Any]:
        """The controller's last published status ({} before any)."""
        raw = self.raw(self.conn.key("state", "controller"))
        data = _decode(raw) if raw is not None else None
        return data if isinstance(data, dict) else {}

    async def applied(self, revision: int, *, timeout: float) -> bool:
        """Wait until the mirror has applied `revision` (False on timeout), on the connection's loop, which applies
        the watch: awaited, never blocking it."""
        if self.revision >= revision:
            return True
        entry = (revision, asyncio.get_running_loop().create_future())
        self._waiters.append(entry)
        try:
            async with asyncio.timeout(timeout):  # (not wait_for: Python 3.11's can swallow a cancel)
                await entry[1]
            return True
        except TimeoutError:
            return False
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)

    def health(self) -> Health:
        """Current or how far behind (see the module docstring)."""
        with self._lock:
            since = time.monotonic() - self._contact if self._contact else float("inf")
            current = self.loaded and since < STALE_AFTER and self.revision >= self._latest
            return Health(current, self.revision, self._latest, since, self.relists)

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener` (on the etcd thread; keep it short) after each applied batch of changes."""
        self._listeners.append(listener)

    # -- feeding (the etcd loop) ----------------------------------------------------------------------------
    def start(self) -> None:
        """The first consistent read (raises StoreError when etcd cannot answer), then the watch and probe."""
        self.conn.call(self._load)
        self._tasks = [self.conn.spawn(self._follow()), self.conn.spawn(self._probe())]

    async def start_async(self) -> None:
        """`start`, awaited on the connection's loop when that is the caller's own (a replica's)."""
        await self.conn.guarded(self._load)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._follow()), loop.create_task(self._probe())]

    def stop(self) -> None:
        """Stop the watch and the probe."""
        if self.conn.loop.is_closed():
            return  # (the caller's loop ended: its tasks went with it)
        for task in self._tasks:
            self.conn.loop.call_soon_threadsafe(task.cancel)

    def _set(self, key: bytes, value: bytes | None, revision: int) -> None:
        if value is None:
            self._raw.pop(key, None)
        else:
            self._raw[key] = value
        if key.startswith(self._pools_at):
            name = key[len(self._pools_at):].decode()
            data = _decode(value) if value is not None else None
            if isinstance(data, dict):
                self._pools[name] = PoolRecord.from_dict(data)
            else:
                self._pools.pop(name, None)
        elif key.startswith(self._nodes_at):
            name = key[len(self._nodes_at):].decode()
            data = _decode(value) if value is not None else None
            if isinstance(data, dict):
                self._nodes.put(NodeStatus.from_dict(data))
                self._node_revisions[name] = revision
            else:
                self._nodes.remove(name)
                self._node_revisions.pop(name, None)
            return
        elif key.startswith(self._fences_at):
            return
        elif key.startswith(self._rendered_at):
            name = key[len(self._rendered_at):].decode()
            if value is None:
                self._rendered.discard(name)
            else:
                self._rendered.add(name)
        self.shared_version += 1

    async def _load(self) -> None:
        client = self.conn.client
        response = await range_request(client, rpc.RangeRequest(key=self.prefix, range_end=self._end))
        with self._lock:
            self._raw, self._pools, self._nodes, self._node_revisions = {}, {}, NodeStatuses(), {}
            self._rendered = set()
            for kv in response.kvs:
                self._set(kv.key, kv.value, kv.mod_revision)
            self.revision = max(self.revision, response.header.revision)
            self._latest = max(self._latest, self.revision)
            self._contact = self._progress = time.monotonic()
            self.loaded = True
            self._lock.notify_all()
        self._wake_waiters()
        self._notify()

    def _notify(self) -> None:
        for listener in self._listeners:
            try:
                listener()
            except Exception:  # a listener's bug must not stop the feed
                log.exception("mirror listener failed")

    def _apply(self, events: Any) -> None:
        """Apply one watch response's events together, then publish its revision: etcd sends a revision's events
        in one response (unfragmented), so a published revision is whole."""
        with self._lock:
            for event in events:
                kv = event.kv
                self._set(kv.key, None if event.type == rpc.Event.DELETE else kv.value, kv.mod_revision)
            self.revision = max(self.revision, events[-1].kv.mod_revision)
            self._latest = max(self._latest, self.revision)
            self._contact = self._progress = time.monotonic()
            self._lock.notify_all()
        self._wake_waiters()
        self._notify()

    def _wake_waiters(self) -> None:
        """Answer the `applied` waits the revision now applied reaches (on the loop, after each applied batch)."""
        if not self._waiters:
            return
        reached = [w for w in self._waiters if w[0] <= self.revision]
        for entry in reached:
            self._waiters.remove(entry)
            if not entry[1].done():
                entry[1].set_result(None)

    async def _stream(self) -> None:
        """One watch stream from the applied revision + 1, read response by response (etcd's gRPC stream itself,
        not aetcd's per-event callbacks and queue: a replica applies every write of the fleet, three per node
        update, so their cost per event is paid by every replica)."""
        client = self.conn.client
        await client.connect()
        create = rpc.WatchRequest(create_request=rpc.WatchCreateRequest(
            key=self.prefix, range_end=self._end, start_revision=self.revision + 1))
        ended = asyncio.Event()

        async def requests() -> Any:
            yield create
            await ended.wait()  # the sending side stays open while the stream lasts

        call = rpc.WatchStub(client.channel).Watch(requests(), metadata=client.metadata)
        self._watch = call
        try:
            async for response in call:
                if response.compact_revision:
                    raise aetcd.RevisionCompactedError(response.compact_revision)
                if response.canceled:
                    raise RuntimeError(f"etcd cancelled the watch: {response.cancel_reason or 'no reason given'}")
                if response.events:
                    self._apply(response.events)
        finally:
            self._watch = None
            ended.set()
            call.cancel()

    async def _follow(self) -> None:
        while True:
            try:
                await self._stream()
                raise RuntimeError("the watch stream ended")
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # stopped (`stop`); otherwise the probe cancelled a stuck stream: watch again
            except aetcd.RevisionCompactedError:
                log.warning("watch revision %d was compacted; listing state/ again", self.revision + 1)
                await self._relist()
            except Exception as exc:  # the member died or the channel reconnects: watch again from here
                log.info("etcd watch ended (%s); watching again from revision %d", exc, self.revision + 1)
                await asyncio.sleep(0.2)

    async def _relist(self) -> None:
        while True:
            try:
                await self._load()
                self.relists += 1
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # etcd away: the mirror keeps its last state (stale on /healthz) and retries
                log.info("listing state/ again failed (%s); retrying", exc)
                await asyncio.sleep(0.5)

    async def _probe(self) -> None:
        client = self.conn.client
        probe_failing = False
        while True:
            await asyncio.sleep(PROBE_INTERVAL)
            request = rpc.RangeRequest(key=self.prefix, range_end=self._end, limit=1, keys_only=True,
                                       sort_order=rpc.RangeRequest.DESCEND, sort_target=rpc.RangeRequest.MOD)
            try:
                response = await range_request(client, request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # etcd away: no contact recorded, so /healthz shows the mirror stale
                if not probe_failing:
                    log.warning("etcd does not answer the mirror's probe (%s)", exc)
                probe_failing = True
                continue
            if probe_failing:
                log.warning("etcd answers the mirror's probe again")
                probe_failing = False
            latest = response.kvs[0].mod_revision if response.kvs else 0
            now = time.monotonic()
            with self._lock:
                self._latest = latest
                self._contact = now
                stuck = latest > self.revision and now - self._progress > STUCK_AFTER
            if stuck and self._watch is not None:
                log.warning("etcd has revision %d, the watch stopped at %d: watching again", latest, self.revision)
                self._progress = now
                self._watch.cancel()
