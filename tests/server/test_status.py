"""A pool's counts (server/status.py) from one tally of its reports, against the rules written out one by one."""

from __future__ import annotations

import itertools

import pytest

from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.rollout import is_unavailable
from server.status import pool_summary, tally

CONFIGS = ["rendered-worker-a", "rendered-worker-b", ""]
NODES = [NodeStatus(f"n{i:03d}", "worker" if i % 7 else "master", current, desired, state)
         for i, (state, current, desired) in enumerate(itertools.product(
             ["Done", "Working", "Degraded"], CONFIGS, CONFIGS))]


@pytest.mark.parametrize("target", ["rendered-worker-a", "rendered-worker-b", None], ids=["a", "b", "none"])
@pytest.mark.parametrize("keep", [slice(None), slice(0, 9), slice(0, 0)], ids=["mixed", "only-done", "empty"])
def test_counts_follow_the_rules(target: str | None, keep: slice) -> None:
    nodes = NODES[keep]
    members = [n for n in nodes if n.pool == "worker"]
    counted = tally("worker", nodes)
    status = pool_summary(PoolRecord("worker", current=target), counted)["status"]
    updated = [n for n in members if n.state == "Done" and n.current_config == n.desired_config == target]
    assert status["machineCount"] == len(members)
    assert status["updatedMachineCount"] == status["readyMachineCount"] == len(updated)
    assert status["degradedMachineCount"] == sum(n.state == "Degraded" for n in members)
    assert status["unavailableMachineCount"] == sum(
        n.state != "Done" or (n.desired_config != "" and n.current_config != n.desired_config) for n in members)
    assert status["unavailableMachineCount"] == sum(map(is_unavailable, members))  # the rollout's own predicate
    if members and len(updated) != len(members):
        first_most = max(dict.fromkeys(n.current_config for n in members),
                         key=lambda c: sum(n.current_config == c for n in members))
        assert status["configuration"]["name"] == first_most
    else:
        assert status["configuration"]["name"] == target
    assert [n.name for n in counted.members] == [n.name for n in members]
