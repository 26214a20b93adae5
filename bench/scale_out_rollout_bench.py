"""Benchmark: a rollout of `--nodes` simulated nodes (default 10,000) through 3 etcd-backed replicas.

The pool has maxUnavailable 10%. Each simulated node (one asyncio task in this process) reports Done at the
old config, then, once the target moves, asks a random replica for its desired config every `--poll` seconds
(plus up to 50% jitter); when handed the new one it reports Working, "updates" for `--update` seconds, and
reports Done. Measured:
- server CPU per status report (the registration phase: reports only) and per desired-config answer (every
  node asks once before the target moves: answers without a hand-out), from the replicas' /proc CPU times;
- the rollout's wall time against the ideal: waves (1 / 10%) x the update time.

    .venv/bin/python bench/scale_out_rollout_bench.py [--nodes 10000] [--update 2] [--poll 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from server_bench import cpu_seconds  # noqa: E402

from tests.etcd_cluster import EtcdCluster  # noqa: E402
from tests.server.scale_out import ROLLOUT_POOL, Fleet  # noqa: E402

WORKER = """apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 10-worker-bench
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config:
    ignition:
      version: 3.4.0
    storage:
      files:
        - path: /etc/bench.conf
          mode: 0644
          contents:
            source: data:,GENERATION
"""


async def call(session: aiohttp.ClientSession, replicas: list[str], method: str, path: str,
               body: dict[str, Any] | None = None) -> dict[str, Any]:
    while True:
        try:
            async with session.request(method, random.choice(replicas) + path, json=body) as response:
                if response.status == 200:
                    return await response.json()
                if response.status < 500:
                    raise RuntimeError(f"{method} {path}: {response.status} {await response.text()}")
        except (TimeoutError, aiohttp.ClientError):
            pass
        await asyncio.sleep(0.2)


async def run(args: argparse.Namespace, fleet: Fleet, cluster_dir: Path, replicas: list[str]) -> None:
    pids = [p.pid for p in fleet.replicas.values()]

    def cpu() -> float:
        return sum(cpu_seconds(pid) for pid in pids)

    names = [f"node-{i:05d}" for i in range(args.nodes)]
    connector = aiohttp.TCPConnector(limit=256)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:
        old = (await call(session, replicas, "GET", "/pools/worker"))["spec"]["configuration"]["name"]
        gate = asyncio.Semaphore(128)

        async def each(fn: Any) -> None:
            async def one(name: str) -> None:
                async with gate:
                    await fn(name)
            await asyncio.gather(*(one(n) for n in names))

        started, cpu0 = time.monotonic(), cpu()
        await each(lambda n: call(session, replicas, "POST", f"/nodes/{n}/status",
                                  {"pool": "worker", "currentConfig": old, "desiredConfig": old, "state": "Done"}))
        report_cpu, report_wall = (cpu() - cpu0) / args.nodes, time.monotonic() - started
        started, cpu0 = time.monotonic(), cpu()
        await each(lambda n: call(session, replicas, "POST", f"/nodes/{n}/desired?pool=worker"))
        desired_cpu, desired_wall = (cpu() - cpu0) / args.nodes, time.monotonic() - started

        manifest = cluster_dir / "manifests" / "10-worker-bench.yaml"
        manifest.write_text(WORKER.replace("GENERATION", "new"))
        new = old
        while new == old:
            await asyncio.sleep(0.05)
            new = (await call(session, replicas[:1], "GET", "/pools/worker"))["spec"]["configuration"]["name"]
        busy = {"now": 0, "most": 0}

        async def node(name: str) -> None:
            current = old
            await asyncio.sleep(random.random() * args.poll)
            while current != new:
                desired = (await call(session, replicas, "POST", f"/nodes/{name}/desired?pool=worker"))["desiredConfig"]
                if desired == current:
                    await asyncio.sleep(args.poll * (1 + random.random() / 2))
                    continue
                busy["now"] += 1
                busy["most"] = max(busy["most"], busy["now"])
                await call(session, replicas, "POST", f"/nodes/{name}/status",
                           {"pool": "worker", "currentConfig": current, "desiredConfig": desired, "state": "Working"})
                await asyncio.sleep(args.update)
                current = desired
                await call(session, replicas, "POST", f"/nodes/{name}/status",
                           {"pool": "worker", "currentConfig": current, "desiredConfig": current, "state": "Done"})
                busy["now"] -= 1

        started, cpu0 = time.monotonic(), cpu()
        await asyncio.gather(*(node(n) for n in names))
        wall, rollout_cpu = time.monotonic() - started, cpu() - cpu0
    waves = 10
    print(f"rollout of {args.nodes} simulated nodes, 3 replicas, maxUnavailable 10%, update {args.update:g} s, "
          f"poll {args.poll:g} s (+0-50% jitter):")
    print("| measure | value |")
    print("|---|---|")
    print(f"| server CPU per status report | {report_cpu * 1000:.2f} ms ({args.nodes} reports in {report_wall:.1f} s) |")
    print(f"| server CPU per desired-config answer | {desired_cpu * 1000:.2f} ms ({args.nodes} answers in "
          f"{desired_wall:.1f} s) |")
    print(f"| rollout wall time | {wall:.1f} s |")
    print(f"| ideal (waves x update) | {waves} x {args.update:g} s = {waves * args.update:g} s |")
    print(f"| ratio | {wall / (waves * args.update):.2f}x |")
    print(f"| replicas' CPU during the rollout | {rollout_cpu:.1f} s |")
    print(f"| most nodes updating at once (simulator's count) | {busy['most']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--update", type=float, default=2.0, help="seconds one node's update takes")
    parser.add_argument("--poll", type=float, default=2.0, help="seconds between a waiting node's questions")
    args = parser.parse_args()
    etcd = EtcdCluster(Path(shutil.which("etcd") or "etcd"), Path(shutil.which("etcdctl") or "etcdctl"))
    tmp = Path(tempfile.mkdtemp(prefix="mco-rollout-bench-"))
    fleet = Fleet(etcd.url("rollout"), tmp)

    def interrupted(*_: object) -> None:  # the asyncio loop may be busy: clean up right here, then leave
        fleet.stop()
        etcd.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        os._exit(143)

    signal.signal(signal.SIGTERM, interrupted)
    try:
        etcd.start()
        cluster_dir = tmp / "cluster"
        (cluster_dir / "manifests").mkdir(parents=True)
        (cluster_dir / "cluster.yaml").write_text("name: bench\nbaseDomain: bench.test\n")
        (cluster_dir / "manifests" / "00-pool.yaml").write_text(ROLLOUT_POOL)
        (cluster_dir / "manifests" / "10-worker-bench.yaml").write_text(WORKER.replace("GENERATION", "old"))
        fleet.start_controller("ctl-a", cluster_dir)
        replicas = [fleet.start_replica() for _ in range(3)]
        asyncio.run(run(args, fleet, cluster_dir, replicas))
    finally:
        fleet.stop()
        etcd.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
