"""Benchmark: node labels and update phases at 10,000 nodes.

- pages: `GET /pools`, `GET /nodes` (the administrator's listing) and the fleet page's overview `GET /ui/`, on a
  server (`server.run.start`: the real app on a free port, access log off) over a store holding ui_bench's pool
  `worker` mid-rollout (`--machines` records with their report histories), each record also carrying an update
  timeline: the machines mid-update in their phase, every record with the phases of its last updates (5 earlier
  timelines of 6 phases). Median and p95 wall time over one keep-alive connection, and the ratio to the
  reference in the same run, `GET /pools/worker` (one pool's status with its machines). The last rows store a
  report (untimed) before each request, as during a rollout: no answer finds the listing it built last time.
  Goal: each under 50 ms.
- relabel propagation: a 3-member etcd cluster on loopback, `--pools` pools (worker and custom pools selecting
  `node-role.kubernetes.io/<pool>=`), `--machines` node records, 3 `mco serve --store etcd://` replicas. Each of
  `--relabels` relabels is a `PATCH /nodes/NODE/labels` to one replica moving a node into a custom pool (and
  back), timed from its answer until every replica's `GET /nodes/NODE` shows the new pool (each polled every
  2 ms). Reference in the same run: a node's report (`POST /nodes/NODE/status`) until every replica shows it.
  Goal: p99 <= 250 ms (the bound replicas hold for a new target, bench/README.md scale_out_bench).

    .venv/bin/python bench/labels_bench.py [--machines 10000] [--pools 20] [--relabels 50] [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ui_bench import _rendered, _time, fill, reporter  # noqa: E402

from fleet.directory_store import DirectoryStore  # noqa: E402
from fleet.node_status import NodeStatus  # noqa: E402
from fleet.phases import PhaseEntry  # noqa: E402
from fleet.rendered import PoolRecord  # noqa: E402
from fleet.store import MemoryStore, Store  # noqa: E402
from fleet.store_open import close_store, open_store  # noqa: E402
from server.auth import AccessPolicy  # noqa: E402
from server.run import start  # noqa: E402
from server.settings import ServerSettings  # noqa: E402
from tests.server.scale_out import bench_deployment  # noqa: E402

GOAL_MS, GOAL_P99_MS = 50.0, 250.0
TOKEN = "bench-admin-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
DONE = ("prepared", "drained", "written", "reboot-requested", "rebooted", "verified", "uncordoned", "done")


def _timeline(config: str, phases: tuple[str, ...], minute: int) -> tuple[PhaseEntry, ...]:
    return tuple(PhaseEntry(p, f"2026-12-03T{minute // 60:02d}:{minute % 60:02d}:{i:02d}Z", config,
                            "boot-0123456789abcdef" if p.startswith("reboot") else "") for i, p in enumerate(phases))


def with_timelines(store: Store, new: str) -> None:
    """Every record of `store` with an update timeline and 5 earlier ones, as months of updates leave them."""
    for status in list(store.list_node_status()):
        i = int(status.name.rsplit("-", 1)[1])
        if status.state == "Working":
            phases = DONE[: 2 + i % 5]
        elif status.state == "Degraded":
            phases = (*DONE[:2], "degraded")
        else:
            phases = DONE
        earlier = tuple(_timeline(f"rendered-worker-{k:032x}", DONE, 60 * k) for k in range(5))
        store.put_node_status(replace(status, timeline=_timeline(new, phases, i % 600), updates=earlier))


async def pages(kind: str, machines: int, warmup: int, runs: int) -> list[tuple[str, float, float, int]]:
    with tempfile.TemporaryDirectory(prefix="mco-labels-bench-") as tmp:
        store: Store = MemoryStore() if kind == "memory" else DirectoryStore(Path(tmp) / "store")
        _, new = fill(store, machines, 20)
        with_timelines(store, new)
        settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log="off",
                                  policy=AccessPolicy(admin_tokens=(TOKEN,)))
        running = await start(settings, store=store, leader=False)
        try:
            _, host, port = running.addresses[0]
            base = f"http://{host}:{port}"
            rows = []
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1), headers=ADMIN) as http:
                for label, path in (("GET /pools/worker (reference)", "/pools/worker"), ("GET /pools", "/pools"),
                                    ("GET /nodes (admin)", "/nodes"), ("GET /ui/ (overview)", "/ui/")):
                    median, p95, _, size = await _time(http, base + path, warmup, runs)
                    rows.append((label, median, p95, size))
                for label, path in (("GET /nodes after a report", "/nodes"), ("GET /ui/ after a report", "/ui/")):
                    median, p95, _, size = await _time(http, base + path, warmup, runs, reporter(store, new))
                    rows.append((label, median, p95, size))
            return rows
        finally:
            await running.stop()


def _call(base: str, path: str, method: str = "GET", body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{base}{path}", data=data, method=method,
                                     headers={**ADMIN, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _until_everywhere(replicas: list[str], node: str, seen: Callable[[dict[str, Any]], bool]) -> float:
    """Seconds (monotonic) when every replica's record of `node` satisfies `seen`."""
    pending = set(replicas)
    while pending:
        pending = {r for r in pending if not seen(_call(r, f"/nodes/{node}"))}
        if pending:
            time.sleep(0.002)
    return time.monotonic()


