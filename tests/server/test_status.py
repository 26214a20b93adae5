"""A pool's counts (server/status.py) from one tally of its reports, against the rules written out one by one."""

from __future__ import annotations

import itertools

import pytest

from fleet.machine_entry import MachineEntry
from fleet.node_status import NodeStatus
from fleet.rendered import Condition, PoolRecord
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


RENDER = Condition("RenderDegraded", "True", "", "Failed to render configuration for pool worker: bad")
NEW = "rendered-worker-a"
# MCO pkg/controller/node/status.go calculateStatus: NodeDegraded's message joins, with ", ", `Node %s is reporting:
# %q` of each degraded node whose reason annotation is not empty (a node without one is counted, not named; %q is
# Go's strconv.Quote); Degraded (NodeDegraded or RenderDegraded) carries NodeDegraded's message when nodes are
# degraded, and none when only the render is.
MESSAGES = [
    ("one-node", [NodeStatus("a", "worker", "x", NEW, "Degraded", "disk full")], (), 1,
     'Node a is reporting: "disk full"', 'Node a is reporting: "disk full"'),
    ("empty-reason-counted-not-named",
     [NodeStatus("a", "worker", "x", NEW, "Degraded", ""), NodeStatus("b", "worker", "x", NEW, "Degraded", "oops")],
     (), 2, 'Node b is reporting: "oops"', 'Node b is reporting: "oops"'),
    ("only-empty-reasons", [NodeStatus("a", "worker", "x", NEW, "Degraded", "")], (), 1, "", ""),
    ("go-quoting", [NodeStatus("a", "worker", "x", NEW, "Degraded", 'unit "a.service" failed\n\tC:\\x \x01')], (),
     1, 'Node a is reporting: "unit \\"a.service\\" failed\\n\\tC:\\\\x \\x01"',
     'Node a is reporting: "unit \\"a.service\\" failed\\n\\tC:\\\\x \\x01"'),
    ("render-only", [NodeStatus("a", "worker", NEW, NEW, "Done")], (RENDER,), 0, "", ""),
    ("render-and-node", [NodeStatus("a", "worker", "x", NEW, "Degraded", "disk full")], (RENDER,), 1,
     'Node a is reporting: "disk full"', 'Node a is reporting: "disk full"'),
]


@pytest.mark.parametrize("nodes,conditions,count,node_message,message", [c[1:] for c in MESSAGES],
                         ids=[c[0] for c in MESSAGES])
def test_degraded_messages(nodes: list[NodeStatus], conditions: tuple[Condition, ...], count: int,
                           node_message: str, message: str) -> None:
    status = pool_summary(PoolRecord("worker", current=NEW, conditions=conditions), tally("worker", nodes))["status"]
    by_type = {c["type"]: c for c in status["conditions"]}
    assert status["degradedMachineCount"] == count
    assert by_type["NodeDegraded"]["status"] == ("True" if count else "False")
    assert by_type["NodeDegraded"]["message"] == node_message
    assert by_type["Degraded"]["status"] == ("True" if count or conditions else "False")
    assert by_type["Degraded"]["message"] == message


MINE = "rendered-worker-a-0123"  # node m's machine document's config on the pool's target
MACHINES = (MachineEntry("m", {"hostname": "m"}, MINE, {}, "0123"),)
# MCO pkg/controller/node/status.go getUpdatedMachines (LayeredNodeState.IsDone): Done, current == desired, and
# desired the config the node is to run; here a node a machine document names runs its machine's config
# (PoolRecord.target_for), every other node the pool's target.
OWN_TARGETS = [
    ("machine-at-own-config", [NodeStatus("m", "worker", MINE, MINE, "Done"), NodeStatus("n", "worker", NEW, NEW, "Done")],
     2),
    ("machine-still-at-pool-target", [NodeStatus("m", "worker", NEW, NEW, "Done"),
                                      NodeStatus("n", "worker", NEW, NEW, "Done")], 1),
    ("other-node-at-the-machine-config", [NodeStatus("m", "worker", MINE, MINE, "Done"),
                                          NodeStatus("n", "worker", MINE, MINE, "Done")], 1),
    ("machine-working-at-own-config", [NodeStatus("m", "worker", MINE, MINE, "Working")], 0),
    ("machine-moving-to-own-config", [NodeStatus("m", "worker", NEW, MINE, "Done")], 0),
]


@pytest.mark.parametrize("nodes,updated", [c[1:] for c in OWN_TARGETS], ids=[c[0] for c in OWN_TARGETS])
def test_updated_means_at_its_own_target(nodes: list[NodeStatus], updated: int) -> None:
    record = PoolRecord("worker", current=NEW, machines=MACHINES)
    status = pool_summary(record, tally("worker", nodes))["status"]
    assert status["updatedMachineCount"] == status["readyMachineCount"] == updated
    assert sum(n.state == "Done" and n.current_config == n.desired_config == record.target_for(n.name)
               for n in nodes) == updated  # the rule as the rollout reads each node's target
    updated_condition = next(c for c in status["conditions"] if c["type"] == "Updated")
    assert updated_condition["status"] == ("True" if updated == len(nodes) else "False")
