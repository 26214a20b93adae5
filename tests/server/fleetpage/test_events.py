"""The event stream's change test: the same records (the same objects, or equal new ones) are no change."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fleet.directory_store import DirectoryStore
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.store import MemoryStore
from server.fleetpage.events import Fleet, changed, read_fleet

POOL = PoolRecord("worker", current="rendered-worker-b")
NODES = [NodeStatus(f"worker-{i}", "worker", "rendered-worker-a", "rendered-worker-b", "Done") for i in range(3)]
BEFORE: Fleet = ([POOL], NODES)


@pytest.mark.parametrize(("now", "expected"), [
    (BEFORE, False),
    (([replace(POOL)], [replace(n) for n in NODES]), False),
    (([POOL], [*NODES[:2], replace(NODES[2], state="Working")]), True),
    (([POOL], NODES[:2]), True),
    (([POOL], [*NODES[:2], replace(NODES[2], reported_at="2026-12-03T10:00:00Z")]), True),
    (([replace(POOL, paused=True)], NODES), True),
    (([], NODES), True),
], ids=["same-objects", "equal-copies", "report-changed", "node-gone", "report-repeated-later", "pool-changed",
        "pool-gone"])
def test_changed(now: Fleet, expected: bool) -> None:
    assert changed(BEFORE, now) is expected


def test_the_first_read_is_no_change() -> None:
    assert changed(None, BEFORE) is False


@pytest.mark.parametrize("kind", ["memory", "directory"])
def test_stores_hand_back_what_compares_equal_until_a_write(kind: str, tmp_path: object) -> None:
    store = MemoryStore() if kind == "memory" else DirectoryStore(f"{tmp_path}/store")
    store.put_pool(POOL)
    for node in NODES:
        store.put_node_status(node)
    first = read_fleet(store)
    again = read_fleet(store)
    assert not changed(first, again)
    assert again[1] is first[1]  # the same listing: comparing it costs nothing (docs/fleet-page.md, Live updates)
    store.put_node_status(replace(NODES[1], state="Working"))
    assert changed(first, read_fleet(store))
