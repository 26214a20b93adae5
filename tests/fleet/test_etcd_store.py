"""What only the etcd store promises, against a real 3-member cluster: chunked large configs read whole,
fenced writes refused once the leadership is gone, hand-outs that hold maxUnavailable across many clients,
the election's hand-over, and the mirror that follows every change (and survives a compaction)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator

import pytest

from fleet.etcd_client import Connection
from fleet.etcd_election import Election
from fleet.etcd_mirror import Mirror
from fleet.etcd_store import CHUNK, EtcdStore
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord, RenderedConfig
from fleet.rollout import desired_for, is_unavailable
from fleet.store import NotLeader, StoreError
from tests.builders import rendered_config
from tests.etcd_cluster import EtcdCluster
from tests.fleet.stores import etcd_store, open_etcd_store


@pytest.fixture
def store(etcd_cluster: EtcdCluster) -> Iterator[EtcdStore]:
    with etcd_store(etcd_cluster) as opened:
        yield opened


def _big(name: str, size: int) -> RenderedConfig:
    rng = random.Random(size)
    files = [{"path": f"/etc/f{i}", "contents": {"source": "data:," + "".join(rng.choices("abcdef0123", k=4000))}}
             for i in range(size // 4000)]
    return rendered_config(name, files)


@pytest.mark.parametrize("size", [10, 3 * CHUNK + 17_000], ids=["one-chunk", "four-chunks"])
def test_large_rendered_configs_round_trip_in_chunks(store: EtcdStore, size: int) -> None:
    rendered = _big("rendered-worker-big", size)
    store.put_rendered(rendered)
    assert store.get_rendered("rendered-worker-big") == rendered
    blobs = store.key("blobs", "rendered-worker-big", "")
    _, kvs = store._range(blobs, blobs[:-1] + b"0", keys_only=True)
    assert len(kvs) == -(-len(rendered.to_json_bytes()) // CHUNK)


def test_chunks_without_a_manifest_are_invisible_and_collected(store: EtcdStore) -> None:
    tx = store.conn.client.transactions
    store._txn([], [tx.put(store.key("blobs", "rendered-worker-half", "ab", "000000"), b"{")])
    assert store.list_rendered() == []
    assert store.orphan_blobs() == ["rendered-worker-half"]
    store.delete_orphan_blobs("rendered-worker-half")
    assert store.orphan_blobs() == []


def test_a_corrupt_chunk_is_an_error_not_wrong_bytes(store: EtcdStore) -> None:
    rendered = _big("rendered-worker-x", 10)
    store.put_rendered(rendered)
    blobs = store.key("blobs", "rendered-worker-x", "")
    _, kvs = store._range(blobs, blobs[:-1] + b"0", keys_only=True)
    store._put(kvs[0].key, b'{"kind": "MachineConfig"}')
    with pytest.raises(StoreError, match="do not match"):
        store.get_rendered("rendered-worker-x")


def test_fenced_writes_stop_when_the_leader_resigns(store: EtcdStore) -> None:
    election = Election(store.conn, identity="controller-a", ttl=2)
    assert election.campaign()
    fenced = store.fenced(election.key, election.won_revision)
    fenced.put_pool(PoolRecord(name="worker", current="rendered-worker-a"))
    other = Election(store.conn, identity="controller-b", ttl=2)
    assert not other.campaign()
    election.resign()
    with pytest.raises(NotLeader):
        fenced.put_pool(PoolRecord(name="worker", current="rendered-worker-evil"))
    assert other.campaign()
    assert other.leader() == "controller-b"
    assert store.get_pool("worker").current == "rendered-worker-a"
    other.resign()


def test_hand_outs_hold_max_unavailable_across_clients(etcd_cluster: EtcdCluster) -> None:
    """Three stores (three replicas), 12 threads asking for 60 nodes at once: at most 5 ever handed out."""
    first = open_etcd_store(etcd_cluster)
    conns = [Connection(first.conn.settings) for _ in range(2)]
    mirrors = [Mirror(c) for c in conns]
    stores = [first, *(EtcdStore(c, mirror=m) for c, m in zip(conns, mirrors, strict=True))]
    try:
        base = stores[0]
        base.put_pool(PoolRecord(name="worker", current="rendered-worker-new", max_unavailable=5))
        for i in range(60):
            base.put_node_status(NodeStatus(f"node-{i:02d}", "worker", "rendered-worker-old", "", "Done"))
        for m in mirrors:
            m.start()

        def ask(store: EtcdStore, names: list[str]) -> None:
            for name in names:
                def decide(statuses: list[NodeStatus], name: str = name) -> NodeStatus | None:
                    record = store.get_pool("worker")
                    if desired_for(name, record, statuses) != record.current:
                        return None
                    mine = next(s for s in statuses if s.name == name)
                    return NodeStatus(name, "worker", mine.current_config, record.current, "Done")
                store.claim_node(name, decide)

        threads = [threading.Thread(target=ask, args=(stores[i % 3], [f"node-{j:02d}" for j in range(i, 60, 12)]))
                   for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = base.list_node_status()
        assert sum(1 for s in statuses if is_unavailable(s)) == 5
    finally:
        for m in mirrors:
            m.stop()
        for s in stores:
            s.conn.close()


def test_mirror_follows_changes_and_relists_after_compaction(store: EtcdStore, etcd_cluster: EtcdCluster) -> None:
    mirror = Mirror(store.conn)
    changed = threading.Event()
    mirror.on_change(changed.set)
    mirror.start()
    try:
        store.put_pool(PoolRecord(name="worker", current="rendered-worker-a"))
        assert _until(lambda: (p := mirror.pool("worker")) is not None and p.current == "rendered-worker-a")
        assert changed.is_set()
        mirror.stop()  # the watch stops here; meanwhile history moves on and is compacted away
        time.sleep(0.2)
        for i in range(5):
            store.put_pool(PoolRecord(name="worker", current=f"rendered-worker-{i}"))
        etcd_cluster.compact()
        mirror._tasks = [mirror.conn.spawn(mirror._follow()), mirror.conn.spawn(mirror._probe())]
        assert _until(lambda: (p := mirror.pool("worker")) is not None and p.current == "rendered-worker-4")
        assert mirror.relists == 1
        assert _until(lambda: mirror.health().current)
    finally:
        mirror.stop()


def _until(check: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_a_replica_lists_the_rendered_configs_its_mirror_follows(store: EtcdStore) -> None:
    """The replica's listing comes from its mirror (no scan of every key): written and deleted configs show."""
    mirror = Mirror(store.conn)
    replica = EtcdStore(store.conn, mirror=mirror)
    store.put_rendered(_big("rendered-worker-a", 10))
    mirror.start()
    try:
        assert replica.list_rendered() == ["rendered-worker-a"]
        store.put_rendered(_big("rendered-worker-b", 10))
        assert _until(lambda: replica.list_rendered() == ["rendered-worker-a", "rendered-worker-b"])
        store.delete_rendered("rendered-worker-a")
        assert _until(lambda: replica.list_rendered() == ["rendered-worker-b"])
    finally:
        mirror.stop()


