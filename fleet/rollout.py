"""Rolling rollout across a pool: which rendered config a node may move to now (MCO `pkg/controller/node/node_controller.go`). Pure.

The server's `GET|POST /nodes/{name}/desired` call `desired_for`. A node is handed the pool's target while
fewer than the pool's `maxUnavailable` other nodes of the pool are unavailable, and keeps its current
config otherwise. Unavailable (`unavailable`, which the pool status counts too) means: not Done at the
config it is targeted at, i.e. reporting `Working` or `Degraded`, or a desiredConfig it has not reached
(MCO `pkg/controller/node/status.go` isNodeUnavailable/isNodeDone). Two differences: a node with no
desiredConfig is one the server never targeted, at its config as the MCO's node controller would have
set it (so available); and a failing node counts as unavailable, so a broken node never lets a rollout
widen. A Degraded node therefore stops the rollout from
widening; with the pool's automatic pause (on unless turned off) it stops it altogether, and maintenance windows
and a canary wave hold it too (fleet/rollout_gates.py `hold_reason`). A node that is already moving to the target (its reported desiredConfig is the target) keeps
getting it, so a rollout never stalls half-way, even once the pool is paused: `spec.paused` hands out nothing new
and takes back nothing handed (MCO `node_controller.go` `syncMachineConfigPool` only syncs a paused pool's status
and leaves every node's desiredConfig annotation as it is, so the MCD goes on with it). A node the server has
never heard of, or one that has reported but never ran a config, is a machine being provisioned: like
`/config/<pool>` for a booting machine, it gets the pool's target without waiting for a slot (it has no old
config to keep, and "no config" is no answer).

Concurrency: the decision is only as good as the statuses it sees; the caller should record a hand-out
(e.g. store the node's status with `desiredConfig = target`) before answering, under one lock, so two
nodes asking at the same moment are counted against each other.

Cost: stores keep their statuses in a `NodeStatuses`, which updates each pool's counts (members,
unavailable) as a status is put, so a decision reads one node and one pool's counts: O(1) in the pool's
size. (Scanning every status per answer made a 10,000-node rollout quadratic.) It keeps, the same way, what the
pool status and the fleet page read (`reports`, `failing`, `under_way`), so they cost what is counted, not
a pass over every record per request.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, overload

from fleet.clock import system_clock
from fleet.errors import FleetError
from fleet.node_status import NodeStatus
from fleet.phases import FINAL
from fleet.rendered import PoolRecord
from fleet.rollout_gates import FAILED_STATES, canaries, canaries_pending, hold_reason
from fleet.rollout_turn import Present, turn_places

# The longest a claim (`POST /nodes/{name}/desired?wait=SECONDS`) may be held waiting for a slot (server/handout_wait.py);
# the agent asks with its sync interval, bounded by this.
MAX_HANDOUT_WAIT = 300
CHANGE_LOG = 4096  # changed names `NodeStatuses.changed_since` keeps: caches older than that build again

_PERCENT_RE = re.compile(r"^\s*([0-9]+)\s*%\s*$")
_INT_RE = re.compile(r"^\s*([0-9]+)\s*$")


class RolloutError(FleetError, ValueError):
    """A pool's maxUnavailable that is neither a non-negative integer nor a percentage; `path` names it."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def max_unavailable_count(value: int | str, pool_size: int) -> int:
    """maxUnavailable as a node count: percentages scale against the pool and round down; minimum 1."""
    if isinstance(value, bool):
        raise RolloutError("spec.maxUnavailable", f"must be an integer or a percentage, got {value!r}")
    if isinstance(value, int):
        count = value
    elif isinstance(value, str) and (m := _PERCENT_RE.match(value)):
        count = int(m.group(1)) * max(pool_size, 0) // 100
    elif isinstance(value, str) and (m := _INT_RE.match(value)):
        count = int(m.group(1))
    else:
        raise RolloutError("spec.maxUnavailable", f"must be an integer or a percentage, got {value!r}")
    if count < 0:
        raise RolloutError("spec.maxUnavailable", f"must not be negative, got {value!r}")
    return max(count, 1)


