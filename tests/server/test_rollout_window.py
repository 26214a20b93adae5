"""A maintenance window closing mid-rollout, through the real app's claim route: a node already moving finishes, no
new slot until the window opens again, and the fleet page says when that is (fleet/maintenance_windows.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fleet.clock import ManualClock
from fleet.maintenance_windows import parse_window
from fleet.node_status import NodeStatus
from fleet.rollout_settings import RolloutSettings
from fleet.store import MemoryStore
from server.app import create_app
from server.metrics import ServerMetrics
from server.settings import ServerSettings
from server.snapshot import PayloadCache
from server.state import ServerState
from server.watch import Reloader
from tests.builders import rendered_config
from tests.server.helpers import SOURCES, ignition_config, publish

# Saturdays 22:00-02:00 Berlin; 2026-12-05 is a Saturday (CET, UTC+1)
WINDOW = parse_window({"days": ["Sat"], "start": "22:00", "duration": "4h", "timeZone": "Europe/Berlin"})
OPEN = datetime(2026, 12, 5, 21, 30, tzinfo=UTC)  # 22:30 in Berlin


async def test_window_closes_mid_rollout(aiohttp_client: Any) -> None:
    store = MemoryStore()
    old = rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=1))
    new = rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=2))
    store.put_rendered(old)
    publish(store, new, max_unavailable=1, rollout=RolloutSettings(windows=(WINDOW,)))
    for name in ("node-a", "node-b"):
        store.put_node_status(NodeStatus(name, "worker", old.name, old.name, "Done", "", "2026-12-01T00:00:00Z"))
    clock = ManualClock(OPEN)
    settings = ServerSettings(cluster_dir=None)
    state, metrics = ServerState(), ServerMetrics()
    reloader = Reloader(state=state, store=store, cache=PayloadCache(options=settings.append), metrics=metrics,
                        cluster_dir=None, leader=False)
    await reloader.start()
    client = await aiohttp_client(create_app(state=state, store=store, settings=settings, metrics=metrics, clock=clock))

    async def claim(node: str) -> str:
        answer = await client.post(f"/nodes/{node}/desired", params={"pool": "worker"})
        assert answer.status == 200
        return str((await answer.json())["desiredConfig"])

    assert await claim("node-a") == new.name  # inside the window
    clock.advance(2 * 3600)  # 00:30 in Berlin: still open, node-a is busy
    assert await claim("node-b") == old.name
    clock.advance(2 * 3600)  # 02:30: the window has closed
    assert await claim("node-a") == new.name  # a node mid-update finishes
    report = {"pool": "worker", "currentConfig": new.name, "desiredConfig": new.name, "state": "Done"}
    assert (await client.post("/nodes/node-a/status", json=report)).status == 200
    assert await claim("node-b") == old.name  # the slot is free, but not outside the window
    page = await (await client.get("/ui/")).text()
    assert "outside the maintenance windows; the next opens at 2026-12-12T21:00:00Z" in page
    clock.advance((datetime(2026, 12, 12, 21, 0, tzinfo=UTC) - clock()).total_seconds())
    assert await claim("node-b") == new.name  # the next window is open
    assert clock() - OPEN > timedelta(days=6)
