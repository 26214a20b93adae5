"""The store contract, run against both implementations."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.rendered import HistoryEntry, MachineConfigSpec, NodeStatus, PoolRecord, RenderedConfig
from fleet.store import DirectoryStore, InUse, MemoryStore, NotFound, Store, StoreError


def _rendered(name: str = "rendered-worker-abc") -> RenderedConfig:
    return RenderedConfig(name=name, pool="worker",
                          spec=MachineConfigSpec(config={"ignition": {"version": "3.5.0"}}, kernel_arguments=("nosmt",)),
                          sources=("00-worker",))


@pytest.fixture(params=["memory", "directory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return MemoryStore() if request.param == "memory" else DirectoryStore(tmp_path / "store")


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
