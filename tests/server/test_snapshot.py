"""Which rendered config a pool serves to booting nodes (the MCS rule, MCO `pkg/server/cluster_server.go`: GetConfig)."""

from __future__ import annotations

import pytest

from fleet.node_status import NodeStatus
from fleet.rendered import HistoryEntry, PoolRecord
from fleet.rollout import NodeStatuses
from server.snapshot import served_config

POOL = PoolRecord(name="worker", current="r-3",
                  history=(HistoryEntry("r-1", "t1"), HistoryEntry("r-2", "t2"), HistoryEntry("r-3", "t3")))


def node(name: str, current: str, state: str = "Done", pool: str = "worker") -> NodeStatus:
    return NodeStatus(name, pool, current, "r-3", state)


@pytest.mark.parametrize(("nodes", "served"), [
    ([], "r-3"),
    ([node("a", "r-3")], "r-3"),
    ([node("a", "r-2"), node("b", "r-3")], "r-3"),
    ([node("a", "r-2")], "r-2"),
    ([node("a", "r-1"), node("b", "r-2")], "r-2"),
    ([node("a", "r-3", "Working")], "r-3"),
    ([node("a", "r-2"), node("b", "r-3", "Degraded")], "r-2"),
    ([node("a", "r-0")], "r-3"),
    ([node("a", "r-2", pool="infra")], "r-3"),
], ids=["no-nodes", "updated", "one-updated", "none-updated", "newest-running", "target-working",
        "target-degraded", "unknown-config", "other-pool"])
def test_served_config(nodes: list[NodeStatus], served: str) -> None:
    assert served_config(POOL, NodeStatuses(nodes)) == served


def test_no_target_serves_nothing() -> None:
    assert served_config(PoolRecord(name="worker"), NodeStatuses([node("a", "r-2")])) is None


def test_a_reverted_pool_serves_its_target_at_once() -> None:
    """`mco rollout revert` sets the target back to a config every node reached: booting machines get it at once,
    not the config the revert left, even while every node still runs that one (the MCS rule would hold the target
    back until one node is Done at it)."""
    reverted = PoolRecord(name="worker", current="r-2", reverted_from="r-3", history=(
        *POOL.history, HistoryEntry("r-2", "t4")))
    at_bad = [node("a", "r-3"), node("b", "r-3", "Working")]
    assert served_config(reverted, NodeStatuses(at_bad)) == "r-2"
    assert served_config(POOL, NodeStatuses([node("a", "r-2")])) == "r-2"  # (no revert: the MCS rule)
