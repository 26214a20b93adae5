"""Which nodes may pull the pool's new OS image now, before their slot: the pool's `max-concurrent-pulls`. Pure.

Why: an update that changes the OS image spends most of its time pulling it. Pulled (and its deployment prepared)
while the node still runs its workloads, the drained window holds only the writes and the reboot; but every node
of a big pool pulling at once floods the registry. So the server lets a node pull only while fewer than the pool's
`max-concurrent-pulls` (0: no limit) others are pulling, in the rollout order (fleet/rollout_turn.py: the nodes
whose slot comes first pull first).

- A node **needs a pull** when it is waiting for the target (fleet/rollout_turn.py `waiting`), available (Done at
  the config it runs: a node Degraded, or updating to another config, holds a slot already and pulls in it, in its
  turn), the target's OS image is not the one it runs (the caller decides: the server reads the configs' images),
  and it has not reported the target's image staged (`NodeStatus.staged`).
- A node **is pulling** from the claim that let it (`pull_config`, `pull_at`: written under the claim's lock, so
  two claims are counted against each other) until it reports the image staged, is handed the target, or
  PULL_LEASE has passed (a node that died mid-pull does not hold the registry's share for ever).
- **Gates**: the pulls follow the pool's gates (fleet/rollout_gates.py `pool_hold`) as the slots do, but for the
  maintenance windows. A paused pool (`spec.paused`, or paused by the rollout after a failure) lets no node pull:
  its target may be the config being stopped or reverted. During the canary wave only the canaries pull: the rest of
  the pool never fetches the config on trial, nor loads the registry with its image, until the canaries are done.
  A closed window lets nodes pull (no drain, no reboot): so the window, once open, holds only the updates.
- `pull_rule` says which nodes may start pulling now: what a claim's permission is read with (`may_pull`) and what
  wakes the held claims of nodes that may pull (server/handout_wait.py `offer_pulls`), so both follow one rule.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from fleet.clock import timestamp
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.rollout import is_unavailable
from fleet.rollout_gates import canaries, canaries_pending, pool_hold
from fleet.rollout_turn import Present, turn_places, waiting

if TYPE_CHECKING:
    from fleet.rollout import NodeStatuses

PULL_LEASE = 900  # seconds a permission to pull counts against the limit without the node reporting it staged


def holds_pull(status: NodeStatus, lease_from: str) -> bool:
    """Whether the node holds a permission to pull an OS image it has not reported staged, given since `lease_from`
    (whatever the target now: server/presence.py counts such a node online, silent as it pulls)."""
    return bool(status.pull_config) and status.pull_config != status.staged and status.pull_at >= lease_from


def pulling_now(status: NodeStatus | None, record: PoolRecord, lease_from: str) -> bool:
    """Whether the node holds one of the pool's pulls now (module docstring)."""
    if status is None:
        return False
    target = record.target_for(status.name)
    return (bool(target) and status.pull_config == target and status.desired_config != target
            and holds_pull(status, lease_from))


def _needs_pull(status: NodeStatus | None, record: PoolRecord) -> bool:
    """In line for a pull: waiting, available, not staged, not pulling (the image check is the caller's)."""
    if not waiting(status, record):
        return False
    assert status is not None
    if is_unavailable(status):
        return False
    target = record.target_for(status.name)
    return status.staged != target and status.pull_config != target


def pull_rule(record: PoolRecord, statuses: NodeStatuses, now: datetime, present: Present) -> Callable[[str], bool] | None:
    """Which nodes that need the target's OS image (module docstring) may start pulling it now: those whose turn it
    is for the pool's free pulls (all of them with no limit); None when none may (the limit is reached). What a
    claim's permission is read with (`may_pull`), and what wakes the held claims that may pull
    (server/handout_follow.py), so both follow one rule."""
    if record.paused:
        return None
    hold = pool_hold(record, statuses, now)
    only: Collection[str] | None = None
    if hold is not None and hold.kind == "rolloutPause":
        return None
    if hold is not None and hold.kind == "canaries":
        only = hold.canaries
    elif hold is not None:  # a closed window, which comes before the canary wave among the gates: its scope still
        chosen = canaries(record, statuses)
        if chosen and canaries_pending(record, statuses, chosen) is not None:
            only = chosen
    limit = record.rollout.max_concurrent_pulls
    if not limit:
        return (lambda node: True) if only is None else only.__contains__
    lease_from = timestamp(now - timedelta(seconds=PULL_LEASE))
    busy = sum(pulling_now(statuses.get(n), record, lease_from) for n in statuses.pulling(record.name))
    if busy >= limit:
        return None
    rule = turn_places(record, statuses, limit - busy, present, only=only, need=_needs_pull)
    return rule if only is None else (lambda node: node in only and rule(node))  # (the turn: within `only`)


def may_pull(node: str, record: PoolRecord, statuses: NodeStatuses, now: datetime, present: Present) -> bool:
    """Whether `node`, which needs the target's OS image (module docstring), may pull it now."""
    mine = statuses.get(node)
    target = record.target_for(node)
    if mine is None or not target or not waiting(mine, record) or mine.staged == target or is_unavailable(mine):
        return False
    if pulling_now(mine, record, timestamp(now - timedelta(seconds=PULL_LEASE))):  # asked again (a lost answer):
        if record.paused:  # the same permission, unless the pool was paused since
            return False
        hold = pool_hold(record, statuses, now)
        return hold is None or hold.kind != "rolloutPause"
    rule = pull_rule(record, statuses, now, present)
    return rule is not None and rule(node)


def pull_permission(mine: NodeStatus, record: PoolRecord, statuses: NodeStatuses, now: datetime,
                    present: Present) -> NodeStatus | None:
    """The record of `mine` (which needs its target's OS image) with the permission to pull it now: `mine` itself
    when it holds one already, None when it may not pull now (`may_pull`)."""
    if not may_pull(mine.name, record, statuses, now, present):
        return None
    target = record.target_for(mine.name)
    if mine.pull_config == target and not mine.pull_at < timestamp(now - timedelta(seconds=PULL_LEASE)):
        return mine
    return replace(mine, pull_config=target or "", pull_at=timestamp(now))
