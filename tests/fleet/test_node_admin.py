"""Relabelling a node in every store: its labels change, its pool follows by the membership rule, nothing else."""

from __future__ import annotations

import pytest

from fleet.node_admin import node_list, node_view, relabel, selectors_of
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.store import NotFound, Store

GPU = "node-role.kubernetes.io/gpu"


def test_relabel_moves_the_node_by_the_rule(store: Store) -> None:
    store.put_pool(PoolRecord("worker", current="rendered-worker-a"))
    store.put_pool(PoolRecord("gpu", current="rendered-gpu-a"))
    store.put_pool(PoolRecord("infra"))
    store.put_node_status(NodeStatus("n1", "worker", "rendered-worker-a", "rendered-worker-a", "Done", "", "t0"))
    moved = relabel(store, "n1", {GPU: ""}, (), selectors_of(store))
    assert (moved.pool, moved.current_config, moved.state) == ("gpu", "rendered-worker-a", "Done")
    assert store.get_node_status("n1").labels == {GPU: "", "node-role.kubernetes.io/worker": ""}
    assert store.read_statuses(lambda s: (s.counts("gpu").members, s.counts("worker").members)) == (1, 0)
    refused = relabel(store, "n1", {"node-role.kubernetes.io/infra": ""}, (), selectors_of(store))
    assert refused.pool == ""  # two custom roles: in no pool
    view = node_view(refused, selectors_of(store))
    assert view["membership"]["reason"] == "node n1 belongs to 2 custom roles, cannot proceed with this Node"
    back = relabel(store, "n1", {}, (GPU, "node-role.kubernetes.io/infra"), selectors_of(store))
    assert back.pool == "worker"
    assert [n["pool"] for n in node_list(store.list_node_status(), selectors_of(store))["items"]] == ["worker"]


def test_relabel_of_an_unknown_node_writes_nothing(store: Store) -> None:
    store.put_pool(PoolRecord("worker"))
    with pytest.raises(NotFound):
        relabel(store, "ghost", {GPU: ""}, (), selectors_of(store))
    assert store.list_node_status() == []


def test_a_record_written_before_labels_has_its_role_label() -> None:
    old = {"name": "n1", "pool": "infra", "currentConfig": "", "desiredConfig": "", "state": "Done"}
    assert NodeStatus.from_dict(old).labels == {"node-role.kubernetes.io/infra": ""}
    assert NodeStatus.from_dict({**old, "labels": {}}).labels == {}
    assert PoolRecord.from_dict({"name": "gpu", "nodeSelector": {GPU: ""}}).selector.match_labels == {GPU: ""}
