"""A machine's reports over time live in its record in the store: a restarted server shows them, and every
replica of an etcd store shows the same ones, whichever replica each report reached."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from fleet.directory_store import DirectoryStore
from fleet.etcd_url import parse_url
from fleet.store import Store
from fleet.store_open import close_store, open_store
from server.app import create_app
from server.metrics import ServerMetrics
from server.settings import ServerSettings
from server.state import ServerState
from tests.server.fleetpage.fleet import Rollout, mid_rollout

_ROW = re.compile(r'<td data-label="State"><span class="state state-(\w+)">.*?<td data-label="Message" '
                  r'class="message">([^<]*)</td>', re.S)


async def _client(aiohttp_client: Any, store: Store) -> TestClient:
    app = create_app(state=ServerState(), store=store, settings=ServerSettings(cluster_dir=None, poll_interval=0.05),
                     metrics=ServerMetrics())
    client: TestClient = await aiohttp_client(app)
    return client


async def _post(client: TestClient, rollout: Rollout, state: str, message: str) -> None:
    current = rollout.new.name if state == "Done" else rollout.old.name
    body = {"pool": "worker", "currentConfig": current, "desiredConfig": rollout.new.name, "state": state,
            "message": message}
    response = await client.post("/nodes/worker-1/status", json=body)
    assert response.status == 200, await response.text()


async def _reports(client: TestClient) -> list[tuple[str, str]]:
    text = await (await client.get("/ui/nodes/worker-1")).text()
    return _ROW.findall(text[text.index('id="reports"'):])


async def test_reports_over_time_survive_a_restart(aiohttp_client: Any, tmp_path: Path) -> None:
    rollout = mid_rollout(DirectoryStore(tmp_path / "store"))
    first = await _client(aiohttp_client, DirectoryStore(tmp_path / "store"))
    await _post(first, rollout, "Working", "rebooting")
    await _post(first, rollout, "Working", "rebooting")  # a repeat: no new entry
    await _post(first, rollout, "Done", "")
    shown = await _reports(first)
    await first.close()
    restarted = await _client(aiohttp_client, DirectoryStore(tmp_path / "store"))
    assert await _reports(restarted) == shown == [("done", ""), ("working", "rebooting"), ("working", "draining")]


async def test_every_replica_shows_the_same_reports(aiohttp_client: Any, etcd_cluster: Any) -> None:
    url = parse_url(etcd_cluster.url(f"fleetpage-history-{os.getpid()}"))
    writer = open_store(url)
    try:
        rollout = mid_rollout(writer)
    finally:
        close_store(writer)
    replicas = [open_store(url, follow=True) for _ in range(2)]
    try:
        a, b = [await _client(aiohttp_client, r) for r in replicas]
        for client, message in ((a, "drained"), (b, "rebooting"), (a, "rebooted"), (b, "")):
            await _post(client, rollout, "Done" if not message else "Working", message)
        expected = [("done", ""), ("working", "rebooted"), ("working", "rebooting"), ("working", "drained"),
                    ("working", "draining")]
        for client in (a, b):  # each replica's mirror follows the other's writes; wait until it has them all
            for _ in range(200):
                if await _reports(client) == expected:
                    break
                await asyncio.sleep(0.05)
            assert await _reports(client) == expected
    finally:
        for replica in replicas:
            close_store(replica)