ZONE_LABEL = "topology.kubernetes.io/zone"


def order_key(status: NodeStatus, newest_first: bool) -> tuple[bool, str, bool, str, str]:
    """Where a node comes in its pool's rollout (MCO `pkg/controller/node/node_controller.go` `sortNodeList`): by
    zone label alphabetically, nodes without the zone label last, then oldest registration first (newest first when
    the pool asks; a node whose registration is unknown after those whose is known), then by name. As in
    `sortNodeList` the label's presence counts, not its value: a node labelled with the empty zone has a zone, which
    sorts first. Nodes whose records carry no labels have no zone."""
    labels = getattr(status, "labels", None) or {}
    zone = labels.get(ZONE_LABEL)
    registered = status.registered_at or status.reported_at
    if newest_first:  # RFC 3339 UTC times: the character-wise complement sorts them newest first
        registered = "".join(chr(0x10FFFF - ord(c)) for c in registered)
    return (zone is None, zone or "", not registered, registered, status.name)


def unavailable(state: str, current_config: str, desired_config: str) -> bool:
    """True when a node reporting these counts against maxUnavailable: anything but Done at its desired config."""
    return state != "Done" or (desired_config != "" and current_config != desired_config)


def rollout_rank(status: NodeStatus, pool: PoolRecord) -> tuple[Any, ...]:
    """Where a node waiting for a slot stands: nodes going back from the config a revert left first (they run the
    bad config), then the pool's order (`order_key`). Held claims are woken in this order (server/handout_wait.py)."""
    back = bool(pool.reverted_from) and pool.reverted_from in (status.current_config, status.desired_config)
    return (not back, *order_key(status, pool.rollout.newest_first))


def provisioning(status: NodeStatus) -> bool:
    """Whether a node that reported is being provisioned (module docstring): it never ran a config (its reports'
    history included: a node that ran one is never taken for one). It gets the target without a slot."""
    return not status.current_config and not any(t.current_config for t in status.transitions())


def is_unavailable(status: NodeStatus) -> bool:
    """`unavailable` for a node's status (the rollout's slots and the pool status's unavailableMachineCount)."""
    return unavailable(status.state, status.current_config, status.desired_config)


@dataclass
class PoolCounts:
    """A pool's members and how many of them are unavailable (`is_unavailable`)."""

    members: int = 0
    unavailable: int = 0


