"""Hand-outs on etcd in groups: the claims a replica makes at the same moment are decided together on
one view of the statuses and written in one compare-and-swap transaction (the group commit of
fleet/etcd_groups.py).

Why: every hand-out compares its pool's fence (fleet/etcd_store.py), so claims made one by one succeed one per
etcd round trip plus a watch delivery, and a replica waking a wave of held claims (server/handout_wait.py) lost
most of them to each other. As databases flush many commits with one log write ("group commit"), the first
claim starts a leader: it takes every claim queued meanwhile (up to GROUP), decides them in turn on the
statuses with each hand-out counted for the next (an `Overlay`, O(1) per decision), and writes every hand-out
with its pool's fence in one transaction that compares, as a single claim does, that no fence and none of those
nodes' records moved since the statuses' revision. No claim's outcome is final before that transaction succeeds
(a "stay" decided after a hand-out that was not written might have been a hand-out): on a lost compare it waits
for the watch and decides every claim again.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from fleet.etcd_groups import Groups, Member
from fleet.node_status import NodeStatus
from fleet.rollout import NodeStatuses, PoolCounts, is_unavailable
from fleet.store import StoreError, check_name
from ignition.canonical import canonical_json

if TYPE_CHECKING:
    from fleet.etcd_client import Connection
    from fleet.etcd_mirror import Mirror

T = TypeVar("T")

Decide = Callable[[NodeStatuses], "NodeStatus | None"]
_Outcome = tuple["Member[Decide, NodeStatus]", "NodeStatus | None", "Exception | None"]  # a claim, its hand-out, its refusal
GROUP = 50  # claims per transaction: 2 operations each plus the fences, under etcd's 128 (--max-txn-ops)


class Overlay(NodeStatuses):
    """`base` with the group's earlier hand-outs put over it, counts adjusted (`get` and `counts` O(1); listing
    every status merges the two, O(n)).

    Its caches (`memo`) read through to the base's and write to its own: its versions go on from the base's, so
    an entry the base checks by version holds for it only while it has nothing over the base, and one checked by
    the objects it was read from (a pool's rollout order, the turn rule's cursor, which hand-outs only move on)
    holds for it as for the base. So the group's first decision starts where the base's last one stopped, not
    with a scan of the pool from its first node (fleet/rollout_turn.py)."""

    def __init__(self, base: NodeStatuses) -> None:
        super().__init__()
        self._base = base
        self.version = base.version
        self.memo = ChainMap({}, base.memo)
        self._put_names: list[str] = []  # its own changes, after the base's version
        self._over: dict[str, NodeStatus] = {}
        self._delta: dict[str, PoolCounts] = {}

    def get(self, name: str) -> NodeStatus | None:
        found = self._over.get(name)
        return found if found is not None else self._base.get(name)

    def counts(self, pool: str) -> PoolCounts:
        base, delta = self._base.counts(pool), self._delta.get(pool)
        if delta is None:
            return base
        return PoolCounts(base.members + delta.members, base.unavailable + delta.unavailable)

    def failing(self, pool: str) -> Collection[str]:
        return self._base.failing(pool)

    def pulling(self, pool: str) -> Collection[str]:
        """The base's, and the nodes the group let pull (the counter reads each one's record: `get`)."""
        base = self._base.pulling(pool)
        own = [name for name, s in self._over.items() if s.pool == pool and s.pull_config and name not in base]
        return [*base, *own] if own else base

    def in_order(self, pool: str, *, newest_first: bool = False) -> list[NodeStatus]:
        return self._base.in_order(pool, newest_first=newest_first)

    def changed_since(self, version: int) -> list[str] | None:
        start = self.version - len(self._put_names)  # the base's version
        if version >= start:
            return self._put_names[version - start:] if version <= self.version else None
        below = self._base.changed_since(version)
        return None if below is None else below + self._put_names

    def put(self, status: NodeStatus) -> None:
        self.version += 1
        self._put_names.append(status.name)
        for old, step in ((self.get(status.name), -1), (status, 1)):
            if old is not None:
                delta = self._delta.setdefault(old.pool, PoolCounts())
                delta.members += step
                delta.unavailable += step if is_unavailable(old) else 0
        self._over[status.name] = status

    def ordered(self) -> list[NodeStatus]:
        merged = {s.name: s for s in self._base.ordered()}
        merged.update(self._over)
        return [merged[name] for name in sorted(merged)]

    def __len__(self) -> int:
        return len(self.ordered())


class ClaimingStore(Protocol):
    """What the claim queue needs of the store that owns it (fleet/etcd_store.py `EtcdStore`, which imports this
    module: the queue never imports the store)."""

    conn: Connection
    mirror: Mirror | None

    def key(self, *parts: str) -> bytes:
        """The full key of a layout path."""
        ...

    async def _decide_at_async(self, decide: Callable[[NodeStatuses], T]) -> tuple[int, T]:
        """(revision, decision) on the statuses as of one revision (on the connection's loop)."""
        ...

    async def _txn_async(self, compare: list[Any], success: list[Any],
                         failure: Iterable[Any] = ()) -> tuple[bool, list[Any]]:
        """One transaction, fenced like every write of the store (on the connection's loop)."""
        ...


class ClaimGroups(Groups[Decide, NodeStatus]):
    """The claim queue of one EtcdStore (rules in the module docstring)."""

    def __init__(self, store: ClaimingStore, attempts: int) -> None:
        super().__init__(GROUP)
        self.store = store
        self.attempts = attempts

    async def _run(self, group: list[Member[Decide, NodeStatus]]) -> None:
        group = [claim for claim in group if not claim.outcome.done()]  # (a caller gone past its deadline: no hand-out)
        store = self.store
        tx = store.conn.client.transactions
        outcomes: list[_Outcome] = []
        for _ in range(self.attempts):
            def decide_all(statuses: NodeStatuses) -> list[_Outcome]:
                view, outcomes = Overlay(statuses), list[_Outcome]()
                for claim in group:
                    try:
                        status = claim.item(view)
                    except Exception as exc:  # this claim's refusal (wrong pool, token...): the others go on
                        outcomes.append((claim, None, exc))
                        continue
                    if status is not None:
                        view.put(status)
                    outcomes.append((claim, status, None))
                return outcomes

            revision, outcomes = await store._decide_at_async(decide_all)
            handed = [status for _, status, _ in outcomes if status is not None]
            if handed:
                keys = [store.key("state", "nodes", check_name("nodes", h.name)) for h in handed]
                fences = {store.key("state", "rollout", check_name("pools", h.pool)): key  # (unpooled: no fence)
                          for h, key in zip(handed, keys, strict=True) if h.pool}
                compare = [tx.mod(k) < revision + 1 for k in [*fences, *keys]]
                writes = [tx.put(k, canonical_json(h.to_dict())) for h, k in zip(handed, keys, strict=True)]
                ok, responses = await store._txn_async(compare, [*writes, *(tx.put(f, k) for f, k in fences.items())],
                                                       [tx.get(k) for k in [*fences, *keys]])
                if not ok:  # every outcome was decided on a view that moved: decide them all again
                    newest = max((found[0][1].mod_revision for found in responses if found), default=0)
                    if store.mirror is not None and newest:
                        await store.mirror.applied(newest, timeout=2.0)
                    continue
            for claim, status, error in outcomes:
                claim.finish(status, error)
            return
        for claim, _, refusal in outcomes:  # the last decisions: a refusal stands, a hand-out was never written
            claim.finish(error=refusal or StoreError("nodes", "too many concurrent hand-outs; try again"))