def fill_fleet(store: Store, machines: int, pools: int) -> list[str]:
    """Pools worker and pool-01.. (each with a small rendered target), `machines` workers; the custom pools' names."""
    names = ["worker", *(f"pool-{i:02d}" for i in range(1, pools))]
    for name in names:
        rendered = _rendered(name, 2, name, ())
        store.put_rendered(rendered)
        store.put_pool(PoolRecord(name, current=rendered.name, max_unavailable="10%"))
    worker = store.get_pool("worker").current or ""
    records = [NodeStatus(f"node-{i:05d}", "worker", worker, worker, "Done", "", "2026-12-03T10:00:00Z")
               for i in range(machines)]
    with ThreadPoolExecutor(32) as writers:
        list(writers.map(store.put_node_status, records))
    return names[1:]


def relabels(machines: int, pools: int, count: int) -> tuple[list[float], list[float]]:
    """(ms until every replica shows each relabel, ms until every replica shows each report)."""
    moved, reported = [], []
    with bench_deployment("labels", tools=()) as (etcd, fleet, tmp):
        writer = open_store(fleet.store_url)
        try:
            custom = fill_fleet(writer, machines, pools)
            worker = writer.get_pool("worker").current
        finally:
            close_store(writer)
        (tmp / "admin").write_text(TOKEN + "\n")
        replicas = [fleet.start_replica(None, "--admin-token-file", str(tmp / "admin")) for _ in range(3)]
        for i in range(count):
            node, pool = f"node-{(i * 197) % machines:05d}", custom[i % len(custom)]
            label = f"node-role.kubernetes.io/{pool}"
            answer = _call(replicas[i % 3], f"/nodes/{node}/labels", "PATCH", {label: ""})
            assert answer["pool"] == pool, answer
            began = time.monotonic()
            moved.append((_until_everywhere(replicas, node, lambda n, p=pool: n["pool"] == p) - began) * 1000)
            _call(replicas[i % 3], f"/nodes/{node}/labels", "PATCH", {label: None})
            _until_everywhere(replicas, node, lambda n: n["pool"] == "worker")
            report = {"pool": "worker", "currentConfig": worker, "desiredConfig": worker, "state": "Done",
                      "message": f"report {i}"}
            _call(replicas[(i + 1) % 3], f"/nodes/{node}/status", "POST", report)
            began = time.monotonic()
            reported.append((_until_everywhere(replicas, node, lambda n, m=report["message"]: n["message"] == m)
                             - began) * 1000)
    return moved, reported


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machines", type=int, default=10_000)
    parser.add_argument("--pools", type=int, default=20)
    parser.add_argument("--relabels", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--part", default="pages,relabel")
    args = parser.parse_args()
    parts = args.part.split(",")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    worst = 0.0
    if "pages" in parts:
        for kind in ("memory", "directory"):
            rows = asyncio.run(pages(kind, args.machines, args.warmup, args.runs))
            reference = rows[0][1]
            print(f"\n{kind} store, {args.machines} machines with timelines, {args.runs} runs")
            print("| request | median ms | p95 ms | median / reference | body KB |")
            print("|---|---|---|---|---|")
            for label, median, p95, size in rows:
                print(f"| {label} | {median:.1f} | {p95:.1f} | {median / reference:.2f} | {size / 1024:.0f} |")
                if "reference" not in label:
                    worst = max(worst, median)
        print(f"\nslowest median: {worst:.1f} ms (goal < {GOAL_MS:.0f} ms): {'met' if worst < GOAL_MS else 'NOT met'}")
    if "relabel" in parts:
        moved, reported = relabels(args.machines, args.pools, args.relabels)
        print(f"\nrelabel propagation, {args.machines} nodes, {args.pools} pools, 3 replicas, {args.relabels} relabels")
        print("| until every replica shows it | p50 ms | p99 ms | max ms |")
        print("|---|---|---|---|")
        for label, values in (("a relabel (PATCH /nodes/NODE/labels)", moved),
                              ("a report (POST /nodes/NODE/status, reference)", reported)):
            print(f"| {label} | {statistics.median(values):.0f} | {_pct(values, 0.99):.0f} | {max(values):.0f} |")
        p99 = _pct(moved, 0.99)
        print(f"\nrelabel p99 {p99:.0f} ms (goal <= {GOAL_P99_MS:.0f} ms): {'met' if p99 <= GOAL_P99_MS else 'NOT met'}; "
              f"ratio to the report's p99: {p99 / _pct(reported, 0.99):.2f}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
