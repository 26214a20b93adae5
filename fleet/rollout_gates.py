"""What may hold a pool's rollout beyond `maxUnavailable`: the automatic pause, maintenance windows and the canary
wave, judged in that order in one place (`pool_hold`: what a claim is decided by and what held claims are woken
by); and which config `mco rollout revert` goes back to. Pure: the caller passes the statuses and `now`.

- **Automatic pause** (`autoPause`, on unless a pool turns it off): a node of the pool that reports a failure
  (Degraded, Unreconcilable) while moving to the pool's target (its desiredConfig is the target, its
  currentConfig is not) pauses the rollout: no new slot; nodes already moving finish. The first such report the
  store takes records the pause in the pool's record (fleet/rollout_control.py `record_pause`, one
  compare-and-swap, once the report is stored; until then readers derive it from the stored failures: the
  earliest, ties by node name, which is what is recorded): so every server and replica names the same node and
  reason, and keeps naming it after restarts and failovers, even when two nodes fail within the same second.
  It holds until `mco rollout resume` or a revert. `mco rollout resume` stores the time
  it was run (`PoolRecord.resumed_at`): failures first reported before it no longer count. A revert moves the
  target, so failures on the old target no longer count either.
- **Maintenance windows** (fleet/maintenance_windows.py): outside them no new slot.
- **Canary wave**: the canaries (the nodes the pool's `canary-selector` matches, or the first `canaries` nodes
  in rollout order, fleet/rollout.py `order_key`) take the target first; every other node waits until each
  canary is Done at the target, which under a health gate it reports only after its soak time.
- **Revert target**: the newest config of the pool's history, before its current target, that every node of the
  pool reached (its currentConfig, or one it reported Done at and moved on from), never the config a revert left
  while the pool is pinned (`reverted_from`): a second revert goes further back, or is refused.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from fleet.clock import timestamp
from fleet.maintenance_windows import is_open, next_opening
from fleet.node_status import NodeStatus
from fleet.rendered import Pause, PoolRecord

if TYPE_CHECKING:  # fleet/rollout.py calls `hold_reason`; its NodeStatuses is only named here
    from fleet.rollout import NodeStatuses

FAILED_STATES = ("Degraded", "Unreconcilable")  # a report that pauses the rollout (fleet/rollout.py indexes them)


def _labels(status: NodeStatus) -> dict[str, str]:
    return dict(getattr(status, "labels", None) or {})


def failure_since(status: NodeStatus) -> str:
    """When the node first reported its current failure: the oldest of the newest run of failed reports for the
    same desired config in its history (a failing node that reports again with a new message adds an entry, but
    has not failed anew: the pause must keep naming the node that failed first)."""
    since = status.reported_at
    for t in status.transitions():
        if t.state not in FAILED_STATES or t.desired_config != status.desired_config:
            break
        since = t.reported_at or since
    return since


def failure_pause(record: PoolRecord, status: NodeStatus | None) -> Pause | None:
    """The pause this one node's status calls for (the module docstring's rule), or None: the one predicate both
    the recorded pause and the fallback below are judged by."""
    target = record.current
    if not target or not record.rollout.auto_pause or status is None:
        return None
    if status.pool != record.name or status.desired_config != target or status.state not in FAILED_STATES:
        return None
    if status.current_config == target:
        return None  # it reached the target: a failure since (drift) is not the rollout's
    since = failure_since(status)
    if record.resumed_at and since and since <= record.resumed_at:
        return None
    return Pause(status.name, f"{status.state}: {status.message}" if status.message else status.state, since, target)


def recorded_pause(record: PoolRecord) -> Pause | None:
    """The pause recorded in the pool's record, while it holds: on the current target, after the last resume,
    with the automatic pause on."""
    pause = record.pause
    if pause is None or not record.current or pause.target != record.current or not record.rollout.auto_pause:
        return None
    if record.resumed_at and pause.since <= record.resumed_at:
        return None
    return pause


def rollout_pause(record: PoolRecord, failing: Iterable[NodeStatus | None]) -> Pause | None:
    """The automatic pause in force for the pool, or None: the one recorded in its record (the first failing report
    recorded it, and it holds until a resume or revert), else the failing status that failed first (a failure
    stored without the server, e.g. by a store written directly). `failing`: at least every status of the pool
    in a failed state (`failing_of`; others are skipped)."""
    recorded = recorded_pause(record)
    if recorded is not None:
        return recorded
    first: Pause | None = None
    for status in failing:
        pause = failure_pause(record, status)
        if pause is not None and (first is None or (pause.since, pause.node) < (first.since, first.node)):
            first = pause
    return first


def failing_of(pool: str, statuses: NodeStatuses) -> Iterator[NodeStatus | None]:
    """The statuses of the pool's failing nodes, from the store's index (O(failing), not O(pool))."""
    return (statuses.get(name) for name in statuses.failing(pool))


def window_closed(record: PoolRecord, now: datetime) -> datetime | None:
    """When the next window opens, while the pool has windows and none is open now (None: may hand out)."""
    windows = record.rollout.windows
    if not windows or is_open(windows, now):
        return None
    return next_opening(windows, now) or now


def canaries(record: PoolRecord, statuses: NodeStatuses) -> Collection[str]:
    """The pool's canaries (module docstring); empty when the pool names none."""
    settings = record.rollout
    if settings.canary_selector:  # (the order's statuses are those of when it was sorted: the current ones read)
        wanted = settings.canary_selector.items()
        return {s.name for s in statuses.in_order(record.name)
                if all(_labels(statuses.get(s.name) or s).get(k) == v for k, v in wanted)}
    count = settings.canary_count(statuses.counts(record.name).members)
    if not count:
        return ()
    return {s.name for s in statuses.in_order(record.name, newest_first=settings.newest_first)[:count]}


