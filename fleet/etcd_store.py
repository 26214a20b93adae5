"""The store on etcd: what `--store etcd://...` gives the controller and every replica.

Keys under `/<prefix>/v1/`:
    state/pools/<pool>          PoolRecord JSON (written by the elected controller only, fenced)
    state/nodes/<node>          NodeStatus JSON (what each node last reported, or was handed out; with its history)
    state/rollout/<pool>        the pool's hand-out fence: bumped by every write that may make a node unavailable
    state/rendered/<name>       a rendered config's manifest {"sha256", "size", "chunks"}; created once, never rewritten
    state/controller            the controller's own status (leader, last render, errors of the cluster directory)
    state/leader                the election key (attached to the leader's lease)
    blobs/<name>/<sha256>/<i>   the rendered config's bytes in chunks below etcd's request limit (1.5 MiB default)
    presence/<process>          which waiting nodes a server process heard from (fleet/presence_digest.py), on the
                                process's lease: not mirrored, read every few seconds

Rendered configs are written chunks first, manifest last (create-if-absent), so whoever sees the manifest finds
every chunk; the chunk path carries the bytes' hash, so chunks of two different writes never mix. Readers check
size and hash. Replicas mirror `state/` in memory (fleet/etcd_mirror.py) and read from there; the controller's
writes carry its leadership as a compare in the same transaction (`fenced`), so a deposed leader writes nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from aetcd import rpc

from fleet import presence_digest
from fleet.clock import system_clock, timestamp
from fleet.etcd_claims import ClaimGroups
from fleet.etcd_client import CALL_TIMEOUT, Connection, range_request
from fleet.etcd_reports import ReportGroups
from fleet.node_status import NodeStatus
from fleet.rendered import ModelError, PoolRecord, RenderedConfig
from fleet.rollout import NodeStatuses
from fleet.store import InUse, NotFound, NotLeader, StoreError, check_name, references, stored_object
from ignition.canonical import canonical_json

if TYPE_CHECKING:
    from fleet.etcd_mirror import Mirror

CHUNK = 1 << 20        # bytes per chunk: below the 1.5 MiB request limit with the transaction around it
T = TypeVar("T")
CLAIM_ATTEMPTS = 200   # lost compare-and-swap rounds before a hand-out gives up (answered 503, the node retries)
MAX_PRESENCE = CHUNK   # bytes of one presence digest (~50,000 names): etcd takes at most 1.5 MiB per request


def prefix_end(prefix: bytes) -> bytes:
    """The range end covering every key that starts with `prefix`."""
    return prefix[:-1] + bytes([prefix[-1] + 1])



class EtcdStore:
    """The Store protocol on etcd (layout in the module docstring). Thread-safe; every call blocks its caller, but
    the `_async` ones, which a replica's handlers await on the connection's loop (`writes_on_loop`)."""

    def __init__(self, conn: Connection, *, mirror: Mirror | None = None,
                 fence: tuple[bytes, int] | None = None) -> None:
        self.conn = conn
        self.mirror = mirror
        self._fence = fence
        self._claims = ClaimGroups(self, CLAIM_ATTEMPTS)
        self._reports = ReportGroups(self, CLAIM_ATTEMPTS)
        self._presence: dict[str, tuple[int, bytes]] = {}  # owner -> (its lease, the digest last put)

    def fenced(self, leader_key: bytes, won_revision: int) -> EtcdStore:
        """The same store whose every write also checks that `leader_key` is the one created at `won_revision`."""
        return EtcdStore(self.conn, mirror=self.mirror, fence=(leader_key, won_revision))

    # -- low-level calls (they run on the connection's loop) -----------------------------------------------
    def key(self, *parts: str) -> bytes:
        """The full key of a layout path."""
        return self.conn.key(*parts)

    def _range(self, start: bytes, end: bytes | None = None, *, serializable: bool = False,
               keys_only: bool = False) -> tuple[int, list[Any]]:
        """(revision, key-values) of a key or range, in key order."""
        return self.conn.call(lambda: self._range_async(start, end, serializable=serializable, keys_only=keys_only))

    async def _range_async(self, start: bytes, end: bytes | None = None, *, serializable: bool = False,
                           keys_only: bool = False) -> tuple[int, list[Any]]:
        """`_range` on the connection's loop."""
        request = rpc.RangeRequest(key=start, serializable=serializable, keys_only=keys_only)
        if end is not None:
            request.range_end = end
        response = await range_request(self.conn.client, request)
        return response.header.revision, list(response.kvs)

    def _txn(self, compare: list[Any], success: list[Any], failure: Iterable[Any] = ()) -> tuple[bool, list[Any]]:
        """One transaction; the fence (if any) is added to `compare`. Raises NotLeader when only the fence failed."""
        return self.conn.call(lambda: self._txn_async(compare, success, failure))

    async def _txn_async(self, compare: list[Any], success: list[Any],
                         failure: Iterable[Any] = ()) -> tuple[bool, list[Any]]:
        """`_txn` on the connection's loop."""
        client = self.conn.client
        tx = client.transactions
        checks = list(compare)
        if self._fence is not None:
            checks.append(tx.create(self._fence[0]) == self._fence[1])
            failure = [*failure, tx.get(self._fence[0])]
        ok, responses = await self.conn.guarded(lambda: client.transaction(checks, list(success), list(failure)))
        if not ok and self._fence is not None:
            holder = responses[-1]
            if not holder or holder[0][1].create_revision != self._fence[1]:
                raise NotLeader("controller", "this controller is no longer the leader")
            responses = responses[:-1]
        return ok, responses

    def _put(self, key: bytes, value: bytes) -> None:
        tx = self.conn.client.transactions
        self._txn([], [tx.put(key, value)])

    # -- rendered configs -----------------------------------------------------------------------------------
    def put_rendered(self, rendered: RenderedConfig) -> None:
        name = check_name("rendered", rendered.name)
        manifest_key = self.key("state", "rendered", name)
        if self._manifest(name, missing_ok=True) is not None:
            return
        data = rendered.to_json_bytes()
        digest = hashlib.sha256(data).hexdigest()
        tx = self.conn.client.transactions
        chunks = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)] or [b""]
        for i, chunk in enumerate(chunks):
            self._txn([], [tx.put(self.key("blobs", name, digest, f"{i:06d}"), chunk)])
        manifest = canonical_json({"sha256": digest, "size": len(data), "chunks": len(chunks)})
        self._txn([tx.create(manifest_key) == 0], [tx.put(manifest_key, manifest)])

    def _manifest(self, name: str, *, missing_ok: bool = False) -> dict[str, Any] | None:
        if self.mirror is not None and self.mirror.loaded:
            raw = self.mirror.raw(self.key("state", "rendered", name))
        else:
            _, kvs = self._range(self.key("state", "rendered", name))
            raw = kvs[0].value if kvs else None
        if raw is None:
            if missing_ok:
                return None
            raise NotFound(f"rendered/{name}", "no such rendered config")
        return stored_object(raw, f"rendered/{name}")

    def get_rendered(self, name: str) -> RenderedConfig:
        check_name("rendered", name)
        manifest = self._manifest(name)
        assert manifest is not None
        prefix = self.key("blobs", name, str(manifest.get("sha256")), "")
        try:
            _, kvs = self._range(prefix, prefix_end(prefix))
        except StoreError:  # no quorum: any member's copy will do, the hash below proves it whole
            _, kvs = self._range(prefix, prefix_end(prefix), serializable=True)
        data = b"".join(kv.value for kv in kvs)
        if (len(kvs) != manifest.get("chunks") or len(data) != manifest.get("size")
                or hashlib.sha256(data).hexdigest() != manifest.get("sha256")):
            raise StoreError(f"rendered/{name}", "stored chunks do not match the manifest")
        try:
            return RenderedConfig.from_json_bytes(data)
        except ModelError as exc:
            raise StoreError(f"rendered/{name}", f"corrupt: {exc}") from exc

    def list_rendered(self) -> list[str]:
        prefix = self.key("state", "rendered", "")
        if self.mirror is not None and self.mirror.loaded:
            return self.mirror.rendered_names()
        _, kvs = self._range(prefix, prefix_end(prefix), keys_only=True)
        return [kv.key[len(prefix):].decode() for kv in kvs]

    def delete_rendered(self, name: str) -> None:
        """Delete a rendered config in one transaction that also checks no pool or node changed since the
        references were counted (so a node handed this config meanwhile keeps it)."""
        check_name("rendered", name)
        state = self.key("state", "")
        revision, kvs = self._range(state, prefix_end(state))
        manifest_key = self.key("state", "rendered", name)
        manifest = next((kv.value for kv in kvs if kv.key == manifest_key), None)
        if manifest is None:
            raise NotFound(f"rendered/{name}", "no such rendered config")
        pools_at, nodes_at = self.key("state", "pools", ""), self.key("state", "nodes", "")
        records = [PoolRecord.from_dict(stored_object(kv.value, "pools")) for kv in kvs if kv.key.startswith(pools_at)]
        statuses = [NodeStatus.from_dict(stored_object(kv.value, "nodes")) for kv in kvs if kv.key.startswith(nodes_at)]
        if name in references(records, statuses):
            raise InUse(f"rendered/{name}", "still referenced by a pool or node")
        tx = self.conn.client.transactions
        pools, nodes = self.key("state", "pools", ""), self.key("state", "nodes", "")
        blobs = self.key("blobs", name, "")
        ok, _ = self._txn([tx.mod(pools, prefix_end(pools)) < revision + 1, tx.mod(nodes, prefix_end(nodes)) < revision + 1],
                          [tx.delete(manifest_key), tx.delete(blobs, prefix_end(blobs))])
        if not ok:
            raise InUse(f"rendered/{name}", "pools or nodes changed while deleting; not deleted")

    def orphan_blobs(self) -> list[str]:
        """Rendered names with chunks but no manifest (a leader that died between the two writes)."""
        blobs = self.key("blobs", "")
        _, kvs = self._range(blobs, prefix_end(blobs), keys_only=True)
        names = {kv.key[len(blobs):].split(b"/", 1)[0].decode() for kv in kvs}
        return sorted(names - set(self.list_rendered()))

    def delete_orphan_blobs(self, name: str) -> None:
        """Delete the chunks of a rendered config that has no manifest (fenced like every controller write)."""
        tx = self.conn.client.transactions
        blobs = self.key("blobs", check_name("rendered", name), "")
        self._txn([tx.version(self.key("state", "rendered", name)) == 0], [tx.delete(blobs, prefix_end(blobs))])

    # -- pools ----------------------------------------------------------------------------------------------
    def put_pool(self, record: PoolRecord) -> None:
        self._put(self.key("state", "pools", check_name("pools", record.name)), canonical_json(record.to_dict()))

    def update_pool(self, pool: str, change: Callable[[PoolRecord | None], PoolRecord | None]) -> PoolRecord | None:
        """A compare-and-swap on the pool's key (its revision as read, 0: none yet), fenced like every controller
        write; read again and `change` run again when another write landed meanwhile."""
        key = self.key("state", "pools", check_name("pools", pool))
        tx = self.conn.client.transactions
        for _ in range(CLAIM_ATTEMPTS):
            _, kvs = self._range(key)  # linearizable: never the mirror's copy, which may lag
            known = PoolRecord.from_dict(stored_object(kvs[0].value, f"pools/{pool}")) if kvs else None
            updated = change(known)
            if updated is None:
                return None
            ok, _ = self._txn([tx.mod(key) == (kvs[0].mod_revision if kvs else 0)],
                              [tx.put(key, canonical_json(updated.to_dict()))])
            if ok:
                return updated
        raise StoreError(f"pools/{pool}", "too many concurrent writes; try again")

    def get_pool(self, pool: str) -> PoolRecord:
        check_name("pools", pool)
        if self.mirror is not None and self.mirror.loaded:
            found = self.mirror.pool(pool)
            if found is None:
                raise NotFound(f"pools/{pool}", "no such pool")
            return found
        _, kvs = self._range(self.key("state", "pools", pool))
        if not kvs:
            raise NotFound(f"pools/{pool}", "no such pool")
        return PoolRecord.from_dict(stored_object(kvs[0].value, f"pools/{pool}"))

    def list_pools(self) -> list[str]:
        if self.mirror is not None and self.mirror.loaded:
            return self.mirror.pool_names()
        prefix = self.key("state", "pools", "")
        _, kvs = self._range(prefix, prefix_end(prefix), keys_only=True)
        return [kv.key[len(prefix):].decode() for kv in kvs]

    # -- nodes ----------------------------------------------------------------------------------------------
    def put_node_status(self, status: NodeStatus) -> None:
        """Store a record; one that may make the node unavailable also bumps its pool's hand-out fence. A record
        with a history is compared with the node's record it was built on and built again on a newer one (no
        history entry is lost). Records stored at the same moment are written together (fleet/etcd_reports.py)."""
        item = self._reports.item(status)
        self.conn.call(lambda: self._reports.submit(item))

    def writes_on_loop(self) -> bool:
        """Whether the caller's loop is the connection's and the mirror is loaded: then it awaits node writes
        (`put_node_status_async`, `claim_node_async`) and reads from memory, with no thread in between."""
        return self.conn.on_this_loop() and self.mirror is not None and self.mirror.loaded

    async def put_node_status_async(self, status: NodeStatus) -> None:
        """`put_node_status`, awaited on the connection's loop (`writes_on_loop`), within the same deadline."""
        await self._within_deadline(self._reports.enqueue(self._reports.item(status)))

    async def _within_deadline(self, write: asyncio.Future[T]) -> T:
        """The outcome of a queued write within `Connection.call`'s deadline, a StoreError past it (answered 503, as a
        blocking call's); the write is then cancelled (a claim not yet decided is not decided)."""
        try:
            async with asyncio.timeout(CALL_TIMEOUT):  # (not wait_for: Python 3.11's can swallow a cancel)
                return await write  # (on timeout the future is cancelled with the awaiting task)
        except TimeoutError:
            raise StoreError("etcd", "no answer from etcd in time") from None

    def _node_seen(self, name: str) -> tuple[NodeStatus | None, int]:
        """The node's record and its revision as this store sees them (the mirror's, or one range read)."""
        if self.mirror is not None and self.mirror.loaded:
            return self.mirror.node_at(name)
        _, kvs = self._range(self.key("state", "nodes", name))
        return (NodeStatus.from_dict(stored_object(kvs[0].value, f"nodes/{name}")), kvs[0].mod_revision) if kvs else (None, 0)

    def _found_node(self, found: list[Any], name: str) -> tuple[NodeStatus | None, int]:
        """The node's record and its revision from a transaction's read of its key ((None, 0): no record)."""
        return (NodeStatus.from_dict(stored_object(found[0][0], f"nodes/{name}")), found[0][1].mod_revision) if found \
            else (None, 0)

    def get_node_status(self, node: str) -> NodeStatus:
        check_name("nodes", node)
        if self.mirror is not None and self.mirror.loaded:
            found = self.mirror.node(node)
            if found is None:
                raise NotFound(f"nodes/{node}", "no such node")
            return found
        _, kvs = self._range(self.key("state", "nodes", node))
        if not kvs:
            raise NotFound(f"nodes/{node}", "no such node")
        return NodeStatus.from_dict(stored_object(kvs[0].value, f"nodes/{node}"))

    def list_node_status(self) -> list[NodeStatus]:
        if self.mirror is not None and self.mirror.loaded:
            return self.mirror.nodes()
        prefix = self.key("state", "nodes", "")
        _, kvs = self._range(prefix, prefix_end(prefix))
        return [NodeStatus.from_dict(stored_object(kv.value, "nodes")) for kv in kvs]

    def read_statuses(self, read: Callable[[NodeStatuses], T]) -> T:
        """`read` on the mirror's statuses (a replica), or on one range read."""
        if self.mirror is not None and self.mirror.loaded:
            return self.mirror.decide(read)[1]
        return read(NodeStatuses(self.list_node_status()))

    def claim_node(self, node: str, decide: Callable[[NodeStatuses], NodeStatus | None]) -> NodeStatus | None:
        """Run `decide` on every node's status and store the status it returns, as one compare-and-swap on the
        pool's hand-out fence and the node's record: if a write that may make a node unavailable, or a report of
        this node, landed after the statuses were read, nothing is stored and `decide` runs again on fresher
        statuses. So maxUnavailable holds across replicas and workers. Claims made at the same moment are decided
        and written together (fleet/etcd_claims.py). `decide` may run several times and must have no other effect."""
        check_name("nodes", node)
        return self.conn.call(lambda: self._claims.submit(decide))

    async def claim_node_async(self, node: str,
                               decide: Callable[[NodeStatuses], NodeStatus | None]) -> NodeStatus | None:
        """`claim_node`, awaited on the connection's loop (`writes_on_loop`)."""
        check_name("nodes", node)
        return await self._within_deadline(self._claims.enqueue(decide))

    async def _decide_at_async(self, decide: Callable[[NodeStatuses], T]) -> tuple[int, T]:
        """(revision, decision): on the mirror's statuses and pool counts (O(1) per decision), or on one range read,
        then decided in a worker thread (a decision may read the store, which blocks without a mirror)."""
        if self.mirror is not None and self.mirror.loaded:
            return self.mirror.decide(decide)
        prefix = self.key("state", "nodes", "")
        revision, kvs = await self._range_async(prefix, prefix_end(prefix))
        statuses = NodeStatuses(NodeStatus.from_dict(stored_object(kv.value, "nodes")) for kv in kvs)
        return revision, await asyncio.to_thread(decide, statuses)

    # -- the controller's status ---------------------------------------------------------------------------
    def publish_presence(self, owner: str, nodes: Collection[str] | None, ttl: float) -> None:
        """`presence/<owner>` on a lease of its own, put when its names change and renewed in between without a
        write (a revision per renewal would fill etcd's history), so etcd drops a dead process's digest."""
        key = self.key("presence", check_name("presence", owner))
        last = self._presence.get(owner)
        data = presence_digest.encode(nodes, ttl) if nodes is not None else last[1] if last else \
            presence_digest.encode((), ttl)
        if len(data) > MAX_PRESENCE:
            raise StoreError(f"presence/{owner}", f"a digest of {len(data)} bytes is more than etcd takes in one value")
        client = self.conn.client

        async def publish() -> int:
            lease = last[0] if last else None
            if lease is not None and nodes is None:
                reply = await client.refresh_lease(lease)
                if reply is not None and reply.TTL > 0:
                    return lease  # alive, names unchanged: nothing written
                lease = None  # expired while this process stalled: a new lease, the names put again
            if lease is None:
                lease = (await client.lease(max(int(ttl), 2))).id
            await client.put(key, data, lease=lease)
            return lease
        self._presence[owner] = (self.conn.call(publish), data)

    def read_presence(self) -> frozenset[str]:
        prefix = self.key("presence", "")
        _, kvs = self._range(prefix, prefix_end(prefix), serializable=True)
        return presence_digest.union(d[1] for kv in kvs if (d := presence_digest.decode(kv.value)) is not None)

    def put_controller_status(self, data: dict[str, Any]) -> None:
        """What the leader last did (shown by replicas under /pools `renderErrors`)."""
        self._put(self.key("state", "controller"), canonical_json({**data, "at": timestamp(system_clock())}))

