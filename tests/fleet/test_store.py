"""The store contract, run against every implementation: memory, directory and etcd (a real 3-member cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fleet.directory_store import DirectoryStore
from fleet.node_status import NodeStatus
from fleet.rendered import HistoryEntry, MachineConfigSpec, PoolRecord, RenderedConfig
from fleet.rollout import NodeStatuses
from fleet.store import InUse, NotFound, Store, StoreError
from tests.builders import rendered_config

STORED: dict[str, Any] = {"config": {"ignition": {"version": "3.5.0"}}, "kernel_arguments": ("nosmt",),
                         "sources": ("00-worker",)}


def test_rendered_round_trip(store: Store) -> None:
    store.put_rendered(rendered_config("rendered-worker-abc", **STORED))
    assert store.get_rendered("rendered-worker-abc") == rendered_config("rendered-worker-abc", **STORED)
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
    store.put_rendered(rendered_config("rendered-worker-old", **STORED))
    store.put_rendered(rendered_config("rendered-worker-new", **STORED))
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
    store.put_rendered(rendered_config("rendered-worker-abc", **STORED))
    changed = RenderedConfig(name="rendered-worker-abc", pool="worker",
                             spec=MachineConfigSpec(config={"ignition": {"version": "3.4.0"}}))
    store.put_rendered(changed)
    assert store.get_rendered("rendered-worker-abc") == rendered_config("rendered-worker-abc", **STORED)


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


def test_claims_decide_on_the_pool_counts_of_every_write(store: Store) -> None:
    """Each pool's counts (members, unavailable) that `decide` sees, and `read_statuses` reads, follow every put
    and claim before them."""
    steps = [
        NodeStatus("node-a", "worker", "r-old", "r-new", "Working"),
        NodeStatus("node-b", "worker", "r-old", "r-old", "Done"),
        NodeStatus("node-c", "infra", "r-old", "r-old", "Degraded"),
        NodeStatus("node-a", "worker", "r-new", "r-new", "Done"),
        NodeStatus("node-b", "infra", "r-old", "r-new", "Done"),  # moved to another pool, still targeted
        NodeStatus("node-c", "infra", "r-old", "r-old", "Done"),
    ]
    expected = [(1, 1, 0, 0), (2, 1, 0, 0), (2, 1, 1, 1), (2, 0, 1, 1), (1, 0, 2, 2), (1, 0, 2, 1)]
    seen: list[tuple[int, int, int, int]] = []
    read: list[tuple[int, int, int, int]] = []

    def counts(statuses: NodeStatuses) -> tuple[int, int, int, int]:
        worker, infra = statuses.counts("worker"), statuses.counts("infra")
        return worker.members, worker.unavailable, infra.members, infra.unavailable

    def decide(statuses: NodeStatuses) -> None:
        seen.append(counts(statuses))

    for i, step in enumerate(steps):
        if i % 2:
            store.claim_node(step.name, lambda statuses, step=step: step)  # written by a claim
        else:
            store.put_node_status(step)
        store.claim_node("node-z", decide)
        read.append(store.read_statuses(counts))  # the same view, without a claim
        assert store.read_statuses(lambda statuses, name=step.name: statuses.get(name)) == step
    assert seen == expected
    assert read == expected
    assert store.read_statuses(lambda statuses: statuses.get("node-z")) is None  # reading wrote nothing


def _roll_out(root: str, names: list[str], compact_at: int) -> None:
    """One `mco serve --workers N` process's part of a rollout (maxUnavailable 3): each of its nodes is handed
    the target by a claim, then reports Done at it through another claim. Every decision checks the counts it
    decides on (kept current from the journal) against a new instance's full listing, and maxUnavailable."""
    import time

    from fleet import node_journal
    from fleet.rollout import NodeStatuses, desired_for

    node_journal.COMPACT_AT = compact_at  # compactions happen during the run
    store = DirectoryStore(root)
    left = list(names)
    while left:
        for name in list(left):
            def decide(statuses: NodeStatuses, name: str = name) -> NodeStatus | None:
                full = NodeStatuses(DirectoryStore(root).list_node_status())
                assert statuses.counts("worker") == full.counts("worker")
                assert statuses.counts("worker").unavailable <= 3
                record, mine = store.get_pool("worker"), statuses.get(name)
                assert mine is not None and record.current is not None
                if mine.desired_config == record.current:  # handed out before: the update is done
                    return NodeStatus(name, "worker", record.current, record.current, "Done")
                if desired_for(name, record, statuses) != record.current:
                    return None  # no slot free now
                return NodeStatus(name, "worker", "rendered-worker-old", record.current, "Working")
            claimed = store.claim_node(name, decide)
            if claimed is not None and claimed.state == "Done":
                left.remove(name)
            elif claimed is None:
                time.sleep(0.01)  # other processes hold the slots


def _report_other_pool(root: str, count: int, compact_at: int) -> None:
    """Reports of another pool's nodes, written without a claim, interleaved with the rollout's."""
    from fleet import node_journal

    node_journal.COMPACT_AT = compact_at
    store = DirectoryStore(root)
    for i in range(count):
        store.put_node_status(NodeStatus(f"infra-{i % 10}", "infra", "rendered-infra-a", "", "Done", str(i)))


def test_directory_store_claims_hold_across_processes(tmp_path: Path) -> None:
    """Four processes roll 40 nodes out through one directory while a fifth stores other reports and the
    journal is compacted: no claim ever sees counts that differ from a full listing or exceed maxUnavailable."""
    import multiprocessing

    from fleet.node_journal import HEADER_LEN, JOURNAL

    store = DirectoryStore(tmp_path)
    store.put_pool(PoolRecord(name="worker", current="rendered-worker-new", max_unavailable=3))
    names = [f"node-{i:02d}" for i in range(40)]
    for name in names:
        store.put_node_status(NodeStatus(name, "worker", "rendered-worker-old", "", "Done"))
    store.list_node_status()
    generation = (tmp_path / JOURNAL).read_bytes()[:HEADER_LEN]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_roll_out, args=(str(tmp_path), names[i::4], 2048)) for i in range(4)]
    procs.append(ctx.Process(target=_report_other_pool, args=(str(tmp_path), 300, 2048)))
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0
    assert (tmp_path / JOURNAL).read_bytes()[:HEADER_LEN] != generation  # compacted meanwhile
    statuses = store.list_node_status()
    assert {s.name: s.message for s in statuses} == {s.name: s.message for s in DirectoryStore(tmp_path).list_node_status()}
    worker = [s for s in statuses if s.pool == "worker"]
    assert len(worker) == 40 and all(s.state == "Done" and s.current_config == "rendered-worker-new" for s in worker)
    assert {s.name: s.message for s in statuses if s.pool == "infra"} == {f"infra-{i}": str(290 + i) for i in range(10)}


@pytest.mark.parametrize("corrupt", [b"{not json", b"[1, 2]", b"[" * 100_000 + b"]" * 100_000],
                         ids=["not-json", "not-an-object", "nested-beyond-the-parser"])
def test_a_corrupt_pool_record_is_a_store_error_naming_it(tmp_path: Path, corrupt: bytes) -> None:
    """Every store reads its records with one reader (fleet/store.py `stored_object`): whatever the bytes, a
    StoreError naming the record, never a path, never the parser's own exception."""
    store = DirectoryStore(tmp_path)
    store.put_pool(PoolRecord("worker"))
    (tmp_path / "pools/worker.json").write_bytes(corrupt)
    with pytest.raises(StoreError) as info:
        store.get_pool("worker")
    assert info.value.path == "pools/worker" and str(tmp_path) not in str(info.value)