class NodeStatuses(Sequence[NodeStatus]):
    """Node statuses by name, in name order, with each pool's counts kept current as statuses are put.

    Not thread-safe: its owner (a store, the replica's mirror) changes and reads it under its own lock.
    """

    def __init__(self, statuses: Iterable[NodeStatus] = ()) -> None:
        self._by_name: dict[str, NodeStatus] = {}
        self._pools: dict[str, PoolCounts] = {}
        self._ordered: list[NodeStatus] | None = None  # handed out by `ordered`: never modified after
        self._position: dict[str, int] = {}  # each name's index in `_ordered`
        self._replaced: set[str] = set()  # names whose status changed since `_ordered` (same names)
        self._renamed = True  # names added or removed since `_ordered`: sort again
        self._failing: dict[str, set[str]] = {}  # pool -> its nodes reporting a failure (FAILED_STATES)
        self._members: dict[str, set[str]] = {}  # pool -> its nodes
        self._pulling: dict[str, set[str]] = {}  # pool -> its nodes let pull an OS image that have not staged it
        self._reports: dict[str, Counter[tuple[str, str, str]]] = {}  # pool -> (state, current, desired) counts
        self._under_way: dict[str, set[str]] = {}  # pool -> its nodes in a phase not final (fleet/phases.py)
        self._in_order: dict[tuple[str, bool], list[NodeStatus]] = {}  # (pool, newest first) -> rollout order
        self.version = 0  # counts every change: what derived caches (`memo`) are checked against
        self._log: list[str] = []  # the names changed by the last changes, one per version (`changed_since`)
        self._log_from = 0  # the version before the first of them
        self.memo: MutableMapping[Any, Any] = {}  # caches of other modules' rules over these statuses (fleet/rollout_turn.py)
        for status in statuses:
            self.put(status)

    def _count(self, status: NodeStatus, step: int) -> None:
        counts = self._pools.setdefault(status.pool, PoolCounts())
        counts.members += step
        if is_unavailable(status):
            counts.unavailable += step
        members = self._members.setdefault(status.pool, set())
        failing = self._failing.setdefault(status.pool, set())
        pulling = self._pulling.setdefault(status.pool, set())
        under_way = self._under_way.setdefault(status.pool, set())
        reports = self._reports.setdefault(status.pool, Counter())
        report = (status.state, status.current_config, status.desired_config)
        reports[report] += step
        if not reports[report]:
            del reports[report]
        if step > 0:
            members.add(status.name)
            if status.state in FAILED_STATES:
                failing.add(status.name)
            if status.pull_config and status.pull_config not in (status.staged, status.desired_config):
                pulling.add(status.name)
            if (phase := status.phase) is not None and phase.phase not in FINAL:
                under_way.add(status.name)
        else:
            members.discard(status.name)
            failing.discard(status.name)
            pulling.discard(status.name)
            under_way.discard(status.name)

    def put(self, status: NodeStatus) -> None:
        """Add or replace a node's status (and move it between its pools' counts)."""
        self._changed(status.name)
        old = self._by_name.get(status.name)
        if old is not None:
            self._count(old, -1)
            self._replaced.add(status.name)
            if old.pool != status.pool or order_key(old, False) != order_key(status, False):
                self._reorder(old.pool, status.pool)
        else:
            self._renamed = True
            self._reorder(status.pool)
        self._by_name[status.name] = status
        self._count(status, 1)

    def remove(self, name: str) -> None:
        """Forget a node."""
        old = self._by_name.pop(name, None)
        if old is not None:
            self._changed(name)
            self._count(old, -1)
            self._renamed = True
            self._reorder(old.pool)

    def _changed(self, name: str) -> None:
        self.version += 1
        if len(self._log) >= CHANGE_LOG:
            self._log, self._log_from = [], self.version - 1
        self._log.append(name)

    def changed_since(self, version: int) -> list[str] | None:
        """The names of the nodes changed since `version` (a name may repeat); None when that is too long ago to
        say (a cache then builds again)."""
        if version < self._log_from or version > self.version:
            return None
        return self._log[version - self._log_from:]

    def _reorder(self, *pools: str) -> None:
        for pool in pools:
            self._in_order.pop((pool, False), None)
            self._in_order.pop((pool, True), None)

    def get(self, name: str) -> NodeStatus | None:
        """A node's status (None: never reported)."""
        return self._by_name.get(name)

    def counts(self, pool: str) -> PoolCounts:
        """The pool's counts (zeros for a pool no node reported)."""
        return self._pools.get(pool) or PoolCounts()

    def failing(self, pool: str) -> Collection[str]:
        """The pool's nodes whose last report is a failure (Degraded, Unreconcilable)."""
        return self._failing.get(pool) or ()

    def pulling(self, pool: str) -> Collection[str]:
        """The pool's nodes let pull an OS image that have neither staged it nor been handed it (any target)."""
        return self._pulling.get(pool) or ()
    def reports(self, pool: str) -> Mapping[tuple[str, str, str], int]:
        """How many of the pool's nodes report each (state, currentConfig, desiredConfig) (callers must not keep
        it: it changes with the next put)."""
        return self._reports.get(pool) or {}

    def under_way(self, pool: str) -> Collection[str]:
        """The pool's nodes whose update is under way: a phase entered, not a final one (fleet/phases.py)."""
        return self._under_way.get(pool) or ()

    def pools(self) -> Collection[str]:
        """The pools some node names ("" : nodes in no pool), and perhaps pools none names any more."""
        return self._members.keys()

    def in_order(self, pool: str, *, newest_first: bool = False) -> list[NodeStatus]:
        """The pool's nodes in rollout order (`order_key`), kept until a member joins, leaves or changes its key.
        Callers must not modify it. The statuses in it are those of when it was sorted: `get` the current one."""
        key = (pool, newest_first)
        found = self._in_order.get(key)
        if found is None:
            found = sorted((self._by_name[n] for n in self._members.get(pool, ())),
                           key=lambda s: order_key(s, newest_first))
            self._in_order[key] = found
        return found

    def ordered(self) -> list[NodeStatus]:
        """Every status in name order: the same list until the next change, then a new one (callers must not
        modify it). When only statuses of known names changed, the last list is copied and patched at their
        places (a report changes no name), not sorted again."""
        if self._ordered is None or self._renamed:
            names = sorted(self._by_name)
            self._ordered = [self._by_name[n] for n in names]
            self._position = {n: i for i, n in enumerate(names)}
            self._renamed = False
        elif self._replaced:
            patched = list(self._ordered)
            for name in self._replaced:
                patched[self._position[name]] = self._by_name[name]
            self._ordered = patched
        self._replaced.clear()
        return self._ordered

    def __len__(self) -> int:
        return len(self._by_name)

    @overload
    def __getitem__(self, index: int) -> NodeStatus: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[NodeStatus]: ...
    def __getitem__(self, index: int | slice) -> NodeStatus | Sequence[NodeStatus]:
        return self.ordered()[index]

    def __iter__(self) -> Iterator[NodeStatus]:
        return iter(self.ordered())


