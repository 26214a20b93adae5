"""The controller's rules in-process, against a real etcd cluster and the real renderer: garbage collection
keeps everything referenced, an unusable cluster directory keeps the last good target and is published, and a
deposed leader's render writes nothing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.etcd_election import Election
from fleet.etcd_store import EtcdStore
from fleet.machine_entry import MachineEntry
from fleet.node_status import NodeStatus
from fleet.rendered import HistoryEntry, PoolRecord
from server.controller import Controller, collect_garbage
from tests.builders import rendered_config
from tests.etcd_cluster import EtcdCluster
from tests.fleet.stores import etcd_store

HERE = Path(__file__).resolve().parent


@pytest.fixture
def store(etcd_cluster: EtcdCluster) -> Iterator[EtcdStore]:
    with etcd_store(etcd_cluster) as opened:
        yield opened


def test_garbage_collection_deletes_only_unreferenced_configs(store: EtcdStore) -> None:
    for name in ("current", "history", "node-current", "node-desired", "machine", "unused"):
        store.put_rendered(rendered_config(f"rendered-worker-{name}"))
    machine = MachineEntry("node-m", {"hostname": "node-m"}, "rendered-worker-machine", {}, "0" * 32)
    store.put_pool(PoolRecord(name="worker", current="rendered-worker-current",
                              history=(HistoryEntry("rendered-worker-history", "2026-01-01T00:00:00Z"),),
                              machines=(machine,)))
    store.put_node_status(NodeStatus("node-a", "worker", "rendered-worker-node-current",
                                     "rendered-worker-node-desired", "Working"))
    tx = store.conn.client.transactions
    store._txn([], [tx.put(store.key("blobs", "rendered-worker-orphan", "ab", "000000"), b"{")])
    assert collect_garbage(store) == ["rendered-worker-unused"]
    assert store.list_rendered() == ["rendered-worker-current", "rendered-worker-history", "rendered-worker-machine",
                                     "rendered-worker-node-current", "rendered-worker-node-desired"]
    assert store.orphan_blobs() == []


def test_render_error_keeps_the_target_and_is_published(store: EtcdStore, tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    shutil.copytree(HERE / "cluster", cluster)
    election = Election(store.conn, identity="ctl", ttl=2)
    assert election.campaign()
    controller = Controller(cluster, store, election)
    controller.step()
    target = store.get_pool("worker").current
    assert target and controller.renders == 1
    (cluster / "cluster.yaml").unlink()
    controller.step()
    assert store.get_pool("worker").current == target
    _, kvs = store._range(store.key("state", "controller"))
    assert b"cluster.yaml" in kvs[0].value
    election.resign()


def test_a_deposed_leader_writes_nothing(store: EtcdStore, tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    shutil.copytree(HERE / "cluster", cluster)
    election = Election(store.conn, identity="old", ttl=2)
    assert election.campaign()
    controller = Controller(cluster, store, election)
    won = election.won_revision
    election.resign()
    election.won_revision = won  # it still believes it leads (a partition, a stalled process)
    election._valid_until = float("inf")
    controller.render()
    assert store.list_pools() == [] and store.list_rendered() == []
    assert election.won_revision == 0
