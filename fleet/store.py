"""The store: the seam between the renderer (writer) and the server, image builder and applier (readers).

`Store` is the protocol; `MemoryStore` keeps it in memory, `DirectoryStore` (fleet/directory_store.py) on
disk, `EtcdStore` (fleet/etcd_store.py) in etcd. A rendered config that a pool (current or history) or a
node (current or desired) still references is never deleted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable
from typing import Any, Protocol, TypeVar, runtime_checkable

from fleet.errors import PathError
from fleet.names import MAX_NAME, valid_name
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord, RenderedConfig
from fleet.rollout import NodeStatuses
from ignition.canonical import parse_json

T = TypeVar("T")



class StoreError(PathError):
    """A store operation failed; `path` names the object."""


def stored_object(raw: bytes, what: str) -> dict[str, Any]:
    """A stored record's bytes as the JSON object they hold (ignition/canonical.py `parse_json`, the json module's
    reading); StoreError naming `what` (never a path) when they hold none, however they are corrupt."""
    try:
        data = parse_json(raw)
    except (ValueError, RecursionError) as exc:
        raise StoreError(what, f"corrupt JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise StoreError(what, "corrupt: not an object")
    return data


class NotFound(StoreError):
    """The named object does not exist."""


class NotLeader(StoreError):
    """A fenced write found that this controller no longer holds the leadership; nothing was written."""


class InUse(StoreError):
    """The rendered config is still referenced and cannot be deleted."""



def check_name(kind: str, name: str) -> str:
    """Refuse names that are not Kubernetes DNS subdomain names (this also rules out path traversal)."""
    if not valid_name(name):
        text = name if isinstance(name, str) else repr(name)
        shown = text if len(text) <= 64 and text.isprintable() else repr(text[:64])
        raise StoreError(f"{kind}/{shown}", f"invalid name (a lowercase DNS subdomain name of at most "
                         f"{MAX_NAME} characters)")
    return name


class Store(Protocol):
    """What every store offers. Methods raise NotFound for missing objects and StoreError for I/O failures."""

    def put_rendered(self, rendered: RenderedConfig) -> None:
        """Store a rendered config; storing the same name again is a no-op (names are content hashes)."""
        ...

    def get_rendered(self, name: str) -> RenderedConfig:
        """Load a rendered config by name."""
        ...

    def list_rendered(self) -> list[str]:
        """Names of all stored rendered configs, sorted."""
        ...

    def delete_rendered(self, name: str) -> None:
        """Delete an unreferenced rendered config; raises InUse if any pool or node references it."""
        ...

    def put_pool(self, record: PoolRecord) -> None:
        """Replace a pool's record."""
        ...

    def get_pool(self, pool: str) -> PoolRecord:
        """Load a pool's record."""
        ...

    def update_pool(self, pool: str, change: Callable[[PoolRecord | None], PoolRecord | None]) -> PoolRecord | None:
        """Replace the pool's record by `change(record as stored now)` (None given: no record yet; None returned:
        write nothing), atomically with respect to every other `update_pool` of any process or replica: a record
        written meanwhile makes `change` run again on it. Returns what was written (None: nothing). For writes that
        build on what is there (a recorded pause, resume, revert, a render keeping the operator's state)."""
        ...

    def list_pools(self) -> list[str]:
        """Names of all pools with a record, sorted."""
        ...

    def put_node_status(self, status: NodeStatus) -> None:
        """Replace what a node last reported."""
        ...

    def get_node_status(self, node: str) -> NodeStatus:
        """What a node last reported."""
        ...

    def list_node_status(self) -> list[NodeStatus]:
        """Every node's last report, sorted by node name."""
        ...

    def read_statuses(self, read: Callable[[NodeStatuses], T]) -> T:
        """`read(statuses)` on every node's status as the store keeps it (each pool's counts current), writing
        nothing and taking no claim lock: what a claim would decide on, for an answer that writes nothing (a GET
        of the desired config, counting free slots). Costs what changed since the last read, not the fleet.
        `read` must be quick and must not keep what it is given."""
        ...

    def claim_node(self, node: str, decide: Callable[[NodeStatuses], NodeStatus | None]) -> NodeStatus | None:
        """Run `decide` on every node's status and store the status it returns (None: store nothing), atomically
        with respect to every other claim, across threads, processes and replicas sharing the store (the rollout
        hand-out: two nodes asking at once are counted against each other). `decide` may run more than once and
        must not keep the NodeStatuses it is given (it may be the store's own, with per-pool counts kept current)."""
        ...

    def publish_presence(self, owner: str, nodes: Collection[str] | None, ttl: float) -> None:
        """Keep server process `owner`'s presence digest (fleet/presence_digest.py) alive for `ttl` more seconds, and
        replace its names with `nodes` (None: keep the last ones, written again only if the store lost them)."""
        ...

    def read_presence(self) -> frozenset[str]:
        """The names in every process's digest still alive."""
        ...


