"""A reboot to repair drift takes a rollout slot like any update: a node booted without its config's kernel
arguments (the next boot has them again) may reboot only while the pool's rollout would hand it an update now.

The same rules as fleet/rollout.py `desired_for`, called rather than restated: the pool is not paused, nothing
holds new slots (fleet/rollout_gates.py `hold_reason`: a failure pause, a closed maintenance window, a canary
wave), and fewer than maxUnavailable other members are unavailable. The server records the granted node as
Working in the same claim (the store's lock or compare-and-swap), so two nodes asking at once are counted
against each other and never more than maxUnavailable reboot. Pure.
"""

from __future__ import annotations

from datetime import datetime

from fleet.rendered import PoolRecord
from fleet.rollout import NodeStatuses, is_unavailable, max_unavailable_count
from fleet.rollout_gates import hold_reason

REBOOTING = "rebooting to repair drift"  # the message the node's record carries while its slot is taken


def reboot_refusal(node: str, pool: PoolRecord, statuses: NodeStatuses, now: datetime) -> str | None:
    """None when `node` may take a slot to reboot now; otherwise why it may not."""
    mine = statuses.get(node)
    if mine is None or mine.pool != pool.name:
        return f"node {node} is not a member of pool {pool.name}"
    if mine.current_config != pool.target_for(node):
        return "the node is not at the pool's target (an update takes its slot the usual way)"
    if pool.paused:
        return f"pool {pool.name} is paused"
    held = hold_reason(node, pool, statuses, now)
    if held is not None:
        return held
    counts = statuses.counts(pool.name)
    busy = counts.unavailable - (1 if is_unavailable(mine) else 0)
    allowed = max_unavailable_count(pool.max_unavailable, counts.members)
    if busy >= allowed:
        return f"{busy} of {counts.members} nodes unavailable (maxUnavailable {allowed})"
    return None
