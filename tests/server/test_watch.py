"""Re-render on change: atomic swaps while requests are in flight, and a broken edit keeps the last good render."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from fleet.directory_store import DirectoryStore
from server.run import Running, start
from server.settings import ServerSettings
from tests.server.helpers import ACCEPT_33

HERE = Path(__file__).resolve().parent
MANIFEST = "manifests/10-worker-demo.yaml"
HEADERS = {"Accept": ACCEPT_33, "Accept-Encoding": "identity"}


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Running, Path, str, DirectoryStore]]:
    cluster = tmp_path / "cluster"
    shutil.copytree(HERE / "cluster", cluster)
    store = DirectoryStore(tmp_path / "store")
    settings = ServerSettings(cluster_dir=cluster, listen=("127.0.0.1", 0), access_log=None, poll_interval=0.05)
    running = await start(settings, store=store)
    yield running, cluster, f"http://127.0.0.1:{running.addresses[0][2]}", store
    await running.stop()


def _edit(cluster: Path, text: str) -> None:
    path = cluster / MANIFEST
    source = path.read_text()
    marker = "hello%20from%20the%20server"
    start = source.index("data:,") + len("data:,")
    end = source.index("%0A", start)
    assert marker in source or start
    path.write_text(source[:start] + text + source[end:])


async def _served_name(session: aiohttp.ClientSession, base: str) -> str:
    async with session.get(f"{base}/config/worker", headers=HEADERS) as response:
        return response.headers["X-Rendered-Config"]


async def _wait_for(predicate, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not await predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_changes_on_disk_swap_atomically_under_load(served: tuple[Running, Path, str, DirectoryStore]) -> None:
    running, cluster, base, store = served
    seen: list[tuple[int, str, str, bytes]] = []
    stop = asyncio.Event()

    async def hammer(session: aiohttp.ClientSession) -> None:
        while not stop.is_set():
            async with session.get(f"{base}/config/worker", headers=HEADERS) as response:
                body = await response.read()
                seen.append((response.status, response.headers.get("ETag", ""),
                             response.headers.get("X-Rendered-Config", ""), body))

    names = []
    async with aiohttp.ClientSession() as session:
        names.append(await _served_name(session, base))
        workers = [asyncio.create_task(hammer(session)) for _ in range(8)]
        for i in range(5):
            _edit(cluster, f"edit%20number%20{i}")
            previous = names[-1]

            async def moved(previous: str = previous) -> bool:
                return await _served_name(session, base) != previous
            await _wait_for(moved)
            names.append(await _served_name(session, base))
        stop.set()
        await asyncio.gather(*workers)
    assert len(set(names)) == 6
    assert len(seen) > 50
    stored = set(store.list_rendered())
    for status, etag, name, body in seen:
        assert status == 200
        assert etag == f'"{hashlib.sha256(body).hexdigest()}"'  # whole bytes of one render, never a mix
        assert json.loads(body)["ignition"]["version"] == "3.3.0"
        assert name in stored
    assert {name for _, _, name, _ in seen} <= set(names)


async def test_broken_edit_keeps_the_last_good_render(served: tuple[Running, Path, str, DirectoryStore]) -> None:
    running, cluster, base, store = served
    async with aiohttp.ClientSession() as session:
        good = await _served_name(session, base)
        path = cluster / MANIFEST
        original = path.read_text()
        path.write_text(original.replace("path: /etc/demo/plain.conf", "path: etc/demo/plain.conf"))

        async def degraded() -> bool:
            async with session.get(f"{base}/pools/worker") as response:
                conditions = {c["type"]: c for c in (await response.json())["status"]["conditions"]}
                return conditions["RenderDegraded"]["status"] == "True"
        await _wait_for(degraded)
        async with session.get(f"{base}/pools/worker") as response:
            pool = await response.json()
        render = next(c for c in pool["status"]["conditions"] if c["type"] == "RenderDegraded")
        assert "10-worker-demo" in render["message"] or "path" in render["message"]
        async with session.get(f"{base}/config/worker", headers=HEADERS) as response:
            assert response.status == 200
            assert response.headers["X-Rendered-Config"] == good
        async with session.get(f"{base}/healthz") as response:
            assert response.status == 200

        path.write_text(original.replace("hello%20from", "fixed%20hello%20from"))

        async def recovered() -> bool:
            return await _served_name(session, base) != good and not await degraded()
        await _wait_for(recovered)


async def test_unusable_cluster_dir_keeps_serving(served: tuple[Running, Path, str, DirectoryStore]) -> None:
    running, cluster, base, store = served
    async with aiohttp.ClientSession() as session:
        good = await _served_name(session, base)
        (cluster / "cluster.yaml").write_text("name: [unclosed\n")
        await _wait_for(lambda: _true_if(bool(running.state.render_errors)))
        assert await _served_name(session, base) == good
        async with session.get(f"{base}/pools") as response:
            assert (await response.json())["renderErrors"]


async def _true_if(value: bool) -> bool:
    return value


async def test_new_target_is_served_once_a_node_runs_it(tmp_path: Path) -> None:
    """The MCS rule: booting nodes get the config the pool's nodes are at until one is updated to the target."""
    from fleet.rendered import HistoryEntry
    from tests.builders import rendered_config
    from tests.server.helpers import SOURCES, ignition_config, publish

    store = DirectoryStore(tmp_path / "store")
    old = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=1))
    new = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=2))
    store.put_rendered(old)
    publish(store, new, history=(HistoryEntry(old.name, "t0"), HistoryEntry(new.name, "t1")))
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log=None, poll_interval=5)
    running = await start(settings, store=store, leader=False)
    base = f"http://127.0.0.1:{running.addresses[0][2]}"
    try:
        async with aiohttp.ClientSession() as session:
            assert await _served_name(session, base) == new.name  # no node has reported: the target

            async def report(node: str, current: str, state: str) -> None:
                body = {"pool": "worker", "currentConfig": current, "desiredConfig": new.name, "state": state}
                async with session.post(f"{base}/nodes/{node}/status", json=body) as response:
                    assert response.status == 200

            await report("node-a", old.name, "Working")
            await _wait_for(lambda: _is(session, base, old.name))  # held back: nodes are still at the old one
            await report("node-b", old.name, "Done")
            assert await _served_name(session, base) == old.name
            await report("node-a", new.name, "Done")
            await _wait_for(lambda: _is(session, base, new.name))  # one node survived it: release
    finally:
        await running.stop()


async def _is(session: aiohttp.ClientSession, base: str, name: str) -> bool:
    return await _served_name(session, base) == name


@pytest.mark.parametrize("yields", [0, 1, 2, 3], ids=lambda n: f"{n}-yields")
async def test_a_wake_at_the_moment_of_the_stop_still_stops_the_reloader(yields: int) -> None:
    """Regression: the poll loop waited with Python 3.11's `asyncio.wait_for`, which returns normally when the
    task is cancelled while the awaited wake has just completed; the cancel was lost, the loop polled on, and
    the server's stop waited for it forever. A wake set just before the cancel, at every interleaving."""
    from fleet.store import MemoryStore
    from server.metrics import ServerMetrics
    from server.snapshot import PayloadCache
    from server.state import ServerState
    from server.watch import Reloader

    state = ServerState()
    reloader = Reloader(state=state, store=MemoryStore(), cache=PayloadCache(), metrics=ServerMetrics(),
                        cluster_dir=None, leader=False, interval=0.05)
    task = asyncio.create_task(reloader.run())
    await asyncio.sleep(0.01)  # waiting for a wake or its interval
    state.wake.set()
    for _ in range(yields):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=10)
    assert done and task.cancelled(), "the reloader went on polling after its cancel"
