"""Held claims learn the new OS image at once: the real `mco serve` holding several claims (`?wait=`), the pool's
target moves to a config with a new OS image; the held claims whose turn it is are answered with it as `prefetch`
within about a second (not at their hold's end), no more at once than the pool's `max-concurrent-pulls`, while the
slots stay within maxUnavailable; a node reporting the image staged lets the next one pull, as promptly
(server/handout_wait.py `offer_pulls`, fleet/image_pulls.py `pull_rule`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import requests
import yaml

from fleet.clock import system_clock, timestamp
from fleet.directory_store import DirectoryStore
from fleet.machine_entry import MachineEntry
from fleet.node_status import NodeStatus
from fleet.rollout_settings import RolloutSettings
from server.run import start
from server.settings import ServerSettings
from tests.builders import machine_config_manifest, rendered_config
from tests.server.helpers import SOURCES, ignition_config, publish
from tests.server.scale_out import ROLLOUT_POOL, until
from tests.serving import serving

HOLD = 30      # seconds a claim may be held: an answer long before it was woken, not timed out
PROMPT = 1.5   # seconds: "about a second" after the server's first answer to the target's move
NODES = [f"node-{i}" for i in range(6)]  # registered in this order: the rollout's order


def _cluster(root: Path, pulls: int, max_unavailable: int = 1) -> Path:
    """A cluster whose worker pool has `max_unavailable` and `pulls` max-concurrent-pulls, on OS image `old`."""
    (root / "manifests").mkdir(parents=True)
    (root / "cluster.yaml").write_text("name: pulls\nbaseDomain: pulls.test\n")
    pool = yaml.safe_load(ROLLOUT_POOL)
    pool["metadata"]["annotations"] = {"rollout.machine-config.io/max-concurrent-pulls": str(pulls)}
    pool["spec"]["maxUnavailable"] = max_unavailable
    (root / "manifests" / "00-pool.yaml").write_text(yaml.safe_dump(pool))
    _worker(root, "old")
    return root


def _worker(root: Path, generation: str) -> None:
    (root / "manifests" / "10-worker.yaml").write_text(machine_config_manifest(
        "10-worker", "worker", files={"/etc/generation": f"data:,{generation}"}, mode=0o644,
        os_image=f"registry.pulls.test/os:{generation}"))


async def _call(session: aiohttp.ClientSession, method: str, url: str, body: Any = None) -> Any:
    async with session.request(method, url, json=body) as response:
        assert response.status == 200, await response.text()
        return await response.json()


async def _all_done_at_the_target(session: aiohttp.ClientSession, base: str, nodes: list[str]) -> str:
    """Every node of `nodes` reports Done at the worker pool's target: that config's name."""
    old = str((await _call(session, "GET", f"{base}/pools/worker"))["spec"]["configuration"]["name"])
    for node in nodes:
        await _call(session, "POST", f"{base}/nodes/{node}/status",
                    {"pool": "worker", "currentConfig": old, "desiredConfig": old, "state": "Done"})
    return old


async def _held(session: aiohttp.ClientSession, base: str, count: int) -> None:
    while f"mco_held_claims {count:.1f}" not in await (await session.get(f"{base}/metrics")).text():
        await asyncio.sleep(0.02)


@contextmanager
def _served(kind: str, cluster: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """`mco serve` over a directory store, or (etcd) a controller and a replica: the base URL, once it serves the
    worker pool."""
    if kind == "directory":
        with serving(cluster, tmp_path / "store") as base:
            yield base
        return
    fleet = request.getfixturevalue("fleet")
    fleet.start_controller("ctl-a", cluster)
    base = fleet.start_replica()
    until(lambda: requests.get(f"{base}/pools/worker", timeout=5).status_code == 200)
    yield base


@pytest.mark.parametrize("kind", ["directory", "etcd"])
async def test_held_claims_learn_the_new_os_image_at_once_within_the_pull_limit(
        tmp_path: Path, request: pytest.FixtureRequest, kind: str) -> None:
    pulls = 2
    cluster = _cluster(tmp_path / "cluster", pulls)
    with _served(kind, cluster, tmp_path, request) as base:
        timeout = aiohttp.ClientTimeout(total=HOLD + 60)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            old = await _all_done_at_the_target(session, base, NODES)
            answered: dict[str, tuple[float, Any]] = {}

            async def claim(node: str) -> None:
                answer = await _call(session, "POST", f"{base}/nodes/{node}/desired?pool=worker&wait={HOLD}")
                answered[node] = (time.monotonic(), answer)

            claims = {node: asyncio.create_task(claim(node)) for node in NODES}
            await asyncio.wait_for(_held(session, base, len(NODES)), 60)
            assert not answered  # nothing to pull yet: every claim is held
            moved = time.monotonic()
            _worker(cluster, "new")  # the target moves to a config with a new OS image

            async def until(count: int) -> None:
                while len(answered) < count:
                    await asyncio.sleep(0.01)

            # the first node takes the one slot; the next two (the pull limit) are told to pull the new image
            await asyncio.wait_for(until(1 + pulls), HOLD / 2)
            new = answered["node-0"][1]["desiredConfig"]
            assert new != old
            first = min(at for at, _ in answered.values())
            assert first - moved < HOLD / 2
            assert {n: a for n, (_, a) in answered.items()} == {
                "node-0": {"desiredConfig": new, "pool": "worker"},
                **{n: {"desiredConfig": old, "pool": "worker", "prefetch": new} for n in NODES[1:1 + pulls]}}
            late = max(at for at, _ in answered.values()) - first
            assert late < PROMPT, f"the held claims learnt the new OS image {late:.2f} s after the first answer"

            # the others stay held: no slot (maxUnavailable 1, node-0 is updating), no pull (the limit)
            await asyncio.sleep(PROMPT)
            assert sorted(answered) == NODES[:1 + pulls]
            # node-1 reports the image staged: its pull is given back, and the next held node is told at once
            staged = time.monotonic()
            await _call(session, "POST", f"{base}/nodes/node-1/status",
                        {"pool": "worker", "currentConfig": old, "desiredConfig": old, "state": "Done",
                         "staged": new, "phase": "image-staged"})
            await asyncio.wait_for(until(2 + pulls), HOLD / 2)
            nxt = NODES[1 + pulls]
            at, answer = answered[nxt]
            assert answer == {"desiredConfig": old, "pool": "worker", "prefetch": new}
            assert at - staged < PROMPT, f"the next node learnt the new OS image {at - staged:.2f} s after a pull freed"
            await asyncio.sleep(PROMPT)
            assert sorted(answered) == NODES[:2 + pulls]  # still two pulling: the rest wait
            async with session.get(f"{base}/metrics") as got:
                counted = [line.split() for line in (await got.text()).splitlines()
                           if line.startswith("mco_held_claim_pull_wakeups_total ")]
            assert counted and float(counted[0][1]) >= 1 + pulls  # each held claim told to pull, counted
            for task in claims.values():
                task.cancel()
            await asyncio.gather(*claims.values(), return_exceptions=True)


async def test_a_held_claim_that_staged_its_machine_config_is_not_woken_to_pull(tmp_path: Path) -> None:
    """A machine document gives node-a its own config on the pool's new target (same OS image, its own files). node-a
    staged that config's image and is held for its slot (none free): no count wakes it to pull what it has, however
    often the pool is counted (the directory store counts every poll interval)."""
    store, old, new, mine = _machine_pool(tmp_path, 1, pulls=0)
    at = "2026-01-01T00:00:00Z"
    store.put_node_status(NodeStatus("node-a", "worker", old, old, "Done", "", at, staged=mine))
    store.put_node_status(NodeStatus("node-b", "worker", old, new, "Working", "", at))  # the one slot
    running, base = await _serve(store, tmp_path)
    waiters = running.state.handouts
    try:
        async with aiohttp.ClientSession() as session:
            claim = asyncio.create_task(_call(session, "POST", f"{base}/nodes/node-a/desired?pool=worker&wait=3"))
            await asyncio.wait_for(_until_held(waiters), 30)
            await asyncio.sleep(1.0)  # some twenty counts
            assert waiters.pull_woken == 0, f"woken {waiters.pull_woken} times to pull an image it staged"
            assert (await asyncio.wait_for(claim, 30))["desiredConfig"] == old
    finally:
        await running.stop()


async def _until_held(waiters: Any) -> None:
    while not waiters.held():
        await asyncio.sleep(0.01)


def _pulling(answers: dict[str, Any], new: str, staged: set[str]) -> set[str]:
    """The nodes pulling `new`'s OS image as the answers tell: let pull it, or handed it unstaged (pulled in the slot)."""
    return {node for node, answer in answers.items() if node not in staged
            and (answer.get("prefetch") == new or answer.get("desiredConfig") == new)}