# (id, the node's record before, its report, whether the pool's hand-out fence moves)
FENCE_CASES = [
    ("handed-out-then-working", ("old", "new", "Done"), ("old", "new", "Working"), False),
    ("handed-out-then-done", ("old", "new", "Done"), ("new", "new", "Done"), False),
    ("done-then-working", ("old", "old", "Done"), ("old", "old", "Working"), True),
    ("done-then-degraded", ("old", "old", "Done"), ("old", "old", "Degraded"), True),
    ("working-then-degraded", ("old", "new", "Working"), ("old", "new", "Degraded"), False),
    ("first-report-working", None, ("old", "old", "Working"), True),
]


@pytest.mark.parametrize(("before", "report", "moves"), [c[1:] for c in FENCE_CASES], ids=[c[0] for c in FENCE_CASES])
def test_the_fence_moves_only_when_a_node_may_newly_count(store: EtcdStore, before: tuple[str, str, str] | None,
                                                          report: tuple[str, str, str], moves: bool) -> None:
    """A claim compares the fence: it must move when a node may start counting against maxUnavailable, and only
    then (a report of a node already counted would fail every concurrent claim for nothing)."""
    from fleet.node_status import with_report

    def status(fields: tuple[str, str, str]) -> NodeStatus:
        current, desired, state = fields
        return NodeStatus("node-a", "worker", f"rendered-worker-{current}", f"rendered-worker-{desired}", state)

    fence = store.key("state", "rollout", "worker")

    def fence_revision() -> int:
        found = store.conn.call(lambda: store.conn.client.get(fence))
        return found.mod_revision if found is not None else 0

    previous = None
    if before is not None:
        previous = with_report(None, status(before))
        store.put_node_status(previous)
    was = fence_revision()
    store.put_node_status(with_report(previous, status(report)))
    assert (fence_revision() != was) == moves


def test_an_etcd_that_does_not_answer_is_a_store_error_naming_its_status() -> None:
    from fleet.etcd_url import parse_url
    from fleet.store_open import open_store
    from tests.serving import free_port

    unreachable = open_store(parse_url(f"etcd://127.0.0.1:{free_port()}/nobody"))
    try:
        with pytest.raises(StoreError, match="etcd: UNAVAILABLE: "):
            unreachable.list_pools()
    finally:
        unreachable.conn.close()
