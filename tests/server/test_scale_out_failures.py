"""No boot fails while parts die: 3 replicas behind haproxy, 2 controller candidates, a real 3-member etcd cluster.
200 simulated machines fetch /config/worker in a loop with Ignition's retry rules (connection errors and 5xx
retried with a doubling backoff, a 4xx is fatal) while the test SIGKILLs a replica, then the controller leader,
then the etcd leader, then changes a manifest. Every machine ends with the new config, no fetch got a 4xx or
bytes other than the old or new rendered config, and another controller candidate took the lead."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path

import aiohttp

from tests.etcd_cluster import EtcdCluster, free_ports
from tests.server.helpers import ACCEPT_33
from tests.server.scale_out import CLUSTER, Fleet, current_leader, start_haproxy
from tests.tools import real_tool

MACHINES = 200
TTL = 2


class Machine:
    """One booting machine: fetch, and on a connection error or 5xx wait and fetch again (Ignition's rule)."""

    def __init__(self) -> None:
        self.bodies: set[bytes] = set()
        self.last = b""
        self.fatal: list[str] = []
        self.retries = 0

    async def fetch_once(self, session: aiohttp.ClientSession, url: str) -> None:
        backoff = 0.1
        while True:
            try:
                async with session.get(url, headers={"Accept": ACCEPT_33}) as response:
                    body = await response.read()
                    if response.status == 200:
                        self.bodies.add(body)
                        self.last = body
                        return
                    if 400 <= response.status < 500:
                        self.fatal.append(f"{response.status}: {body[:200]!r}")
                        return
            except (TimeoutError, aiohttp.ClientError):
                pass
            self.retries += 1
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)


async def _machines_loop(machines: list[Machine], url: str, stop: asyncio.Event) -> None:
    timeout = aiohttp.ClientTimeout(total=10)
    connector = aiohttp.TCPConnector(limit=0, force_close=True)  # a new connection per boot, as machines do
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        async def run(machine: Machine) -> None:
            while not stop.is_set():
                await machine.fetch_once(session, url)
                await asyncio.sleep(0.2)
        await asyncio.gather(*(run(m) for m in machines))


async def test_no_boot_fails_while_replica_controller_and_etcd_leader_die(own_etcd_cluster: EtcdCluster,
                                                                          tmp_path: Path) -> None:
    haproxy = real_tool("haproxy")
    cluster_dir = tmp_path / "cluster"
    shutil.copytree(CLUSTER, cluster_dir)
    fleet = Fleet(own_etcd_cluster.url("failover"), tmp_path)
    front, *ports = free_ports(4)
    proxy = None
    stop = asyncio.Event()
    try:
        fleet.start_controller("ctl-a", cluster_dir, ttl=TTL)
        fleet.start_controller("ctl-b", cluster_dir, ttl=TTL)
        for port in ports:
            await asyncio.to_thread(fleet.start_replica, port)
        proxy = await asyncio.to_thread(start_haproxy, haproxy, front, ports, tmp_path)
        url = f"http://127.0.0.1:{front}/config/worker"
        machines = [Machine() for _ in range(MACHINES)]
        loop_task = asyncio.create_task(_machines_loop(machines, url, stop))
        await asyncio.sleep(1.0)
        old = {m.last for m in machines if m.last}
        assert len(old) == 1

        fleet.kill(fleet.replicas[ports[0]])
        await asyncio.sleep(1.0)

        leader = current_leader(fleet.store_url)
        first = await asyncio.to_thread(leader)
        assert first in fleet.controllers
        fleet.kill(fleet.controllers[first])
        deadline = time.monotonic() + 60  # a liveness bound: the takeover waits for the lease's TTL
        while await asyncio.to_thread(leader) in (None, first):
            assert time.monotonic() < deadline, "no new controller leader"
            await asyncio.sleep(0.02)

        etcd_leader = await asyncio.to_thread(own_etcd_cluster.leader)
        own_etcd_cluster.kill_member(etcd_leader)
        await asyncio.to_thread(own_etcd_cluster.wait_healthy)
        await asyncio.sleep(1.0)

        manifest = cluster_dir / "manifests" / "10-worker-demo.yaml"
        manifest.write_text(manifest.read_text().replace("hello%20from%20the%20server", "after%20the%20storm"))
        deadline = time.monotonic() + 60
        while not all(b"after%20the%20storm" in m.last for m in machines):
            assert time.monotonic() < deadline, "not every machine reached the new config"
            await asyncio.sleep(0.1)
        stop.set()
        await loop_task

        fatal = [f for m in machines for f in m.fatal]
        assert fatal == []
        bodies = set().union(*(m.bodies for m in machines))
        new = {m.last for m in machines}
        assert len(new) == 1 and bodies == old | new  # only the old and the new rendered bytes, ever
        for body in bodies:
            assert json.loads(body)["ignition"]["version"] == "3.3.0"
    finally:
        stop.set()
        if proxy is not None:
            proxy.kill()
            proxy.wait()
        fleet.stop()
