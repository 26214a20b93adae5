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
