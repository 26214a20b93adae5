"""Slots in the rollout order through the real app's claim route, with nodes that ask without waiting (no long poll):
whoever asks first does not jump the order; a node silent past the pool's offline grace is passed over, counted in
`GET /pools` and `/metrics`, and takes its place back when it asks again (fleet/rollout_turn.py, server/presence.py)."""

from __future__ import annotations

from typing import Any

from fleet.clock import ManualClock, parse_timestamp
from fleet.node_status import NodeStatus
from fleet.rollout_settings import RolloutSettings
from fleet.store import MemoryStore
from tests.builders import rendered_config
from tests.server.helpers import SOURCES, ignition_config, publish

START = parse_timestamp("2026-12-05T10:00:00Z")
NODES = ("node-d", "node-c", "node-b", "node-a")  # registered oldest first: node-d goes first


async def _served(make_client: Any, grace: int) -> tuple[Any, ManualClock, str, str]:
    store = MemoryStore()
    old = rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=1))
    new = rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=2))
    store.put_rendered(old)
    publish(store, new, max_unavailable=1, rollout=RolloutSettings(offline_grace_seconds=grace))
    for i, name in enumerate(NODES):
        store.put_node_status(NodeStatus(name, "worker", old.name, old.name, "Done", "", "2026-12-01T00:00:00Z",
                                         registered_at=f"2026-11-0{i + 1}T00:00:00Z"))
    assert START is not None
    clock = ManualClock(START)
    return await make_client(store, clock=clock), clock, old.name, new.name


async def _claim(client: Any, node: str) -> str:
    answer = await client.post(f"/nodes/{node}/desired", params={"pool": "worker"})
    assert answer.status == 200, await answer.text()
    return str((await answer.json())["desiredConfig"])


async def _done(client: Any, node: str, config: str) -> None:
    report = {"pool": "worker", "currentConfig": config, "desiredConfig": config, "state": "Done"}
    assert (await client.post(f"/nodes/{node}/status", json=report)).status == 200


async def test_polling_nodes_get_slots_in_the_order(make_client: Any) -> None:
    client, clock, old, new = await _served(make_client, grace=120)
    # everyone polls every 10 s, the newest first: only the oldest is handed the free slot
    for node in reversed(NODES):
        assert await _claim(client, node) == (new if node == "node-d" else old)
    clock.advance(10)
    await _done(client, "node-d", new)
    assert await _claim(client, "node-a") == old  # asks first, but it is node-c's turn (heard from 10 s ago)
    assert await _claim(client, "node-b") == old
    assert await _claim(client, "node-c") == new
    pools = await (await client.get("/pools/worker")).json()
    assert "rolloutSkipped" not in pools["status"]


async def test_an_offline_node_is_passed_over_after_the_grace_and_counted(make_client: Any) -> None:
    client, clock, old, new = await _served(make_client, grace=60)
    assert await _claim(client, "node-d") == new
    clock.advance(30)
    await _done(client, "node-d", new)
    # node-c is silent; node-b and node-a keep asking. Within the grace, the slot is kept for node-c
    assert await _claim(client, "node-b") == old
    clock.advance(25)
    assert await _claim(client, "node-b") == old  # 55 s since the server started hearing: node-c may still come
    clock.advance(10)
    assert await _claim(client, "node-b") == new  # the grace has run out: node-c is passed over
    pools = await (await client.get("/pools/worker")).json()
    assert pools["status"]["rolloutSkipped"] == {"count": 1, "nodes": ["node-c"]}
    metrics = await (await client.get("/metrics")).text()
    assert 'mco_pool_rollout_skipped_nodes{pool="worker"} 1.0' in metrics
    await _done(client, "node-b", new)
    assert await _claim(client, "node-c") == new  # back: it comes before node-a, so the freed slot is its
    assert await _claim(client, "node-a") == old
    pools = await (await client.get("/pools/worker")).json()
    assert "rolloutSkipped" not in pools["status"]