def desired_for(node: str, pool: PoolRecord, statuses: Sequence[NodeStatus], *,
                now: datetime | None = None, present: Present | None = None) -> str | None:
    """The rendered config `node` should apply now (rules in the module docstring); None when unknown. `now`
    (default: the current time) is when maintenance windows and soak times are judged. With `present` (which
    nodes are online: the server's), a free slot goes only to a node whose turn it is (fleet/rollout_turn.py).

    O(1) in the pool's size when `statuses` is a NodeStatuses (what stores hand to `claim_node`'s decide) and
    the pool has no canaries; with canaries, O(canaries).
    """
    view = statuses if isinstance(statuses, NodeStatuses) else NodeStatuses(statuses)
    mine = view.get(node)
    current = (mine.current_config or None) if mine else None
    target = pool.target_for(node)  # the pool's target, or this node's machine's config on it (fleet/machines.py)
    if not target or current == target:
        return current or target
    if mine is None or provisioning(mine):
        return target  # nothing to keep
    if mine.desired_config == target:
        return target  # handed it already: it goes on, paused or not (module docstring)
    if pool.paused:
        return current
    now = now or system_clock()
    if hold_reason(node, pool, view, now) is not None:
        return current
    counts = view.counts(pool.name)
    here = mine.pool == pool.name  # a node moving in from another pool adds one member and no busy one
    size = counts.members + (0 if here else 1)
    busy = counts.unavailable - (1 if here and is_unavailable(mine) else 0)
    free = max_unavailable_count(pool.max_unavailable, size) - busy
    if free <= 0:
        return current
    if present is not None and here and not turn_rule(pool, view, free, present)(node):
        return current
    return target


def turn_rule(pool: PoolRecord, view: NodeStatuses, free: int, present: Present) -> Callable[[str], bool]:
    """Which waiting nodes of the pool may take one of `free` slots now (fleet/rollout_turn.py; during the canary
    wave, only canaries may): what `desired_for` applies to a claim as it arrives, and what wakes held claims
    (server/handout_follow.py), so both follow one rule."""
    chosen = canaries(pool, view)
    only = chosen if chosen and canaries_pending(pool, view, chosen) is not None else None
    return turn_places(pool, view, free, present, only=only)
