"""The operator's rollout commands on a store: resume a paused rollout, revert a pool (`mco rollout resume|revert`).

Both write only the pool's record, the way the renderer does (a whole record, atomically); the renderer carries
the state they leave (`resumed_at`, `reverted_from`) into every later record (renderer/render.py), so a render
running at the same moment does not undo them.

- `resume`: failures reported before now no longer pause the pool (fleet/rollout_gates.py); a node that fails
  after it pauses the pool again.
- `revert`: the pool's target goes back to the newest config of its history that every node of the pool reached
  (`revert_target`); the config left is kept as `reverted_from`: while the manifests still render it, the pool
  stays pinned to the reverted config. Nodes that took the bad config are handed the reverted one like any
  other change (maxUnavailable, disruption rules); a node that failed before its currentConfig moved is at the
  reverted config already and repairs its disk back to it (applier drift repair).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from fleet.clock import timestamp
from fleet.errors import FleetError
from fleet.rendered import HistoryEntry, PoolRecord
from fleet.rollout_gates import revert_target
from fleet.store import Store


class RolloutRefused(FleetError):
    """A rollout command that cannot be carried out; the message says why."""


def resume(store: Store, pool: str, *, now: datetime) -> PoolRecord:
    """Continue the pool's rollout past every failure reported so far; returns the new record."""
    record = store.get_pool(pool)
    updated = replace(record, resumed_at=timestamp(now))
    store.put_pool(updated)
    return updated


def revert(store: Store, pool: str, *, now: datetime) -> PoolRecord:
    """Set the pool's target back to the last config every node reached; returns the new record."""
    record = store.get_pool(pool)
    if not record.current:
        raise RolloutRefused(f"pool {pool} has no target to revert")
    target = revert_target(record, store.list_node_status())
    if target is None:
        raise RolloutRefused(f"pool {pool}: no earlier config in its history that every node reached")
    stamp = timestamp(now)
    sources = store.get_rendered(target).sources  # NotFound if it is gone (a history's configs are kept)
    updated = replace(record, current=target, sources=sources, history=(*record.history, HistoryEntry(target, stamp)),
                      reverted_from=record.reverted_from or record.current, resumed_at=stamp)
    store.put_pool(updated)
    return updated
