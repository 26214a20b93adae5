"""Structured access logs (no secrets), and the render metrics of a leader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import aiohttp

from fleet.store import MemoryStore
from server.auth import AccessPolicy
from server.run import start
from server.settings import ServerSettings
from tests.builders import rendered_config
from tests.server.helpers import ACCEPT_33, SOURCES, ignition_config, publish

HERE = Path(__file__).resolve().parent
SECRET = "very-secret-token"


async def test_access_log_is_json_without_secrets(tmp_path: Path) -> None:
    store = MemoryStore()
    publish(store, rendered_config(pool="worker", sources=SOURCES, config=ignition_config()))
    log = tmp_path / "access.log"
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log=str(log),
                              policy=AccessPolicy(tokens={"worker": (SECRET,)}))
    running = await start(settings, store=store, leader=False)
    base = f"http://127.0.0.1:{running.addresses[0][2]}"
    try:
        async with aiohttp.ClientSession() as session:
            headers = {"Accept": ACCEPT_33, "Authorization": f"Bearer {SECRET}", "User-Agent": "Ignition/test"}
            async with session.get(f"{base}/config/worker", headers=headers) as response:
                assert response.status == 200
            async with session.get(f"{base}/config/worker?token={SECRET}", headers={"Accept": ACCEPT_33}) as r:
                assert r.status == 403
            async with session.get(f"{base}/config/nope") as response:
                assert response.status == 404
    finally:
        await running.stop()
    text = log.read_text()
    assert SECRET not in text
    entries = [json.loads(line) for line in text.splitlines()]
    ok = next(e for e in entries if e["status"] == 200)
    assert ok["path"] == "/config/worker" and ok["pool"] == "worker" and ok["version"] == "3.3.0"
    assert ok["ua"] == "Ignition/test" and ok["accept"] == ACCEPT_33 and ok["rendered"].startswith("rendered-worker-")
    assert ok["bytes"] > 0 and ok["method"] == "GET" and ok["remote"] == "127.0.0.1"
    refused = next(e for e in entries if e["status"] == 403)
    assert refused["path"] == "/config/worker" and refused["refused"] == "no bearer token"
    assert any(e["status"] == 404 and e["path"] == "/config/nope" for e in entries)


async def test_render_metrics(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    shutil.copytree(HERE / "cluster", cluster)
    settings = ServerSettings(cluster_dir=cluster, listen=("127.0.0.1", 0), access_log=None)
    running = await start(settings, store=MemoryStore())
    try:
        async with aiohttp.ClientSession() as session:
            base = f"http://127.0.0.1:{running.addresses[0][2]}"
            headers = {"Accept": ACCEPT_33, "Accept-Encoding": "identity"}
            async with session.get(f"{base}/config/worker", headers=headers) as response:
                size = len(await response.read())
            async with session.get(f"{base}/metrics") as response:
                text = await response.text()
    finally:
        await running.stop()
    assert "mco_render_duration_seconds_count 1.0" in text
    assert 'mco_renders_total{outcome="ok"} 1.0' in text
    assert "mco_ready 1.0" in text
    assert f'mco_config_bytes_served_total{{pool="worker",version="3.3.0"}} {float(size)}' in text
