"""Whose turn it is: a pool's free slots go to its waiting nodes in the rollout order, not to whoever asks first,
and a node that is offline when its turn comes is passed over once the pool's grace period has run out. Pure: the
caller says which nodes are present.

Why: the MCO's node controller picks the nodes to update itself (`getCandidateMachines` over `sortNodeList`, MCO
`pkg/controller/node/node_controller.go`); here the nodes ask, so without this rule a node that polls often (or
first) gets a freed slot ahead of one that comes before it in the order. The server applies it to every claim as
it arrives, and wakes a held claim (server/handout_wait.py) only once this rule says its turn has come.

- **Waiting**: a node of the pool neither at its target nor handed it (its desiredConfig is not the target).
- **Present**: the caller's verdict (the server: the node asked or reported within the pool's `offline-grace`, or
  a claim of it is held now). A waiting node that is not present is offline: it is passed over.
- With `free` slots open, the nodes whose turn it is are the first `free` present waiting nodes in the order
  (fleet/rollout.py `rollout_rank`: nodes going back from a reverted config first; while the canary wave holds
  the rest of the pool, only the canaries). A node is handed the target only if it comes no later than the last
  of them: one that was offline and asks again comes before it, so it takes its place back.
- **Skipped** (`skipped`): waiting nodes that come before a node already handed the target, the canaries aside;
  `GET /pools` and `/metrics` count them.

Cost: the order is sorted once per membership change (`NodeStatuses.in_order`). Which of its nodes are in line
(waiting, present) is kept as a flag per place with a Fenwick tree over the flags, per pool and target, brought
up to date from the nodes changed since (`NodeStatuses.changed_since`) and built again, O(pool), when the order
or the `present` verdict is another one (the server's is the same object for a second). From a cursor past the
nodes already moved or passed over, the last node whose turn it is is then found in O(log pool): every claim and
every count of the free slots (after each change a replica's mirror applies) costs that, not a scan of up to
`free` nodes (a replica whose first held node's turn had not come scanned the whole of a wave's free slots on
every change)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord

if TYPE_CHECKING:  # fleet/rollout.py calls `turn_places`; its NodeStatuses is only named here
    from fleet.rollout import NodeStatuses

Present = Callable[[NodeStatus], bool]  # one verdict's answers only ever turn from absent to present (a node
# that asks is present at once; one goes offline only as time passes, with a new verdict: the server's, one a second)
Need = Callable[[NodeStatus | None, PoolRecord], bool]


def waiting(status: NodeStatus | None, record: PoolRecord) -> bool:
    """Whether the node is a member of the pool neither at its target nor handed it."""
    if status is None or status.pool != record.name:
        return False
    target = record.target_for(status.name)
    return bool(target) and target != status.current_config and target != status.desired_config


def order_of(record: PoolRecord, statuses: NodeStatuses) -> tuple[list[str], dict[str, int]]:
    """The pool's nodes in rollout order (names) and each one's place: nodes going back from the config a revert
    left first, then `order_key` (fleet/rollout.py `rollout_rank`)."""
    base = statuses.in_order(record.name, newest_first=record.rollout.newest_first)
    key = ("order", record.name, record.rollout.newest_first, record.reverted_from)
    hit = statuses.memo.get(key)
    if hit is not None and hit[0] is base:
        return hit[1], hit[2]
    names = [s.name for s in base]
    if record.reverted_from:
        def back(name: str) -> bool:
            s = statuses.get(name)
            return s is not None and record.reverted_from in (s.current_config, s.desired_config)
        names = [n for n in names if back(n)] + [n for n in names if not back(n)]
    place = {n: i for i, n in enumerate(names)}
    statuses.memo[key] = (base, names, place)
    return names, place


class _Counted:
    """Which places of a pool's order count for the turn rule (`counts`: in scope, waiting, present) as of the
    statuses' `version`: a flag per place and a Fenwick tree over the flags, so how many count before a place,
    and where the k-th one is, cost O(log n). `owner`: the statuses it was brought up to date for (a claim
    group's overlay, fleet/etcd_claims.py, reads its base's and changes a copy)."""

    __slots__ = ("names", "present", "version", "owner", "flags", "tree", "absent")

    def __init__(self, names: list[str], present: Present, owner: NodeStatuses, flags: bytearray,
                 absent: set[int]) -> None:
        self.names, self.present, self.version, self.owner, self.flags = names, present, owner.version, owner, flags
        self.absent = absent  # places of nodes in line but not present: asked again each time (they may come back)
        tree = [0] * (len(flags) + 1)
        for i, flag in enumerate(flags, 1):  # built in O(n): each node adds its sum to its parent
            tree[i] += flag
            parent = i + (i & -i)
            if parent < len(tree):
                tree[parent] += tree[i]
        self.tree = tree

    def copy(self, owner: NodeStatuses) -> _Counted:
        found = _Counted.__new__(_Counted)
        found.names, found.present, found.version, found.owner = self.names, self.present, self.version, owner
        found.flags, found.tree, found.absent = bytearray(self.flags), list(self.tree), set(self.absent)
        return found

    def set(self, place: int, flag: bool) -> None:
        step = int(flag) - self.flags[place]
        if step:
            self.flags[place] = int(flag)
            tree, i = self.tree, place + 1
            while i < len(tree):
                tree[i] += step
                i += i & -i

    def before(self, place: int) -> int:
        """How many places before `place` count."""
        tree, total = self.tree, 0
        while place > 0:
            total += tree[place]
            place -= place & -place
        return total

    def kth(self, k: int) -> int:
        """The place of the k-th (from 1) place that counts; len(names) when fewer count."""
        tree, pos, step = self.tree, 0, 1 << (len(self.tree) - 1).bit_length()
        while step:
            if pos + step < len(tree) and tree[pos + step] < k:
                pos += step
                k -= tree[pos]
            step >>= 1
        return pos


def _last_turn(record: PoolRecord, statuses: NodeStatuses, free: int, present: Present, only: Collection[str] | None,
               need: Need | None) -> int:
    """The place of the last node whose turn it is (module docstring); past the end when fewer are waiting."""
    names, place = order_of(record, statuses)
    scope = None if only is None else frozenset(only)
    wants = need or waiting

    def in_line(name: str) -> bool:
        return (scope is None or name in scope) and wants(statuses.get(name), record)

    def present_at(place: int) -> bool:
        return present(statuses.get(names[place]))  # type: ignore[arg-type]

    key = ("counted", record.name, record.current, scope, need)
    found: _Counted | None = statuses.memo.get(key)
    changed = statuses.changed_since(found.version) \
        if found is not None and found.names is names and found.present is present else None
    if found is None or changed is None:
        flags, absent = bytearray(len(names)), set()
        for at, name in enumerate(names):
            if in_line(name):
                if present_at(at):
                    flags[at] = 1
                else:
                    absent.add(at)
        found = statuses.memo[key] = _Counted(names, present, statuses, flags, absent)
    else:
        back = [at for at in found.absent if present_at(at)]  # came back (asked) since: in line again
        if (changed or back) and found.owner is not statuses:
            found = statuses.memo[key] = found.copy(statuses)
        for came in back:
            found.absent.discard(came)
            found.set(came, True)
        for name in changed:
            if (where := place.get(name)) is not None:
                line = in_line(name)
                here = line and present_at(where)
                found.set(where, here)
                if line and not here:
                    found.absent.add(where)
                else:
                    found.absent.discard(where)
        found.version = statuses.version
    cursor_key = ("cursor", record.name, record.current, scope, need)
    cursor = statuses.memo.get(cursor_key)
    start = cursor[1] if cursor is not None and cursor[0] is names else 0
    # the cursor passes nodes that wait no more, or are offline (one coming back comes before it: its turn)
    flags = found.flags
    while start < len(names) and not flags[start]:
        start += 1
    statuses.memo[cursor_key] = (names, start)
    return found.kth(found.before(start) + free)


def turn_places(record: PoolRecord, statuses: NodeStatuses, free: int, present: Present, *,
                only: Collection[str] | None = None, need: Need | None = None) -> Callable[[str], bool]:
    """Which nodes (waiting, asking now) may take one of the `free` open slots: those no more than `free - 1` present
    waiting nodes come before (`only`: the nodes that may move at all now, the canaries during their wave; `need`:
    what else than `waiting` a node needs to be in line, a module-level function: it keys the caches). The answer
    keeps only what it read (an order's places are never modified), so it may be asked after `statuses` changed:
    held claims are woken by it (server/handout_follow.py)."""
    if free <= 0:
        return lambda node: False
    _, place = order_of(record, statuses)
    last = _last_turn(record, statuses, free, present, only, need)
    return lambda node: place.get(node, -1) <= last  # not in the order: moving in from another pool


def turn_comes(node: str, record: PoolRecord, statuses: NodeStatuses, free: int, present: Present, *,
               only: Collection[str] | None = None, need: Need | None = None) -> bool:
    """Whether `node` may take one of the `free` open slots (`turn_places`)."""
    return turn_places(record, statuses, free, present, only=only, need=need)(node)


def skipped(record: PoolRecord, members: Collection[NodeStatus]) -> list[str]:
    """The waiting nodes that come, in the rollout order, before a node already handed the pool's target (the
    canaries, which go first by choice, aside): passed over while offline. In order."""
    from fleet.rollout import NodeStatuses, order_key  # (fleet/rollout.py imports this module)
    from fleet.rollout_gates import canaries as canaries_of

    target = record.current
    if not target:
        return []
    settings = record.rollout
    canaries = canaries_of(record, NodeStatuses(members)) if settings.canaries or settings.canary_selector else ()
    newest = record.rollout.newest_first
    moved = [order_key(s, newest) for s in members
             if s.name not in canaries and s.desired_config == target]
    if not moved:
        return []
    last = max(moved)
    behind = sorted((order_key(s, newest), s.name) for s in members
                    if s.name not in canaries and waiting(s, record))
    return [name for key, name in behind if key < last]