@pytest.mark.parametrize("kind", ["directory", "etcd"])
async def test_a_prestage_claim_takes_its_slot_only_with_the_image_staged_and_within_the_pull_limit(
        tmp_path: Path, request: pytest.FixtureRequest, kind: str) -> None:
    """maxUnavailable 3 but `max-concurrent-pulls` 1: the first wave's slots are free, yet claims that say
    `prestage=1` are told to pull (one at a time, in the rollout order) and get a slot only once they report the
    image staged, so never more than one node pulls, the first wave included; held claims of nodes whose slot waits
    for their image are not woken for it. A claim without `prestage` is handed its slot as before (pulls in it)."""
    cluster = _cluster(tmp_path / "cluster", 1, max_unavailable=3)
    with _served(kind, cluster, tmp_path, request) as base:
        timeout = aiohttp.ClientTimeout(total=HOLD + 60)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            nodes = NODES[:4]
            old = await _all_done_at_the_target(session, base, nodes)
            _worker(cluster, "new")
            new = old
            while new == old:  # the render lands
                await asyncio.sleep(0.05)
                new = (await _call(session, "GET", f"{base}/pools/worker"))["spec"]["configuration"]["name"]

            async def claim(node: str, wait: float = 0, prestage: bool = True) -> Any:
                query = f"pool=worker&wait={wait}" + ("&prestage=1" if prestage else "")
                return await _call(session, "POST", f"{base}/nodes/{node}/desired?{query}")

            answers: dict[str, Any] = {}
            staged: set[str] = set()
            for node in nodes[:3]:  # three slots free: node-0 is let pull, node-1 and node-2 stay (the limit)
                answers[node] = await claim(node)
            assert answers == {"node-0": {"desiredConfig": old, "pool": "worker", "prefetch": new},
                               "node-1": {"desiredConfig": old, "pool": "worker"},
                               "node-2": {"desiredConfig": old, "pool": "worker"}}
            held = asyncio.create_task(claim("node-1", wait=HOLD))  # its turn, but not its image: not woken for a slot
            await asyncio.sleep(PROMPT)
            assert not held.done()
            assert _pulling(answers, new, staged) == {"node-0"}
            await _call(session, "POST", f"{base}/nodes/node-0/status",
                        {"pool": "worker", "currentConfig": old, "desiredConfig": old, "state": "Done",
                         "staged": new, "phase": "image-staged"})
            staged.add("node-0")
            answers["node-1"] = await asyncio.wait_for(held, HOLD / 2)  # the pull given back: node-1's turn to pull
            assert answers["node-1"] == {"desiredConfig": old, "pool": "worker", "prefetch": new}
            answers["node-0"] = await claim("node-0")  # staged: its slot
            assert answers["node-0"] == {"desiredConfig": new, "pool": "worker"}
            assert _pulling(answers, new, staged) == {"node-1"}
            # a claim without prestage (a client that ignores `prefetch`): its slot at once, as before
            assert await claim("node-2", prestage=False) == {"desiredConfig": new, "pool": "worker"}
            for value in ("2", "yes", ""):
                async with session.post(f"{base}/nodes/node-3/desired?pool=worker&prestage={value}") as got:
                    assert got.status == 400 and (await got.json())["path"] == "query prestage"
            async with session.post(f"{base}/nodes/node-3/desired?pool=worker&prestage=1&prestage=1") as got:
                assert got.status == 400