@runtime_checkable
class ElectedStore(Store, Protocol):
    """A store an elected controller renders into (`mco controller`; `EtcdStore` is one): its writes can be fenced
    by the leadership, it publishes the controller's status, and it keeps content in blobs it can sweep."""

    def fenced(self, leader_key: bytes, won_revision: int) -> ElectedStore:
        """The same store whose every write also checks that the leadership is the one won at `won_revision`."""
        ...

    def put_controller_status(self, data: dict[str, Any]) -> None:
        """Publish the last render's outcome (replicas show its errors)."""
        ...

    def orphan_blobs(self) -> list[str]:
        """Blobs no rendered config names (left by an interrupted write)."""
        ...

    def delete_orphan_blobs(self, name: str) -> None:
        """Delete the blobs of `name` (an entry of `orphan_blobs`)."""
        ...


@runtime_checkable
class LoopWrites(Protocol):
    """A store whose node writes a caller on the store's own event loop awaits instead of blocking a thread for (an
    etcd replica's, whose connection runs on the server's loop: fleet/etcd_store.py). Its reads are then answered
    from memory (the mirror's), so the caller reads them on the loop too."""

    def writes_on_loop(self) -> bool:
        """Whether the caller runs on that loop and the store reads from memory."""
        ...

    async def put_node_status_async(self, status: NodeStatus) -> None:
        """`put_node_status`, awaited."""
        ...

    async def claim_node_async(self, node: str,
                               decide: Callable[[NodeStatuses], NodeStatus | None]) -> NodeStatus | None:
        """`claim_node`, awaited (`decide` runs on the loop: it must not call the store's blocking writes)."""
        ...


def references(records: Iterable[PoolRecord], statuses: Iterable[NodeStatus]) -> set[str]:
    """Rendered names that some pool (current or history, and each machine's config on its target) or node (current
    or desired) references."""
    names: set[str] = set()
    for record in records:
        names.update(record.targets)
        names.update(h.name for h in record.history)
    for status in statuses:
        names.update(n for n in (status.current_config, status.desired_config) if n)
    return names


def referenced_names(store: Store) -> set[str]:
    """Rendered names that some pool (current or history) or node (current or desired) references."""
    return references((store.get_pool(p) for p in store.list_pools()), store.list_node_status())


class MemoryStore:
    """A real in-memory store (tests, and `mco render --dry-run`)."""

    def __init__(self) -> None:
        self._rendered: dict[str, bytes] = {}
        self._pools: dict[str, PoolRecord] = {}
        self._nodes = NodeStatuses()
        self._presence: dict[str, frozenset[str]] = {}
        self._lock = threading.RLock()

    def put_rendered(self, rendered: RenderedConfig) -> None:
        check_name("rendered", rendered.name)
        with self._lock:
            self._rendered.setdefault(rendered.name, rendered.to_json_bytes())

    def get_rendered(self, name: str) -> RenderedConfig:
        try:
            raw = self._rendered[name]
        except KeyError:
            raise NotFound(f"rendered/{name}", "no such rendered config") from None
        return RenderedConfig.from_json_bytes(raw)

    def list_rendered(self) -> list[str]:
        return sorted(self._rendered)

    def delete_rendered(self, name: str) -> None:
        with self._lock:
            if name not in self._rendered:
                raise NotFound(f"rendered/{name}", "no such rendered config")
        if name in referenced_names(self):
            raise InUse(f"rendered/{name}", "still referenced by a pool or node")
        with self._lock:
            self._rendered.pop(name, None)

    def put_pool(self, record: PoolRecord) -> None:
        check_name("pools", record.name)
        with self._lock:
            self._pools[record.name] = record

    def get_pool(self, pool: str) -> PoolRecord:
        try:
            return self._pools[pool]
        except KeyError:
            raise NotFound(f"pools/{pool}", "no such pool") from None

    def update_pool(self, pool: str, change: Callable[[PoolRecord | None], PoolRecord | None]) -> PoolRecord | None:
        check_name("pools", pool)
        with self._lock:
            updated = change(self._pools.get(pool))
            if updated is not None:
                self.put_pool(updated)
            return updated

    def list_pools(self) -> list[str]:
        return sorted(self._pools)

    def put_node_status(self, status: NodeStatus) -> None:
        check_name("nodes", status.name)
        with self._lock:
            self._nodes.put(status)

    def get_node_status(self, node: str) -> NodeStatus:
        found = self._nodes.get(node)
        if found is None:
            raise NotFound(f"nodes/{node}", "no such node")
        return found

    def list_node_status(self) -> list[NodeStatus]:
        with self._lock:
            return self._nodes.ordered()

    def read_statuses(self, read: Callable[[NodeStatuses], T]) -> T:
        with self._lock:
            return read(self._nodes)

    def claim_node(self, node: str, decide: Callable[[NodeStatuses], NodeStatus | None]) -> NodeStatus | None:
        with self._lock:  # reentrant: `decide` may read the store
            handed = decide(self._nodes)
            if handed is not None:
                self._nodes.put(handed)
            return handed

    def publish_presence(self, owner: str, nodes: Collection[str] | None, ttl: float) -> None:
        check_name("presence", owner)
        if nodes is not None:
            with self._lock:
                self._presence[owner] = frozenset(nodes)  # (one process: always alive while it runs)

    def read_presence(self) -> frozenset[str]:
        with self._lock:
            return frozenset().union(*self._presence.values())

