"""Rolling rollout across a pool: which rendered config a node may move to now (notes/mco.md §2.8). Pure.

The server's `GET /nodes/{name}/desired` calls `desired_for`. A node is handed the pool's target while
fewer than the pool's `maxUnavailable` other nodes of the pool are unavailable, and keeps its current
config otherwise. Unavailable means: reporting `Working` or `Degraded`, or targeted at a config it has
not reached yet (desiredConfig set and != currentConfig). A Degraded node therefore stops the rollout from
widening. A node that is already moving to the target (its reported desiredConfig is the target) keeps
getting it, so a rollout never stalls half-way. A paused pool hands out nothing new. A node the server has
never heard of is a machine being provisioned: like `/config/<pool>` for a booting machine, it gets the
pool's target without waiting for a slot (it has no old config to keep).

Concurrency: the decision is only as good as the statuses it sees; the caller should record a hand-out
(e.g. store the node's status with `desiredConfig = target`) before answering, under one lock, so two
nodes asking at the same moment are counted against each other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fleet.errors import FleetError
from fleet.rendered import NodeStatus, PoolRecord

_PERCENT_RE = re.compile(r"^\s*(\d+)\s*%\s*$")
_INT_RE = re.compile(r"^\s*(\d+)\s*$")


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


def is_unavailable(status: NodeStatus) -> bool:
    """True when the node counts against maxUnavailable (Working, Degraded, or targeted and not there yet)."""
    if status.state in ("Working", "Degraded", "Unreconcilable"):
        return True
    return bool(status.desired_config) and status.current_config != status.desired_config


def is_updated(status: NodeStatus, target: str | None) -> bool:
    """True when the node is Done at the target."""
    return bool(target) and status.state == "Done" and status.current_config == target == (
        status.desired_config or status.current_config)


def desired_for(node: str, pool: PoolRecord, statuses: Sequence[NodeStatus]) -> str | None:
    """The rendered config `node` should apply now (rules in the module docstring); None when unknown."""
    members = [s for s in statuses if s.pool == pool.name]
    mine = next((s for s in statuses if s.name == node), None)
    current = (mine.current_config or None) if mine else None
    target = pool.current
    if not target or current == target:
        return current or target
    if mine is None:
        return target
    if pool.paused:
        return current
    if mine.desired_config == target:
        return target
    size = len({s.name for s in members} | {node})
    busy = sum(1 for s in members if s.name != node and is_unavailable(s))
    if busy < max_unavailable_count(pool.max_unavailable, size):
        return target
    return current
