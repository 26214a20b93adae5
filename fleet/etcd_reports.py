"""Node records on etcd in groups: the reports (and other record writes) a replica stores at the same moment
go to etcd in one transaction (the group commit of fleet/etcd_groups.py).

Why: during a rollout every node reports twice per update (Working, Done); written one by one, each report cost
its own gRPC call, raft proposal and watch delivery, and a replica's CPU per node update was mostly that.

Rules of one record's write, as when it is alone: a record with a history (fleet.node_status.with_report) was
built on the node's record as this store saw it, which on a replica may lag a report another replica just stored;
so its write compares the node key's revision with the one seen, and when another write landed meanwhile, the
history is built again on the record found and written again: the report always lands and no entry of the
history is lost. A record that may newly count against maxUnavailable also moves its pool's hand-out fence
(fleet/etcd_store.py); one whose record, as compared, already counts in the same pool (handed out, then reporting
Working) changes no count and leaves the fence alone, so concurrent claims are not failed by it.

In a group: one transaction compares every record's revision and writes them all, with each pool's fence once;
when a compare fails, its failure branch reads every record, those that moved are built again on what was found,
and the group is written again. A group holds one record per node and at most GROUP_BYTES of records (etcd's
request limit); the others are written next, in turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from fleet.etcd_groups import Groups, Member
from fleet.node_status import NodeStatus, with_report
from fleet.rollout import is_unavailable
from fleet.store import StoreError, check_name
from ignition.canonical import canonical_json

if TYPE_CHECKING:
    from fleet.etcd_client import Connection

GROUP = 100               # records per transaction: a compare, a put and a get each, under etcd's 128 ops per branch
TXN_OPS = 127             # etcd's default --max-txn-ops (128) per branch, one kept for the store's own fence
LEADERS = 2               # groups in flight at once (each record compares only its own key: groups may overlap); a
# second keeps one group's round trip from holding up the next; more made the groups small (2.4 records each at 8,
# 7 at 2, in a 10,000-node rollout), and each group costs a transaction, a raft round on every etcd member and a
# watch response that every replica reads
GROUP_BYTES = 512 << 10   # record bytes per transaction, well below etcd's 1.5 MiB request limit
_Item = tuple[NodeStatus, "NodeStatus | None", "int | None"]  # a record, the one it was built on, that one's revision


class ReportingStore(Protocol):
    """What the report queue needs of the store that owns it (fleet/etcd_store.py `EtcdStore`)."""

    conn: Connection

    def key(self, *parts: str) -> bytes:
        """The full key of a layout path."""
        ...

    def _node_seen(self, name: str) -> tuple[NodeStatus | None, int]:
        """The node's record and its revision as this store sees them."""
        ...

    def _found_node(self, found: list[Any], name: str) -> tuple[NodeStatus | None, int]:
        """The node's record and its revision from a transaction's read of its key."""
        ...

    async def _txn_async(self, compare: list[Any], success: list[Any],
                         failure: Iterable[Any] = ()) -> tuple[bool, list[Any]]:
        """One transaction, fenced like every write of the store (on the connection's loop)."""
        ...


class _Write:
    """One record's write across the group's attempts: the record, and the one it was built on with its revision
    (`seen` None: a record without a history, written without a compare)."""

    def __init__(self, member: Member[_Item, None], store: ReportingStore) -> None:
        self.member = member
        self.status, self.known, self.seen = member.item
        self.key = store.key("state", "nodes", self.status.name)
        self.value = canonical_json(self.status.to_dict())

    def again(self, known: NodeStatus | None, seen: int) -> None:
        """Another write landed since: build the history again on it."""
        self.known, self.seen = known, seen
        self.status = with_report(known, self.status)
        self.value = canonical_json(self.status.to_dict())

    def moves_fence(self) -> bool:
        """Whether this record may newly count against its pool's maxUnavailable."""
        known = self.known
        counted = self.seen is not None and known is not None and known.pool == self.status.pool \
            and is_unavailable(known)
        return bool(self.status.pool) and is_unavailable(self.status) and not counted


class ReportGroups(Groups[_Item, None]):
    """The record-write queue of one EtcdStore (rules in the module docstring)."""

    def __init__(self, store: ReportingStore, attempts: int) -> None:
        super().__init__(GROUP, LEADERS)
        self.store = store
        self.attempts = attempts

    def item(self, status: NodeStatus) -> _Item:
        """What `submit` takes for `status`: the record it was built on is the one seen now, by its caller (not
        once the group runs, later)."""
        check_name("nodes", status.name)
        known, seen = self.store._node_seen(status.name) if status.history else (None, None)
        return status, known, seen

    async def _run(self, group: list[Member[_Item, None]]) -> None:
        writes = [_Write(member, self.store) for member in group]
        while writes:
            batch: list[_Write] = []
            later: list[_Write] = []
            names: set[str] = set()
            fenced: set[str] = set()  # pools whose fence the batch may move: one more put each
            size = 0
            for write in writes:
                pool = {write.status.pool} if write.status.pool and is_unavailable(write.status) else set()
                if write.status.name in names or (batch and (size + len(write.value) > GROUP_BYTES
                                                             or len(batch) + 1 + len(fenced | pool) > TXN_OPS)):
                    later.append(write)  # (a second record of a node: its compare fails, and it is built again)
                    continue
                batch.append(write)
                names.add(write.status.name)
                fenced |= pool
                size += len(write.value)
            await self._write(batch)
            writes = later

    async def _write(self, batch: list[_Write]) -> None:
        store = self.store
        tx = store.conn.client.transactions
        for _ in range(self.attempts):
            fences = {store.key("state", "rollout", check_name("pools", w.status.pool)): w.key
                      for w in batch if w.moves_fence()}
            ok, responses = await store._txn_async([tx.mod(w.key) == w.seen for w in batch if w.seen is not None],
                                                   [*(tx.put(w.key, w.value) for w in batch),
                                                    *(tx.put(fence, key) for fence, key in fences.items())],
                                                   [tx.get(w.key) for w in batch])
            if ok:
                for write in batch:
                    write.member.finish()
                return
            for write, found in zip(batch, responses, strict=True):
                known, seen = store._found_node(found, write.status.name)
                if write.seen is not None and seen != write.seen:
                    write.again(known, seen)
        for write in batch:
            write.member.finish(error=StoreError(f"nodes/{write.status.name}", "too many concurrent reports; try again"))
