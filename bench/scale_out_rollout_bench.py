"""Benchmark: a rollout of `--nodes` simulated nodes (default 10,000) through 3 etcd-backed replicas.

The pool has maxUnavailable 10%. Each simulated node (one asyncio task in this process) first reports Done at the
old config; then every node runs the agent's loop: it claims its desired config from a random replica
(`POST /nodes/{name}/desired`), and when handed the new one reports Working, "updates" for `--update` seconds and
reports Done. By default a claim asks to be held (`?wait=--wait`): a node told "stay" is answered when a slot
frees for it (server/handout_wait.py) and asks again at once. With `--poll SECONDS` (the reference: what nodes
did before the hold) a node told "stay" asks again after that many seconds (+0-50% jitter). The manifest change
comes once every node is in its loop. Measured:
- replica CPU per status report (the registration phase: reports only) and per desired-config answer (every
  node claims once before the target moves: answers without a hand-out), from the replicas' /proc CPU times;
- the rollout's wall time, from the new pool record landing in etcd (a watch in this process: the render is
  done) to the last node's Done, against the ideal: waves (1 / 10%) x the update time; the replicas' CPU and
  requests during it; the most nodes updating at once (the simulator's count: from the hand-out's answer to the sending of the
  Done report, so never above what the replicas count unavailable); the load average.

With `--canaries N --soak S` the pool names N canaries and a soak time of S seconds (annotations, docs/rollouts.md):
a node handed a config with the pool's health gate (the answer's `rollout`) reports Done only S seconds after its
update, as the agent does; the wall time is set against the bound (1.5x the ideal) plus the soak time. With
`--pull S` the new config also changes the OS image: a node told "stay" with `prefetch` pulls for S seconds and
reports the image staged (Done at its config, `staged`), as the agent does before its slot; its claims say
`prestage=1`, as the agent's, so it is handed a slot only once it staged the image (the first wave too). A node
handed the target without having staged it (counted: none should) pulls in its slot, before its drain. The drained window (from the Working report, sent at
the drain, to the end of the update) is reported in every mode: compare it with and without `--pull`.

    .venv/bin/python bench/scale_out_rollout_bench.py [--nodes 10000] [--update 2] [--wait 60 | --poll 2]
        [--canaries N --soak S] [--pull S [--max-pulls N]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from server_bench import cpu_seconds  # noqa: E402

from applier.report import PROMPT_TIMEOUT  # noqa: E402
from fleet.etcd_client import Connection  # noqa: E402
from fleet.etcd_url import parse_url  # noqa: E402
from fleet.rendered import PoolRecord  # noqa: E402
from tests.builders import machine_config_manifest  # noqa: E402
from tests.etcd_cluster import EtcdCluster  # noqa: E402
from tests.server.scale_out import ROLLOUT_POOL, Fleet, bench_deployment  # noqa: E402

WAVES = 10  # 1 / maxUnavailable 10%


class Landed:
    """When each pool target of `worker` first appeared in etcd, seen by a watch of this process on that one key (a
    whole mirror here would decode every node record too, and its thread would slow the simulator's loop)."""

    def __init__(self, store_url: str) -> None:
        self.conn = Connection(parse_url(store_url))
        self.at: dict[str, float] = {}
        self._lock = threading.Lock()
        self._task = self.conn.spawn(self._follow(self.conn.key("state", "pools", "worker")))

    async def _follow(self, key: bytes) -> None:
        found = await self.conn.client.get(key)
        if found is not None:
            self._seen(found.value)
        async for event in await self.conn.client.watch(key, start_revision=found.mod_revision + 1 if found else None):
            self._seen(event.kv.value)

    def _seen(self, raw: bytes) -> None:
        current = PoolRecord.from_dict(json.loads(raw)).current
        if current:
            with self._lock:
                self.at.setdefault(current, time.monotonic())

    def close(self) -> None:
        self.conn.loop.call_soon_threadsafe(self._task.cancel)
        self.conn.close()


class Counts:
    """The simulator's own counts."""

    def __init__(self) -> None:
        self.updating = 0
        self.most = 0
        self.claims = 0
        self.reports = 0
        self.done_at = 0.0
        self.drained: list[float] = []  # each node's drained window (seconds)
        self.staged_before = 0          # nodes that staged the OS image before their slot
        self.pulled_in_slot = 0         # nodes handed the target before staging it: pulled in their slot
        self.undelivered = 0            # Working reports sent while drained that no replica took within the deadline
        self.late: list[float] = []     # how much longer than --update each update's sleep took: this loop's own lag


async def call(session: aiohttp.ClientSession, replicas: list[str], method: str, path: str,
               body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request to a random replica, retried on another after a connection error or a 5xx."""
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


async def prompt(session: aiohttp.ClientSession, replicas: list[str], path: str, body: dict[str, Any],
                 counts: Counts) -> None:
    """A report sent while the node is drained, as the agent sends it (applier/report.py PROMPT_TIMEOUT): one attempt
    that waits PROMPT_TIMEOUT at most; one not taken in time is counted, and the next report carries the state."""
    try:
        async with session.post(random.choice(replicas) + path, json=body,
                                timeout=aiohttp.ClientTimeout(total=PROMPT_TIMEOUT)) as response:
            await response.read()
            if response.status == 200:
                return
    except (TimeoutError, aiohttp.ClientError):
        pass
    counts.undelivered += 1


async def node(session: aiohttp.ClientSession, replicas: list[str], args: argparse.Namespace, name: str,
               old: str, new: asyncio.Future[str], counts: Counts) -> None:
    """The agent's loop for one node: claim, pull the OS image when let, update when handed the new config, report."""
    current, staged = old, ""
    claim = f"/nodes/{name}/desired?pool=worker&prestage=1" + ("" if args.poll else f"&wait={args.wait:g}")
    if args.poll:
        await asyncio.sleep(random.random() * args.poll)
    while not new.done() or current != new.result():
        answer = await call(session, replicas, "POST", claim)
        desired = answer["desiredConfig"]
        counts.claims += 1
        if desired == current and answer.get("prefetch"):  # let pull the target's OS image now, before the slot
            await asyncio.sleep(args.pull)
            staged = answer["prefetch"]
            await call(session, replicas, "POST", f"/nodes/{name}/status",
                       {"pool": "worker", "currentConfig": current, "desiredConfig": current, "state": "Done",
                        "staged": staged, "phase": "image-staged"})
            counts.staged_before += 1
            continue
        if desired == current:
            if args.poll:
                await asyncio.sleep(args.poll * (1 + random.random() / 2))
            continue
        counts.updating += 1
        counts.most = max(counts.most, counts.updating)
        if args.pull and staged != desired:  # handed the target before staging its image: pulled before the drain
            counts.pulled_in_slot += 1
            await asyncio.sleep(args.pull)
        drained = time.monotonic()
        await prompt(session, replicas, f"/nodes/{name}/status",
                     {"pool": "worker", "currentConfig": current, "desiredConfig": desired, "state": "Working"}, counts)
        slept = time.monotonic()
        await asyncio.sleep(args.update)
        done = time.monotonic()
        counts.drained.append(done - drained)
        counts.late.append(done - slept - args.update)
        await asyncio.sleep((answer.get("rollout") or {}).get("soakSeconds", 0))  # the health gate's soak
        current = desired
        counts.updating -= 1  # (before the report: its slot frees once a replica stored it, then the next is handed)
        await call(session, replicas, "POST", f"/nodes/{name}/status",
                   {"pool": "worker", "currentConfig": current, "desiredConfig": current, "state": "Done"})
        counts.reports += 2
    counts.done_at = max(counts.done_at, time.monotonic())


async def run(args: argparse.Namespace, etcd: EtcdCluster, fleet: Fleet, cluster_dir: Path, replicas: list[str]) -> None:
    pids = [p.pid for p in fleet.replicas.values()]
    members = [p.pid for p in etcd.procs if p is not None]

    def cpu(of: list[int] = pids) -> float:
        return sum(cpu_seconds(pid) for pid in of)

    names = [f"node-{i:05d}" for i in range(args.nodes)]
    connector = aiohttp.TCPConnector(limit=0)  # every node holds a claim open: one connection each
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=args.wait + 60)
    landed = Landed(fleet.store_url)
    load = os.getloadavg()
    try:
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
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

            counts = Counts()
            new: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            nodes = [asyncio.create_task(node(session, replicas, args, n, old, new, counts)) for n in names]
            await asyncio.sleep(min(args.poll or 5.0, 5.0))  # every node is in its loop (held, or polling)
            cpu0, own0, etcd0 = cpu(), time.process_time(), cpu(members)
            (cluster_dir / "manifests" / "10-worker-bench.yaml").write_text(_worker("new", args.pull))
            while len(landed.at) < 2:
                await asyncio.sleep(0.01)
            target = max(landed.at, key=lambda k: landed.at[k])
            new.set_result(target)
            await asyncio.gather(*nodes)
            wall, rollout_cpu, own = counts.done_at - landed.at[target], cpu() - cpu0, time.process_time() - own0
            etcd_cpu = cpu(members) - etcd0
    finally:
        landed.close()
    load_after = os.getloadavg()
    mode = f"poll every {args.poll:g} s (+0-50% jitter)" if args.poll else f"claims held up to {args.wait:g} s"
    print(f"rollout of {args.nodes} simulated nodes, 3 replicas, maxUnavailable 10%, update {args.update:g} s, {mode}; "
          f"load average {load[0]:.1f} before, {load_after[0]:.1f} after:")
    print("| measure | value |")
    print("|---|---|")
    print(f"| replica CPU per status report | {report_cpu * 1000:.2f} ms ({args.nodes} reports in {report_wall:.1f} s) |")
    print(f"| replica CPU per desired-config answer | {desired_cpu * 1000:.2f} ms ({args.nodes} answers in "
          f"{desired_wall:.1f} s) |")
    print(f"| rollout wall time (pool record in etcd -> last Done) | {wall:.1f} s |")
    print(f"| ideal (waves x update) | {WAVES} x {args.update:g} s = {WAVES * args.update:g} s |")
    print(f"| ratio | {wall / (WAVES * args.update):.2f}x |")
    print(f"| replicas' CPU during the rollout | {rollout_cpu:.1f} s ({counts.claims} claims answered, "
          f"{counts.reports} reports) |")
    print(f"| most nodes updating at once (simulator's count) | {counts.most} |")
    print(f"| CPU during the rollout: the 3 etcd members / the simulator (one process) | {etcd_cpu:.1f} s / {own:.1f} s |")
    drained = sorted(counts.drained)
    print(f"| drained window (Working report sent -> update done), p50 / max | "
          f"{drained[len(drained) // 2]:.2f} s / {drained[-1]:.2f} s |")
    print(f"| Working reports sent while drained that no replica took within {PROMPT_TIMEOUT:g} s | "
          f"{counts.undelivered} |")
    late = sorted(counts.late)
    print(f"| the simulator's own lag inside that window (an update's sleep overrun), p50 / max | "
          f"{late[len(late) // 2]:.2f} s / {late[-1]:.2f} s |")
    if args.soak or args.canaries:
        bound = 1.5 * WAVES * args.update
        print(f"| beyond the bound ({bound:g} s), against the soak time ({args.soak:g} s) | {wall - bound:.1f} s |")
    if args.pull:
        print(f"| nodes that staged the OS image before their slot / pulled it in their slot | "
              f"{counts.staged_before} / {counts.pulled_in_slot} |")


def _pool(args: argparse.Namespace) -> str:
    """The worker pool with the rollout annotations the options ask for."""
    annotations = {"canaries": str(args.canaries) if args.canaries else "",
                   "soak": f"{args.soak:g}s" if args.soak else "",
                   "max-concurrent-pulls": str(args.max_pulls) if args.max_pulls else ""}
    lines = "".join(f'    rollout.machine-config.io/{k}: "{v}"\n' for k, v in annotations.items() if v)
    return ROLLOUT_POOL.replace("  name: worker\n", "  name: worker\n  annotations:\n" + lines) if lines else ROLLOUT_POOL


def _worker(generation: str, pull: float = 0.0) -> str:
    """The worker pool's bench MachineConfig, one file naming the generation of the rollout (and with `pull`, an OS
    image of that generation)."""
    return machine_config_manifest("10-worker-bench", "worker", files={"/etc/bench.conf": f"data:,{generation}"},
                                   mode=0o644, os_image=f"registry.bench.test/os:{generation}" if pull else "")

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--update", type=float, default=2.0, help="seconds one node's update takes")
    parser.add_argument("--wait", type=float, default=60.0, help="seconds a claim may be held (the agent's interval)")
    parser.add_argument("--poll", type=float, default=0.0,
                        help="instead of held claims, ask again after this many seconds (the reference)")
    parser.add_argument("--canaries", type=int, default=0, help="canaries the pool names (a count)")
    parser.add_argument("--soak", type=float, default=0.0, help="the pool's soak time, seconds")
    parser.add_argument("--pull", type=float, default=0.0, help="seconds an OS image pull takes (the new config "
                        "changes the OS image)")
    parser.add_argument("--max-pulls", type=int, default=0, help="the pool's max-concurrent-pulls (0: no limit)")
    args = parser.parse_args()
    with bench_deployment("rollout") as (etcd, fleet, tmp):
        cluster_dir = tmp / "cluster"
        (cluster_dir / "manifests").mkdir(parents=True)
        (cluster_dir / "cluster.yaml").write_text("name: bench\nbaseDomain: bench.test\n")
        (cluster_dir / "manifests" / "00-pool.yaml").write_text(_pool(args))
        (cluster_dir / "manifests" / "10-worker-bench.yaml").write_text(_worker("old", args.pull))
        fleet.start_controller("ctl-a", cluster_dir)
        # every node holds a claim open: one connection each, all from this one address
        held = str(2 * args.nodes)
        replicas = [fleet.start_replica(None, "--max-connections", held, "--max-connections-per-client", held)
                    for _ in range(3)]
        asyncio.run(run(args, etcd, fleet, cluster_dir, replicas))


if __name__ == "__main__":
    main()
