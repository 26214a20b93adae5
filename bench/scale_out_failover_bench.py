"""Benchmark: failover of the scale-out layout (3 etcd members, 2 controller candidates with a 2 s lease,
3 replicas behind haproxy), with 200 simulated machines fetching /config/worker in a loop (Ignition's rules:
connection errors and 5xx retried with a doubling backoff from 100 ms, 4xx fatal) and one node posting its
status every 20 ms through haproxy.

- controller leader SIGKILL -> the new leader has rendered (its status in etcd names it): seconds;
- replica SIGKILL -> fraction of the fetches started in the next 5 s that needed a retry;
- etcd leader SIGKILL -> longest fetch and longest gap between successful status writes in the next 5 s;
- failed boots: fetches answered 4xx (goal 0).

    .venv/bin/python bench/scale_out_failover_bench.py
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fleet.etcd_client import Connection  # noqa: E402
from fleet.etcd_url import parse_url  # noqa: E402
from tests.etcd_cluster import EtcdCluster, free_ports  # noqa: E402
from tests.server.helpers import ACCEPT_33  # noqa: E402
from tests.server.scale_out import Fleet, bench_deployment, start_haproxy  # noqa: E402

HERE = ROOT / "tests" / "server"


class Probe:
    """Fetch records: (start, end, retries) of every fetch, and fatal answers."""

    def __init__(self) -> None:
        self.fetches: list[tuple[float, float, int]] = []
        self.fatal = 0
        self.writes: list[float] = []

    async def machine(self, session: aiohttp.ClientSession, url: str, stop: asyncio.Event) -> None:
        while not stop.is_set():
            started, retries, backoff = time.monotonic(), 0, 0.1
            while True:
                try:
                    async with session.get(url, headers={"Accept": ACCEPT_33}) as response:
                        await response.read()
                        if response.status == 200:
                            break
                        if response.status < 500:
                            self.fatal += 1
                            break
                except (TimeoutError, aiohttp.ClientError):
                    pass
                retries += 1
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
            self.fetches.append((started, time.monotonic(), retries))
            await asyncio.sleep(0.2)

    async def reporter(self, session: aiohttp.ClientSession, base: str, name: str, stop: asyncio.Event) -> None:
        body = {"pool": "worker", "currentConfig": name, "desiredConfig": name, "state": "Done"}
        while not stop.is_set():
            try:
                async with session.post(f"{base}/nodes/bench-node/status", json=body) as response:
                    if response.status == 200:
                        self.writes.append(time.monotonic())
            except (TimeoutError, aiohttp.ClientError):
                pass
            await asyncio.sleep(0.02)

    def window(self, since: float, seconds: float = 5.0) -> list[tuple[float, float, int]]:
        return [f for f in self.fetches if since <= f[0] < since + seconds]


async def bench(etcd: EtcdCluster, fleet: Fleet, cluster_dir: Path, tmp: Path) -> None:
    haproxy = shutil.which("haproxy") or "haproxy"
    front, *ports = free_ports(4)
    fleet.start_controller("ctl-a", cluster_dir, ttl=2)
    fleet.start_controller("ctl-b", cluster_dir, ttl=2)
    for port in ports:
        await asyncio.to_thread(fleet.start_replica, port)
    proxy = await asyncio.to_thread(start_haproxy, Path(haproxy), front, ports, tmp)
    conn = Connection(parse_url(fleet.store_url))
    try:
        base = f"http://127.0.0.1:{front}"
        probe, stop = Probe(), asyncio.Event()
        connector = aiohttp.TCPConnector(limit=0, force_close=True)
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=10)) as session:
            pool = await (await session.get(f"{base}/pools/worker")).json()
            current = pool["spec"]["configuration"]["name"]
            tasks = [asyncio.create_task(probe.machine(session, f"{base}/config/worker", stop)) for _ in range(200)]
            tasks.append(asyncio.create_task(probe.reporter(session, base, current, stop)))
            await asyncio.sleep(2)

            async def controller_status() -> dict[str, object]:
                found = await asyncio.to_thread(conn.call, lambda: conn.client.get(conn.key("state", "controller")))
                return json.loads(found.value) if found is not None else {}

            leader = (await controller_status())["leader"]
            killed = time.monotonic()
            fleet.kill(fleet.controllers[str(leader)])
            while (await controller_status()).get("leader") == leader:
                await asyncio.sleep(0.02)
            takeover = time.monotonic() - killed
            await asyncio.sleep(1)

            killed = time.monotonic()
            fleet.kill(fleet.replicas[ports[0]])
            await asyncio.sleep(6)
            window = probe.window(killed)
            retried = sum(1 for f in window if f[2]) / max(len(window), 1)

            etcd_leader = await asyncio.to_thread(etcd.leader)
            killed = time.monotonic()
            etcd.kill_member(etcd_leader)
            await asyncio.sleep(6)
            longest_fetch = max(end - start for start, end, _ in probe.window(killed))
            writes = [t for t in probe.writes if t >= killed - 1]
            longest_gap = max(b - a for a, b in zip(writes, writes[1:], strict=False))
            stop.set()
            await asyncio.gather(*tasks)
        print("failover, 200 machines through haproxy, 3 replicas, 2 controller candidates (lease 2 s), 3 etcd members:")
        print("| event | measure | value |")
        print("|---|---|---|")
        print(f"| controller leader SIGKILL | new leader has rendered | {takeover:.2f} s (lease 2 s) |")
        print(f"| replica SIGKILL | fetches in the next 5 s that needed a retry | {retried:.1%} of {len(window)} |")
        print(f"| etcd leader SIGKILL | longest fetch in the next 5 s | {longest_fetch * 1000:.0f} ms |")
        print(f"| etcd leader SIGKILL | longest gap between status writes | {longest_gap * 1000:.0f} ms |")
        print(f"| all | failed boots (4xx) | {probe.fatal} of {len(probe.fetches)} fetches |")
    finally:
        conn.close()
        proxy.kill()
        proxy.wait()


def main() -> None:
    with bench_deployment("failover", tools=("haproxy",)) as (etcd, fleet, tmp):
        cluster_dir = tmp / "cluster"
        shutil.copytree(HERE / "cluster", cluster_dir)
        asyncio.run(bench(etcd, fleet, cluster_dir, tmp))


if __name__ == "__main__":
    main()
