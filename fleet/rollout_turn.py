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

Cost: the order is sorted once per membership change (`NodeStatuses.in_order`); the last node whose turn it is is
found by one scan from a cursor past the nodes already moved or passed over, kept per pool and target, and the
result is cached until the statuses change, a second passes or the `present` verdict is another one (the
server's is the same object for a second), so a burst of claims refused costs O(1) each and
the scans of a whole rollout add up to O(pool + slots x hand-outs)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord

if TYPE_CHECKING:  # fleet/rollout.py calls `turn_places`; its NodeStatuses is only named here
    from fleet.rollout import NodeStatuses

Present = Callable[[NodeStatus], bool]
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


def _last_turn(record: PoolRecord, statuses: NodeStatuses, free: int, present: Present, only: Collection[str] | None,
               now_second: int, need: Need | None, upto: int | None = None) -> int:
    """The place of the last node whose turn it is (module docstring); past the end when fewer are waiting. With
    `upto`, the scan stops past that place: a result past `upto` then only says the node there is in turn."""
    names, place = order_of(record, statuses)
    scope = None if only is None else frozenset(only)
    wants = need or waiting
    memo_key = ("turn", record.name, record.current, scope, need)
    hit = statuses.memo.get(memo_key)
    if hit is not None and hit[0] == (statuses.version, now_second, free) and hit[1] is names and hit[3] is present:
        return int(hit[2])
    cursor_key = ("cursor", record.name, record.current, scope, need)
    cursor = statuses.memo.get(cursor_key)
    start = cursor[1] if cursor is not None and cursor[0] is names else 0

    def counts(name: str) -> bool:
        return (scope is None or name in scope) and wants(statuses.get(name), record)

    # the cursor passes nodes that wait no more, or are offline (one coming back comes before it: its turn)
    while start < len(names) and not (counts(names[start]) and present(statuses.get(names[start]))):  # type: ignore[arg-type]
        start += 1
    statuses.memo[cursor_key] = (names, start)
    last, seen = len(names), 0
    for i in range(start, len(names)):
        if upto is not None and i > upto:
            return i  # (not kept: where the turn ends is not known)
        name = names[i]
        if counts(name) and present(statuses.get(name)):  # type: ignore[arg-type]
            seen += 1
            if seen >= free:
                last = i
                break
    statuses.memo[memo_key] = ((statuses.version, now_second, free), names, last, present)
    return last


def turn_places(record: PoolRecord, statuses: NodeStatuses, free: int, present: Present, *,
                only: Collection[str] | None = None, now_second: int = 0, need: Need | None = None,
                first: str = "", whole: bool = True) -> Callable[[str], bool]:
    """Which nodes (waiting, asking now) may take one of the `free` open slots: those no more than `free - 1` present
    waiting nodes come before (`only`: the nodes that may move at all now, the canaries during their wave; `need`:
    what else than `waiting` a node needs to be in line, a module-level function: it keys the caches). The answer
    keeps only what it read (an order's places are never modified), so it may be asked after `statuses` changed:
    held claims are woken by it (server/handout_follow.py). `first`: the node asked about first, whose place the
    scan stops at when its turn has come (a node near the front costs the nodes before it, not `free` of them);
    without `whole`, only it may be asked about then."""
    if free <= 0:
        return lambda node: False
    _, place = order_of(record, statuses)
    mine = place.get(first)
    last = _last_turn(record, statuses, free, present, only, now_second, need, mine)
    if whole and mine is not None and last > mine:
        last = _last_turn(record, statuses, free, present, only, now_second, need)
    return lambda node: place.get(node, -1) <= last  # not in the order: moving in from another pool


def turn_comes(node: str, record: PoolRecord, statuses: NodeStatuses, free: int, present: Present, *,
               only: Collection[str] | None = None, now_second: int = 0, need: Need | None = None) -> bool:
    """Whether `node` may take one of the `free` open slots (`turn_places`)."""
    return turn_places(record, statuses, free, present, only=only, now_second=now_second, need=need, first=node,
                       whole=False)(node)


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
