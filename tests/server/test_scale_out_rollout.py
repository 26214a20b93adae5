"""A rollout across replicas: 1,000 simulated nodes in a pool with maxUnavailable 10% claim their desired config
from random replicas of 3, each claim held until a slot frees (`?wait=`, server/handout_wait.py), and report
through random replicas. At no revision of etcd's history are more than 100 nodes unavailable (replayed from the
watch history of the node keys, not from the nodes' own counts), and every node converges on the new target."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import time
from pathlib import Path
from typing import Any

import aiohttp

from fleet.etcd_client import Connection
from fleet.etcd_store import prefix_end
from fleet.etcd_url import parse_url
from fleet.node_status import NodeStatus
from fleet.rollout import is_unavailable
from tests.etcd_cluster import EtcdCluster
from tests.server.scale_out import CLUSTER, ROLLOUT_POOL, Fleet

NODES = 1000
LIMIT = 100  # 10% of 1,000


async def _call(session: aiohttp.ClientSession, replicas: list[str], method: str, path: str,
                body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request to a random replica, retried (another random replica) on connection errors and 5xx."""
    while True:
        base = random.choice(replicas)
        try:
            async with session.request(method, base + path, json=body) as response:
                if response.status == 200:
                    return await response.json()
                assert response.status >= 500, f"{method} {path}: {response.status} {await response.text()}"
        except (TimeoutError, aiohttp.ClientError):
            pass
        await asyncio.sleep(0.2)


async def _node(session: aiohttp.ClientSession, replicas: list[str], name: str, old: str, new: str,
                held: list[int]) -> None:
    current = old
    while current != new:
        answer = await _call(session, replicas, "POST", f"/nodes/{name}/desired?pool=worker&wait=30")
        desired = answer["desiredConfig"]
        if desired == current:  # the claim was held 30 s and no slot freed for this node: claim again
            held[0] += 1
            continue
        await _call(session, replicas, "POST", f"/nodes/{name}/status",
                    {"pool": "worker", "currentConfig": current, "desiredConfig": desired, "state": "Working"})
        await asyncio.sleep(0.2 + 0.2 * random.random())  # the update itself
        current = desired
        await _call(session, replicas, "POST", f"/nodes/{name}/status",
                    {"pool": "worker", "currentConfig": current, "desiredConfig": current, "state": "Done"})


def _revision(url: str) -> int:
    """etcd's current revision."""
    conn = Connection(parse_url(url))
    try:
        return conn.call(lambda: conn.client.get_prefix(conn.key("state", ""), keys_only=True)).header.revision
    finally:
        conn.close()


def _most_unavailable(url: str, start: int) -> tuple[int, int]:
    """(most nodes unavailable at any revision after `start`, nodes seen), replayed from etcd's history of the
    node keys: every put since `start`, applied revision by revision."""
    conn = Connection(parse_url(url))
    nodes_at = conn.key("state", "nodes", "")

    async def replay() -> tuple[int, int]:
        client = conn.client
        # the last node write: etcd's own revision may be past it, moved by keys no node watch sees (the replicas'
        # presence digests), and waiting for an event at that revision would wait for ever
        end = max(kv.mod_revision for kv in await client.get_prefix(nodes_at, keys_only=True))
        statuses: dict[bytes, NodeStatus] = {}
        worst, revision = 0, start
        watch = await client.watch(nodes_at, range_end=prefix_end(nodes_at), start_revision=start + 1)
        async for event in watch:
            if event.kv.mod_revision != revision:  # the previous revision is complete: count it
                worst = max(worst, sum(1 for s in statuses.values() if is_unavailable(s)))
                revision = event.kv.mod_revision
            statuses[event.kv.key] = NodeStatus.from_dict(json.loads(event.kv.value))
            if revision >= end:
                break
        await watch.cancel()
        return max(worst, sum(1 for s in statuses.values() if is_unavailable(s))), len(statuses)

    try:
        return conn.call(replay, timeout=300)
    finally:
        conn.close()


async def test_max_unavailable_holds_across_replicas(etcd_cluster: EtcdCluster, tmp_path: Path) -> None:
    cluster_dir = tmp_path / "cluster"
    shutil.copytree(CLUSTER, cluster_dir)
    (cluster_dir / "manifests" / "00-pool.yaml").write_text(ROLLOUT_POOL)
    fleet = Fleet(etcd_cluster.url("rollout"), tmp_path)
    try:
        fleet.start_controller("ctl-a", cluster_dir)
        # every node holds a claim open, all from this one address: above the default 256 per client
        replicas = [await asyncio.to_thread(fleet.start_replica, None, "--max-connections-per-client", "2048")
                    for _ in range(3)]
        start = await asyncio.to_thread(_revision, fleet.store_url)
        connector = aiohttp.TCPConnector(limit=0)  # a held claim per node: one connection each
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=90)) as session:
            old = (await _call(session, replicas, "GET", "/pools/worker"))["spec"]["configuration"]["name"]
            names = [f"node-{i:04d}" for i in range(NODES)]
            gate = asyncio.Semaphore(100)

            async def register(name: str) -> None:
                async with gate:
                    await _call(session, replicas, "POST", f"/nodes/{name}/status",
                                {"pool": "worker", "currentConfig": old, "desiredConfig": old, "state": "Done"})

            await asyncio.gather(*(register(n) for n in names))
            manifest = cluster_dir / "manifests" / "10-worker-demo.yaml"
            manifest.write_text(manifest.read_text().replace("hello%20from%20the%20server", "rolled%20out"))
            new = old
            while new == old:
                await asyncio.sleep(0.1)
                pools = await asyncio.gather(*(_call(session, [r], "GET", "/pools/worker") for r in replicas))
                targets = {p["spec"]["configuration"]["name"] for p in pools}
                new = targets.pop() if len(targets) == 1 else old
            began = time.monotonic()
            stayed = [0]
            await asyncio.wait_for(asyncio.gather(*(_node(session, replicas, n, old, new, stayed) for n in names)), 600)
            print(f"rollout of {NODES} nodes: {time.monotonic() - began:.1f} s, {stayed[0]} claims held to their end")
            for replica in replicas:  # each replica's mirror catches up with the last reports, sent via others
                for _ in range(300):
                    final = await _call(session, [replica], "GET", "/pools/worker")
                    if final["status"]["updatedMachineCount"] == NODES:
                        break
                    await asyncio.sleep(0.1)
                assert final["status"]["updatedMachineCount"] == NODES
        worst, seen = await asyncio.to_thread(_most_unavailable, fleet.store_url, start)
        assert seen == NODES
        assert 0 < worst <= LIMIT
    finally:
        fleet.stop()