@pytest.mark.parametrize("kind", ["directory", "etcd"])
async def test_a_held_claim_without_prestage_behind_one_waiting_for_its_pull_share_takes_its_slot(
        tmp_path: Path, request: pytest.FixtureRequest, kind: str) -> None:
    """maxUnavailable 3, `max-concurrent-pulls` 1, three held claims when the target moves to a new OS image:
    node-0 (prestage) is told to pull, node-1 (prestage) waits for the pull share, node-2 (a client without
    prestage) is within the free slots' turns: it is woken and handed its slot at once, not at its hold's end."""
    cluster = _cluster(tmp_path / "cluster", 1, max_unavailable=3)
    nodes = NODES[:3]
    with _served(kind, cluster, tmp_path, request) as base:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=HOLD + 60)) as session:
            await _all_done_at_the_target(session, base, nodes)
            answered: dict[str, tuple[float, Any]] = {}

            async def claim(node: str) -> None:
                query = f"pool=worker&wait={HOLD}" + ("" if node == "node-2" else "&prestage=1")
                answered[node] = (time.monotonic(), await _call(session, "POST", f"{base}/nodes/{node}/desired?{query}"))

            tasks = [asyncio.create_task(claim(n)) for n in nodes]
            try:
                await asyncio.wait_for(_held(session, base, 3), 60)
                moved = time.monotonic()
                _worker(cluster, "new")
                while len(answered) < 2:
                    await asyncio.sleep(0.02)
                await asyncio.sleep(PROMPT)
                assert set(answered) == {"node-0", "node-2"}, answered
                new = answered["node-0"][1]["prefetch"]
                assert answered["node-2"][1]["desiredConfig"] == new  # its slot, pulled in it (uncounted)
                assert answered["node-2"][0] - moved < HOLD / 2
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_prestage_claim_whose_images_cannot_be_read_stays(tmp_path: Path) -> None:
    """The OS image of the config the node runs cannot be read now (here a damaged file; on etcd a read that
    failed): the claim is told to stay, never handed the target without the hand-out recorded (the answer and the
    store agree)."""
    old = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=1), os_image_url="os:1")
    new = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=2), os_image_url="os:2")
    store = DirectoryStore(tmp_path / "store")
    store.put_rendered(old)
    publish(store, new, max_unavailable=1)
    store.put_node_status(NodeStatus("node-a", "worker", old.name, old.name, "Done", "", "2026-01-01T00:00:00Z"))
    (tmp_path / "store" / "rendered" / f"{old.name}.json").write_bytes(b"{damaged")
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log="off", poll_interval=0.05,
                              store_dir=tmp_path / "store")
    running = await start(settings, store=store)
    _, host, port = running.addresses[0]
    try:
        async with aiohttp.ClientSession() as session:
            for method in ("GET", "POST"):
                answer = await _call(session, method, f"http://{host}:{port}/nodes/node-a/desired?pool=worker&prestage=1")
                assert answer == {"desiredConfig": old.name, "pool": "worker"}
        assert store.get_node_status("node-a").desired_config == old.name
    finally:
        await running.stop()


