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

Cost: the order is sorted once per membership change (`NodeStatuses.in_order`) and, during a revert, split again
when a changed node joins or leaves the nodes going back (`order_of`). Which of its nodes are in line
is kept as a flag per place with a Fenwick tree over the flags, one per pool (and `need`), brought up to date from
the nodes changed since (`NodeStatuses.changed_since`), built again, O(pool), only when the order, the nodes that
may move or the pool's targets (`PoolRecord.target_for`: its target and its machine documents' configs) change; the
`present` verdict (the server's is another object every second) is asked of the nodes up to where the turn ends,
once per verdict (`_Line`). From a cursor past the nodes already moved or passed over, the last node whose turn
it is is then found in O(log pool): every claim and every count of the free slots (after each change a
replica's mirror applies) costs that, not a scan of up to `free` nodes (a replica whose first held node's turn
had not come scanned the whole of a wave's free slots on every change)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Mapping
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
    left first, then `order_key` (fleet/rollout.py `rollout_rank`). Kept while the sort order stands and, during a
    revert, while no changed node joined or left the nodes going back (checked over the nodes changed since)."""
    base = statuses.in_order(record.name, newest_first=record.rollout.newest_first)
    key = ("order", record.name, record.rollout.newest_first)  # one per pool: the config a revert left inside
    reverted = record.reverted_from

    def back(name: str) -> bool:
        s = statuses.get(name)
        return s is not None and reverted in (s.current_config, s.desired_config)

    hit = statuses.memo.get(key)
    if hit is not None and hit[0] is base and hit[1] == reverted:
        if not reverted or hit[4] == statuses.version:
            return hit[2], hit[3]
        changed = statuses.changed_since(hit[4])
        if changed is not None and all(back(n) == (n in hit[5]) for n in changed if n in hit[3]):
            statuses.memo[key] = (*hit[:4], statuses.version, hit[5])
            return hit[2], hit[3]
    names = [s.name for s in base]
    going_back = frozenset(n for n in names if back(n)) if reverted else frozenset()
    if going_back:
        names = [n for n in names if n in going_back] + [n for n in names if n not in going_back]
    place = {n: i for i, n in enumerate(names)}
    statuses.memo[key] = (base, reverted, names, place, statuses.version, going_back)
    return names, place


class _Line:
    """Which places of a pool's order are in line for the turn rule, as of the statuses' `version`: `line`, a node
    in scope and waiting (kept up to date from the nodes changed since); `flags`, in line and not found offline,
    with a Fenwick tree over them, so how many count before a place, and where the k-th one is, cost O(log n).

    Presence is asked lazily, of one verdict (`present`) at a time: the places before `checked` were asked (those
    found offline are in `absent`, in order: those from the cursor on are asked again each time, a verdict's
    answers only turning to present, those before it at the next verdict), the others count as present until the
    turn reaches them. So a new verdict (every second) costs the offline nodes and the nodes up to where the turn
    ends, not the pool.
    `owner`: the statuses it is kept for (a claim group's overlay, fleet/etcd_claims.py, reads its base's and
    keeps a copy). `targets` and `scope`: what it was built for (the record's targets, `PoolRecord.target_for`,
    and the nodes that may move): one is kept per pool and need, built again when they change, so a machine
    document's edit is seen and a long-lived mirror keeps no line per past target. `cursor`: where the last turn
    started (`_last_turn`)."""

    __slots__ = ("names", "version", "owner", "targets", "scope", "line", "flags", "tree", "present", "checked",
                 "absent", "cursor")

    def __init__(self, names: list[str], owner: NodeStatuses, line: bytearray, present: Present,
                 targets: tuple[str | None, Mapping[str, str]], scope: frozenset[str] | None) -> None:
        self.names, self.version, self.owner, self.line = names, owner.version, owner, line
        self.targets, self.scope, self.cursor = targets, scope, 0
        self.flags = bytearray(line)
        tree = [0] * (len(line) + 1)
        for i, flag in enumerate(line, 1):  # built in O(n): each node adds its sum to its parent
            tree[i] += flag
            parent = i + (i & -i)
            if parent < len(tree):
                tree[parent] += tree[i]
        self.tree = tree
        self.present, self.checked, self.absent = present, 0, list[int]()

    def copy(self, owner: NodeStatuses) -> _Line:
        found = _Line.__new__(_Line)
        found.names, found.version, found.owner, found.present = self.names, self.version, owner, self.present
        found.targets, found.scope, found.cursor = self.targets, self.scope, self.cursor
        found.line, found.flags, found.tree = bytearray(self.line), bytearray(self.flags), list(self.tree)
        found.checked, found.absent = self.checked, list(self.absent)
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

    def ask(self, present: Present, statuses: NodeStatuses) -> None:
        """Take `present` as the verdict (a new one: every place is asked again as the turn reaches it); ask the
        places found offline from the cursor on again (they may have come back). Those before it are asked again
        only at a new verdict (the cursor goes back to the first of them): each decision costs the offline nodes
        inside the turn, not every offline node of the pool."""
        absent = self.absent
        if present is not self.present:
            for place in absent:
                self.set(place, True)
            if absent:  # those the cursor passed count again: the turn may start before it
                self.cursor = min(self.cursor, absent[0])
            self.present, self.checked, self.absent = present, 0, []
            return
        names, first = self.names, bisect_left(absent, self.cursor)
        still = absent[:first]
        for place in absent[first:]:
            if present(statuses.get(names[place])):  # type: ignore[arg-type]
                self.set(place, True)
            else:
                still.append(place)
        self.absent = still

    def check_to(self, end: int, statuses: NodeStatuses, cursor: int) -> None:
        """Ask the verdict of the places in line from the cursor up to `end` (included) not asked yet (those
        before the cursor count for nothing: none of them counts, `_last_turn` keeps it so)."""
        line, names, present = self.line, self.names, self.present
        for place in range(max(self.checked, cursor), end + 1):
            if line[place] and not present(statuses.get(names[place])):  # type: ignore[arg-type]
                self.set(place, False)
                self.absent.append(place)  # past every place asked before: `absent` stays in order
        self.checked = max(self.checked, end + 1)

    def changed(self, place: int, in_line: bool, statuses: NodeStatuses) -> None:
        """The node at `place` changed: in line or not now (asked at once if its place was asked already)."""
        self.line[place] = in_line
        here = in_line and (place >= self.checked or self.present(statuses.get(self.names[place])))  # type: ignore[arg-type]
        self.set(place, here)
        absent = self.absent
        where = bisect_left(absent, place)
        known, offline = where < len(absent) and absent[where] == place, in_line and not here
        if offline and not known:
            absent.insert(where, place)
        elif known and not offline:
            del absent[where]
        if here and place < self.cursor:  # waits again before where the turn started: it starts there now
            self.cursor = place


def _last_turn(record: PoolRecord, statuses: NodeStatuses, free: int, present: Present, only: Collection[str] | None,
               need: Need | None) -> int:
    """The place of the last node whose turn it is (module docstring); past the end when fewer are waiting."""
    names, place = order_of(record, statuses)
    scope = None if only is None else frozenset(only)
    wants = need or waiting

    def in_line(name: str) -> bool:
        return (scope is None or name in scope) and wants(statuses.get(name), record)

    key = ("line", record.name, need, scope is None)
    targets = (record.current, record.machine_targets)
    found: _Line | None = statuses.memo.get(key)
    if found is not None and not (found.names is names and found.targets == targets and found.scope == scope):
        found = None  # kept for another order, target (a machine document's included) or scope: built again
    changed = None if found is None else statuses.changed_since(found.version)
    if found is None or changed is None:
        found = statuses.memo[key] = _Line(names, statuses, bytearray(map(in_line, names)), present, targets, scope)
    else:
        if found.owner is not statuses:
            found = statuses.memo[key] = found.copy(statuses)
        found.ask(present, statuses)
        for name in changed:
            if (where := place.get(name)) is not None:
                found.changed(where, in_line(name), statuses)
        found.version = statuses.version
    # the cursor passes nodes that wait no more, or are offline; no place before it counts (one that comes back, or
    # waits again, takes the cursor back to it: `ask`, `changed`), so counting from it is counting from the start
    start = found.cursor
    while True:  # the first place that counts from the cursor on (O(log n) each), asked the verdict
        start = found.kth(found.before(start) + 1)
        if start >= len(names) or start < found.checked:
            break
        found.check_to(start, statuses, start)
        if found.flags[start]:
            break
    found.cursor = start
    while True:  # where the turn ends, once every place up to it was asked the verdict
        last = found.kth(found.before(start) + free)
        if last >= len(names) or last < found.checked:
            return last
        found.check_to(last, statuses, start)


def turn_places(record: PoolRecord, statuses: NodeStatuses, free: int, present: Present, *,
                only: Collection[str] | None = None, need: Need | None = None) -> Callable[[str], bool]:
    """Which nodes (waiting, asking now) may take one of the `free` open slots: those no more than `free - 1` present
    waiting nodes come before (`only`: the nodes that may move at all now, the canaries during their wave; `need`:
    what else than `waiting` a node needs to be in line, a module-level function reading the record only through
    `target_for`: it keys the caches, kept for the record's targets). The answer
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


def skipped(record: PoolRecord, members: Collection[NodeStatus], lease_from: str = "") -> list[str]:
    """The waiting nodes that come, in the rollout order, before a node already handed the pool's target (the
    canaries, which go first by choice, aside): passed over while offline. In order. A node pulling the target's
    OS image before its slot (fleet/image_pulls.py), let since `lease_from` (its lease), is not passed over: it
    keeps its turn, and one behind it that is ready may take a free slot meanwhile."""
    from fleet.image_pulls import pulling_now  # (fleet/image_pulls.py imports this module)
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
                    if s.name not in canaries and waiting(s, record) and not pulling_now(s, record, lease_from))
    return [name for key, name in behind if key < last]
