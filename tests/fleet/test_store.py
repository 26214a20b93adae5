"""The store contract, run against every implementation: memory, directory and etcd (a real 3-member cluster)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fleet.directory_store import DirectoryStore
from fleet.etcd_client import parse_url
from fleet.etcd_store import EtcdStore
from fleet.rendered import HistoryEntry, MachineConfigSpec, NodeStatus, PoolRecord, RenderedConfig
from fleet.store import InUse, MemoryStore, NotFound, Store, StoreError
from tests.etcd_cluster import EtcdCluster

_prefixes = itertools.count()


def _rendered(name: str = "rendered-worker-abc") -> RenderedConfig:
    return RenderedConfig(name=name, pool="worker",
                          spec=MachineConfigSpec(config={"ignition": {"version": "3.5.0"}}, kernel_arguments=("nosmt",)),
                          sources=("00-worker",))


def open_etcd_store(cluster: EtcdCluster) -> EtcdStore:
    """A store on a key prefix no other test uses."""
    return EtcdStore.open(parse_url(cluster.url(f"test-{next(_prefixes)}")))


@pytest.fixture(params=["memory", "directory", "etcd"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "directory":
        yield DirectoryStore(tmp_path / "store")
    else:
        etcd = open_etcd_store(request.getfixturevalue("etcd_cluster"))
        try:
            yield etcd
        finally:
            etcd.conn.close()


def test_rendered_round_trip(store: Store) -> None:
    store.put_rendered(_rendered())
    assert store.get_rendered("rendered-worker-abc") == _rendered()
    assert store.list_rendered() == ["rendered-worker-abc"]


def test_missing_objects_raise_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.get_rendered("rendered-worker-nope")
    with pytest.raises(NotFound):
        store.get_pool("worker")


@pytest.mark.parametrize("name", ["../etc/passwd", "Worker", "a/b", "", "-x"])
def test_names_that_could_escape_are_refused(store: Store, name: str) -> None:
    with pytest.raises(StoreError):
        store.get_pool(name)


def test_referenced_rendered_config_is_never_deleted(store: Store) -> None:
    store.put_rendered(_rendered("rendered-worker-old"))
    store.put_rendered(_rendered("rendered-worker-new"))
    store.put_pool(PoolRecord(name="worker", current="rendered-worker-new",
                              history=(HistoryEntry("rendered-worker-new", "2026-01-01T00:00:00Z"),)))
    store.put_node_status(NodeStatus("node-a", "worker", "rendered-worker-old", "rendered-worker-new", "Working"))
    with pytest.raises(InUse):
        store.delete_rendered("rendered-worker-old")
    store.put_node_status(NodeStatus("node-a", "worker", "rendered-worker-new", "rendered-worker-new", "Done"))
    store.delete_rendered("rendered-worker-old")
    assert store.list_rendered() == ["rendered-worker-new"]


def test_directory_store_leaves_no_temporary_files(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.put_pool(PoolRecord(name="worker"))
    store.put_pool(PoolRecord(name="worker", current="rendered-worker-x"))
    assert sorted(p.name for p in (tmp_path / "pools").iterdir()) == ["worker.json"]
    assert DirectoryStore(tmp_path).get_pool("worker").current == "rendered-worker-x"


def _report(name: str, message: str) -> NodeStatus:
    return NodeStatus(name, "worker", "rendered-worker-a", "rendered-worker-a", "Done", message)


@pytest.mark.parametrize(("change", "expected"), [
    (lambda root, w: w.put_node_status(_report("node-a", "bbbb")), {"node-a": "bbbb", "node-b": "b0"}),
    (lambda root, w: w.put_node_status(_report("node-c", "c0")), {"node-a": "aaaa", "node-b": "b0", "node-c": "c0"}),
    (lambda root, w: (root / "nodes/node-b.json").unlink(), {"node-a": "aaaa"}),
    (lambda root, w: None, {"node-a": "aaaa", "node-b": "b0"}),
], ids=["rewritten-same-size", "added", "removed", "unchanged"])
def test_directory_store_listing_sees_every_write_of_another_process(
        tmp_path: Path, change: Callable[[Path, DirectoryStore], object], expected: dict[str, str]) -> None:
    reader, writer = DirectoryStore(tmp_path), DirectoryStore(tmp_path)  # each with its own read cache
    writer.put_node_status(_report("node-a", "aaaa"))
    writer.put_node_status(_report("node-b", "b0"))
    reader.list_node_status()
    change(tmp_path, writer)
    assert {s.name: s.message for s in reader.list_node_status()} == expected


def test_directory_store_listing_reads_only_changed_files(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.put_node_status(_report("node-a", "a0"))
    store.put_node_status(_report("node-b", "b0"))
    a0, b0 = store.list_node_status()
    store.put_node_status(_report("node-a", "a1"))
    a1, b1 = store.list_node_status()
    assert b1 is b0 and a1 is not a0 and a1.message == "a1"


def test_directory_store_listing_follows_rapid_same_size_rewrites(tmp_path: Path) -> None:
    reader, writer = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    for i in range(300):  # faster than any timestamp granularity, the size never changes
        writer.put_node_status(_report("node-a", f"{i:04d}"))
        assert reader.list_node_status()[0].message == f"{i:04d}"


def test_directory_store_listing_reports_a_corrupt_file(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.put_node_status(_report("node-a", "x"))
    store.list_node_status()
    (tmp_path / "nodes/node-a.json").write_text("{not json")
    with pytest.raises(StoreError, match="nodes/node-a: corrupt JSON"):
        store.list_node_status()


def test_pools_and_nodes_round_trip_sorted(store: Store) -> None:
    store.put_pool(PoolRecord(name="worker", current="rendered-worker-a", max_unavailable="10%", paused=True))
    store.put_pool(PoolRecord(name="master"))
    store.put_node_status(NodeStatus("node-b", "worker", "rendered-worker-a", "", "Done"))
    store.put_node_status(NodeStatus("node-a", "worker", "", "rendered-worker-a", "Working", "started"))
    assert store.list_pools() == ["master", "worker"]
    assert store.get_pool("worker") == PoolRecord(name="worker", current="rendered-worker-a",
                                                   max_unavailable="10%", paused=True)
    assert [s.name for s in store.list_node_status()] == ["node-a", "node-b"]
    assert store.get_node_status("node-a").message == "started"
    with pytest.raises(NotFound):
        store.get_node_status("node-c")


def test_rendered_configs_are_immutable(store: Store) -> None:
    store.put_rendered(_rendered())
    changed = RenderedConfig(name="rendered-worker-abc", pool="worker",
                             spec=MachineConfigSpec(config={"ignition": {"version": "3.4.0"}}))
    store.put_rendered(changed)
    assert store.get_rendered("rendered-worker-abc") == _rendered()


def test_deleting_a_missing_config_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.delete_rendered("rendered-worker-none")


@pytest.mark.parametrize("handed", [True, False], ids=["stores-what-decide-returns", "stores-nothing-on-none"])
def test_claim_node_stores_the_decision(store: Store, handed: bool) -> None:
    store.put_node_status(NodeStatus("node-a", "worker", "rendered-worker-a", "", "Done"))
    seen: list[list[str]] = []

    def decide(statuses: list[NodeStatus]) -> NodeStatus | None:
        seen.append([s.name for s in statuses])
        return NodeStatus("node-b", "worker", "", "rendered-worker-b", "Working") if handed else None

    assert (store.claim_node("node-b", decide) is not None) == handed
    assert seen[-1] == ["node-a"]
    assert [s.name for s in store.list_node_status()] == (["node-a", "node-b"] if handed else ["node-a"])


def _claim_many(root: str, names: list[str]) -> None:
    """One `mco serve --workers N` process's hand-outs: each node asks once, maxUnavailable 3."""
    from fleet.rollout import desired_for

    store = DirectoryStore(root)
    for name in names:
        def decide(statuses: list[NodeStatus], name: str = name) -> NodeStatus | None:
            record = store.get_pool("worker")
            if desired_for(name, record, statuses) != record.current:
                return None
            return NodeStatus(name, "worker", "rendered-worker-old", record.current or "", "Done")
        store.claim_node(name, decide)


def test_directory_store_claims_hold_across_processes(tmp_path: Path) -> None:
    """Four processes hand out slots for 40 nodes at once through one directory: exactly 3 are handed out."""
    import multiprocessing

    from fleet.rollout import is_unavailable

    store = DirectoryStore(tmp_path)
    store.put_pool(PoolRecord(name="worker", current="rendered-worker-new", max_unavailable=3))
    names = [f"node-{i:02d}" for i in range(40)]
    for name in names:
        store.put_node_status(NodeStatus(name, "worker", "rendered-worker-old", "", "Done"))
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_claim_many, args=(str(tmp_path), names[i::4])) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert sum(1 for s in store.list_node_status() if is_unavailable(s)) == 3