def _machine_pool(tmp_path: Path, max_unavailable: int, pulls: int = 1) -> tuple[DirectoryStore, str, str, str]:
    """A pool whose target moves to a new OS image, where a machine document gives node-a its own config on it
    (the same OS image); `max-concurrent-pulls` `pulls`. (store, old, new, node-a's own config)."""
    old = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=1), os_image_url="os:1")
    new = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=2), os_image_url="os:2")
    mine = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=3), os_image_url="os:2")
    store = DirectoryStore(tmp_path / "store")
    store.put_rendered(old)
    store.put_rendered(mine)
    machine = MachineEntry(name="a", selector={"hostname": "node-a"}, rendered=mine.name, overlay={}, overlay_hash="a")
    publish(store, new, max_unavailable=max_unavailable, machines=(machine,),
            rollout=RolloutSettings(max_concurrent_pulls=pulls))
    return store, old.name, new.name, mine.name


async def _serve(store: DirectoryStore, tmp_path: Path) -> tuple[Any, str]:
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log="off", poll_interval=0.05,
                              store_dir=tmp_path / "store")
    running = await start(settings, store=store)
    _, host, port = running.addresses[0]
    return running, f"http://{host}:{port}"


async def test_a_held_machine_node_that_staged_its_own_config_is_woken_for_a_freed_slot(tmp_path: Path) -> None:
    """node-a staged its machine's own config; the pull share is taken by another node (the pull rule gives
    nobody a pull: the count offers no pulls). When the one slot frees, node-a's held claim is handed it at once:
    the count judges it by its own config, not by the pool's target it never staged."""
    store, old, new, mine = _machine_pool(tmp_path, 1)
    now = timestamp(system_clock())
    store.put_node_status(NodeStatus("node-a", "worker", old, old, "Done", "", now,
                                     registered_at="2025-01-01T00:00:00Z", staged=mine))
    store.put_node_status(NodeStatus("node-b", "worker", old, new, "Working", "", now,
                                     registered_at="2025-02-01T00:00:00Z"))  # the one slot
    store.put_node_status(NodeStatus("node-z", "worker", old, old, "Done", "", now,
                                     registered_at="2025-03-01T00:00:00Z", pull_config=new, pull_at=now))
    running, base = await _serve(store, tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            claim = asyncio.create_task(_call(session, "POST", f"{base}/nodes/node-a/desired?pool=worker&wait=8&prestage=1"))
            await asyncio.wait_for(_until_held(running.state.handouts), 30)
            await asyncio.sleep(0.3)
            freed = time.monotonic()
            await _call(session, "POST", f"{base}/nodes/node-b/status",
                        {"pool": "worker", "currentConfig": new, "desiredConfig": new, "state": "Done"})
            assert (await asyncio.wait_for(claim, 30))["desiredConfig"] == mine
            assert time.monotonic() - freed < PROMPT
    finally:
        await running.stop()


async def test_a_held_machine_node_that_staged_the_pools_target_is_not_woken_for_a_slot_it_refuses(
        tmp_path: Path) -> None:
    """node-a staged the pool's target before its machine document gave it its own config: it still needs its own
    config's image staged, so a free slot is not for it yet; it is not woken for one at every count (the directory
    store counts every poll interval, here 20 times a second)."""
    store, old, new, _ = _machine_pool(tmp_path, 3)
    now = timestamp(system_clock())
    store.put_node_status(NodeStatus("node-0", "worker", old, old, "Done", "", "2025-01-01T00:00:00Z",
                                     registered_at="2025-01-01T00:00:00Z", pull_config=new, pull_at=now))
    store.put_node_status(NodeStatus("node-a", "worker", old, old, "Done", "", "2026-01-01T00:00:00Z",
                                     registered_at="2025-06-01T00:00:00Z", staged=new))
    running, base = await _serve(store, tmp_path)
    waiters = running.state.handouts
    try:
        async with aiohttp.ClientSession() as session:
            claim = asyncio.create_task(_call(session, "POST", f"{base}/nodes/node-a/desired?pool=worker&wait=3&prestage=1"))
            await asyncio.wait_for(_until_held(waiters), 30)
            before = waiters.woken
            await asyncio.sleep(1.0)
            assert waiters.woken - before <= 1
            assert (await asyncio.wait_for(claim, 30))["desiredConfig"] == old
    finally:
        await running.stop()