def canaries_pending(record: PoolRecord, statuses: NodeStatuses, chosen: Collection[str]) -> str | None:
    """Why the rest of the pool still waits for the canaries `chosen` (None: every canary is Done at its target: the
    pool's, or its machine's config built on it, `PoolRecord.target_for`).

    A canary handed the target under a health gate reports Done only once its checks have passed for the pool's
    soak time (applier/health.py), so its Done already ends its soak: waiting a soak more from it made the
    canaries soak twice."""
    for name in sorted(chosen):
        status = statuses.get(name)
        target = record.target_for(name) or ""
        if status is None or status.state != "Done" or status.current_config != target:
            return f"waiting for canary {name} to be Done at {target}"
    return None


@dataclass(frozen=True)
class Hold:
    """The first gate that holds the pool's rollout now, in the one order they are judged in: the automatic
    pause, then the maintenance windows, then the canary wave (the slots themselves, maxUnavailable, come after:
    fleet/rollout.py `desired_for`)."""

    reason: str                      # what a node held by it is told (`hold_reason`)
    kind: str = "canaries"           # which gate: "rolloutPause", "window" or "canaries"
    opens: datetime | None = None    # a closed window: when the next opens (nothing else lifts a gate by itself)
    canaries: Collection[str] = ()   # the canary wave: the canaries, which it does not hold


def pool_hold(record: PoolRecord, statuses: NodeStatuses, now: datetime) -> Hold | None:
    """What holds the pool's rollout now beyond maxUnavailable (None: only maxUnavailable decides): what a claim is
    decided by (`hold_reason`) and what counts of held claims wake by (server/handout_wait.py `free_slots`)."""
    pause = rollout_pause(record, failing_of(record.name, statuses))
    if pause is not None:
        return Hold(f"rollout paused: node {pause.node} failed ({pause.reason}); mco rollout resume {record.name}",
                    "rolloutPause")
    opens = window_closed(record, now)
    if opens is not None:
        return Hold(f"outside the maintenance windows; the next opens at {timestamp(opens)}", "window", opens)
    chosen = canaries(record, statuses)
    pending = canaries_pending(record, statuses, chosen) if chosen else None
    return Hold(pending, canaries=chosen) if pending is not None else None


def hold_reason(node: str, record: PoolRecord, statuses: NodeStatuses, now: datetime) -> str | None:
    """Why `node` gets no new slot now beyond maxUnavailable (None: only maxUnavailable decides)."""
    hold = pool_hold(record, statuses, now)
    return None if hold is None or node in hold.canaries else hold.reason


def reached(status: NodeStatus, name: str) -> bool:
    """Whether the node ran `name` (its current config now, or one its history shows it at)."""
    return status.current_config == name or any(t.current_config == name for t in status.transitions())


def revert_target(record: PoolRecord, statuses: Sequence[NodeStatus]) -> str | None:
    """The config `mco rollout revert` sets (module docstring): None when no earlier config qualifies."""
    members = [s for s in statuses if s.pool == record.name]
    for entry in reversed(record.history):
        if entry.name in (record.current, record.reverted_from):  # never back to the config a revert left
            continue
        if all(reached(s, entry.name) for s in members):
            return entry.name
    return None
