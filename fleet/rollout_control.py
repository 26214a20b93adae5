"""The operator's rollout commands on a store: resume a paused rollout, revert a pool (`mco rollout resume|revert`).

Each writes only the pool's record, through the store's `update_pool` (a compare-and-swap); the renderer carries
the state they leave (`resumed_at`, `reverted_from`, `pause`) into every later record through the same call
(renderer/render.py), so a render running at the same moment does not undo them.

- `record_pause`: the first failing report records the automatic pause in the pool's record (one
  `update_pool`, so of two nodes failing at once exactly one is recorded); it holds until resume or revert.
- `resume`: failures reported before now no longer pause the pool (fleet/rollout_gates.py), and the recorded pause
  is cleared; a node that fails after it pauses the pool again. Refused when the pool is not paused.
- `rollout_state` and `plan_of`: what the commands answer (`mco rollout` on a store, and the server's rollout
  routes for `mco rollout --server`).
- `auto_revert`: `revert` for each pool that asks for it instead of the automatic pause.
- `revert`: the pool's target goes back to the newest config of its history that every node of the pool reached
  (`revert_target`); the config left is kept as `reverted_from`: while the manifests still render it, the pool
  stays pinned to the reverted config. Nodes that took the bad config are handed the reverted one like any
  other change (maxUnavailable, disruption rules); a node that failed before its currentConfig moved is at the
  reverted config already and repairs its disk back to it (applier drift repair).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from fleet.clock import timestamp
from fleet.disruption_policy import DisruptionPolicy, PolicyError
from fleet.errors import FleetError
from fleet.node_status import NodeStatus
from fleet.rendered import Condition, HistoryEntry, Pause, PoolRecord
from fleet.rollout import NodeStatuses
from fleet.rollout_gates import (
    FAILED_STATES,
    failing_of,
    failure_pause,
    recorded_pause,
    revert_target,
    rollout_pause,
)
from fleet.rollout_plan import plan_rollout, recorded_durations
from fleet.store import NotFound, Store

ROLLOUT_PINNED = "RolloutPinned"


def with_pin(conditions: Mapping[str, Condition], pinned_to: str | None, reverted_from: str, now: str) -> dict[str, Condition]:
    """`conditions` with `RolloutPinned` saying whether the pool is pinned to `pinned_to` (the renderer and
    `revert` both set it; a pool never pinned gets no condition)."""
    out = dict(conditions)
    if not reverted_from and ROLLOUT_PINNED not in out:
        return out
    pin = (Condition(ROLLOUT_PINNED, "True", "Reverted", f"pinned to {pinned_to} by mco rollout revert: the "
                     f"manifests still render {reverted_from}") if reverted_from else Condition(ROLLOUT_PINNED, "False"))
    was = out.get(ROLLOUT_PINNED)
    out[ROLLOUT_PINNED] = replace(pin, last_transition_time=was.last_transition_time
                                  if was is not None and was.status == pin.status else now)
    return out


class RolloutRefused(FleetError):
    """A rollout command that cannot be carried out; the message says why."""


def paused_by(store: Store, record: PoolRecord) -> Pause | None:
    """The automatic pause in force for the pool, read from the store without a claim."""
    def read(statuses: NodeStatuses) -> Pause | None:
        return rollout_pause(record, failing_of(record.name, statuses))
    return store.read_statuses(read)


def may_pause(status: NodeStatus) -> bool:
    """Whether `record_pause` may have a pause to record for `status` (a failure in a pool): most reports not."""
    return status.state in FAILED_STATES and bool(status.pool)


def record_pause(store: Store, status: NodeStatus) -> Pause | None:
    """Record the pause `status` calls for in its pool's record unless a pause is recorded there already (call it
    once the status is stored: no pause then names a report the store never took, and until it is recorded readers
    derive the pause from the stored failures, fleet/rollout_gates.py `rollout_pause`). What is recorded is that
    derived pause, the first stored failure, not necessarily this report's: two nodes failing within one second
    are both stored before either records, and readers already named the one the rule picks. Returns the pause
    recorded now (None: none called for, or one was there first). Costs a store write only for a failing report
    on a pool whose record holds no pause yet."""
    if not may_pause(status):
        return None  # (most reports: no read of the pool's record)
    try:
        seen = store.get_pool(status.pool)
    except NotFound:
        return None
    if seen is None or failure_pause(seen, status) is None or recorded_pause(seen) is not None:
        return None
    # the pool's failures, read before the compare-and-swap (never inside it), with this report itself: a replica's
    # mirror may not have applied its own write yet
    failing = store.read_statuses(lambda statuses: [status, *failing_of(status.pool, statuses)])

    def change(record: PoolRecord | None) -> PoolRecord | None:
        if record is None or recorded_pause(record) is not None:
            return None
        pause = rollout_pause(record, failing)  # judged on the record swapped: its target, resume and auto-pause
        return replace(record, pause=pause) if pause is not None else None

    written = store.update_pool(status.pool, change)
    return written.pause if written is not None else None


def auto_revert(store: Store, *, now: datetime) -> dict[str, str]:
    """Revert every pool that asks for it (`autoRevert`) and that its rollout paused; pool -> the config it went
    back to. A pool with no config to go back to stays paused (`/pools` shows the pause). The renderer's process calls this as it polls (the
    elected controller in the etcd layout, through its fenced store)."""
    done: dict[str, str] = {}
    for name in store.list_pools():
        record = store.get_pool(name)
        if not record.rollout.auto_revert or not record.current:
            continue
        if paused_by(store, record) is None:
            continue
        try:
            done[name] = revert(store, name, now=now).current or ""
        except RolloutRefused:
            continue
    return done


def resume(store: Store, pool: str, *, now: datetime) -> PoolRecord:
    """Continue the pool's rollout past every failure reported so far; returns the new record. RolloutRefused, and
    nothing written, when no automatic pause is in force (as `kubectl rollout resume` refuses a rollout that "is not
    paused"); `spec.paused` of the manifest is not the rollout's to lift."""
    seen = store.get_pool(pool)
    if paused_by(store, seen) is None:
        raise RolloutRefused(f"pool {pool} is not paused by its rollout" + (
            " (spec.paused is set in its MachineConfigPool manifest: edit the manifest to unpause it)"
            if seen.paused else ""))

    def change(record: PoolRecord | None) -> PoolRecord:
        if record is None:
            raise NotFound(f"pools/{pool}", "no such pool")
        return replace(record, resumed_at=timestamp(now), pause=None)
    updated = store.update_pool(pool, change)
    assert updated is not None
    return updated


def revert(store: Store, pool: str, *, now: datetime) -> PoolRecord:
    """Set the pool's target back to the last config every node reached; returns the new record."""
    statuses = store.list_node_status()

    def change(record: PoolRecord | None) -> PoolRecord:
        if record is None:
            raise NotFound(f"pools/{pool}", "no such pool")
        if not record.current:
            raise RolloutRefused(f"pool {pool} has no target to revert")
        target = revert_target(record, statuses)
        if target is None:
            raise RolloutRefused(f"pool {pool}: no earlier config in its history that every node reached")
        stamp = timestamp(now)
        sources = store.get_rendered(target).sources  # NotFound if it is gone (a history's configs are kept)
        reverted_from = record.reverted_from or record.current or ""
        conditions = with_pin({c.type: c for c in record.conditions}, target, reverted_from, stamp)
        return replace(record, current=target, sources=sources, history=(*record.history, HistoryEntry(target, stamp)),
                       reverted_from=reverted_from, resumed_at=stamp, pause=None,
                       conditions=tuple(conditions[k] for k in sorted(conditions)))
    updated = store.update_pool(pool, change)
    assert updated is not None
    return updated


def rollout_state(store: Store, record: PoolRecord) -> dict[str, Any]:
    """What the rollout commands answer: the pool's target, pin, resume time and pause."""
    pause = paused_by(store, record)
    return {"pool": record.name, "target": record.current, "revertedFrom": record.reverted_from,
            "resumedAt": record.resumed_at, "rolloutPause": pause.to_dict() if pause is not None else None}


def plan_of(store: Store, pool: str, now: datetime) -> dict[str, Any]:
    """The plan of the move to the pool's target, with the fleet's recorded durations."""
    record = store.get_pool(pool)
    if not record.current:
        raise RolloutRefused(f"pool {pool} has no target yet")
    try:
        policy = DisruptionPolicy.from_dict({"nodeDisruptionPolicy": record.disruption_policy}
                                            if record.disruption_policy else None)
    except PolicyError:
        policy = None  # the render refused it too; agents use the defaults
    fleet = store.list_node_status()
    plan = plan_rollout(record, store.get_rendered(record.current), [s for s in fleet if s.pool == pool],
                        rendered=store.get_rendered, policy=policy, durations=recorded_durations(fleet), now=now)
    return plan.to_dict()
