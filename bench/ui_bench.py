"""Benchmark: the fleet page's response times for a pool of 10,000 machines (goal: every page under 50 ms).

One run per store: in memory (`MemoryStore`), on disk (`DirectoryStore`), and an etcd replica's (a 3-member
etcd cluster on loopback, filled through one `EtcdStore`, served from a replica's watch-fed mirror (fleet/store_open.py `follow=True`),
as `mco serve --store etcd://` does), each holding pool `worker` mid-rollout with `--machines` reports (a
mix of Done at the target, Done at the old target, Working and Degraded) and two rendered configs of
`--files` files; `server.run.start` serves it on a free port (the real aiohttp app, access log off). Each URL
gets `--warmup` unmeasured requests, then `--runs` measured ones over one keep-alive connection; printed:
median and p95 wall time per request (client included), the process CPU time per request (server and client
share the process: an upper bound of the server's own), and the ratio of the median to the reference in the
same run, `GET /pools/worker` (the JSON the page replaces, reading the same records). The last two rows
store a report (untimed, and on etcd until the replica's mirror has it) before each request, as during a
rollout: no page finds the listing it counted last time. On a machine shared with other work, the wall times
grow with the load average (printed first); the CPU column does not.

    .venv/bin/python bench/ui_bench.py [--machines 10000] [--runs 30] [--store memory,directory,etcd]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fleet.directory_store import DirectoryStore  # noqa: E402
from fleet.node_status import NodeStatus, with_report  # noqa: E402
from fleet.rendered import Condition, HistoryEntry, MachineConfigSpec, PoolRecord, RenderedConfig  # noqa: E402
from fleet.store import MemoryStore, Store  # noqa: E402
from fleet.store_open import close_store, open_store  # noqa: E402
from server.run import start  # noqa: E402
from server.settings import ServerSettings  # noqa: E402
from tests.etcd_cluster import EtcdCluster  # noqa: E402

GOAL_MS = 50.0
STAMP = "2026-12-03T10:{:02d}:{:02d}Z"


def _rendered(pool: str, files: int, salt: str, kargs: tuple[str, ...]) -> RenderedConfig:
    config = {"ignition": {"version": "3.4.0"},
              "storage": {"files": [{"path": f"/etc/bench/{salt}-{i}.conf", "mode": 420,
                                     "contents": {"source": f"data:,{salt}%20{i}"}} for i in range(files)]},
              "systemd": {"units": [{"name": f"bench-{i}.service", "enabled": True} for i in range(files // 10)]}}
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:32]
    return RenderedConfig(f"rendered-{pool}-{digest}", pool, MachineConfigSpec(config=config, kernel_arguments=kargs),
                          sources=("00-bench",))


def fill(store: Store, machines: int, files: int, *, writers: int = 1) -> tuple[str, str]:
    """Pool `worker` mid-rollout; returns (old, new) rendered names (`writers` threads store the reports)."""
    old, new = _rendered("worker", files, "a", ()), _rendered("worker", files, "b", ("nosmt",))
    for rendered in (old, new):
        store.put_rendered(rendered)
    store.put_pool(PoolRecord("worker", current=new.name, sources=new.sources, max_unavailable="10%",
                              conditions=(Condition("RenderDegraded", "False"),),
                              history=(HistoryEntry(old.name, "2026-12-01T00:00:00Z"),
                                       HistoryEntry(new.name, "2026-12-03T09:00:00Z"))))
    records = []
    for i in range(machines):
        kind = i % 20
        stamp = STAMP.format((i // 60) % 60, i % 60)
        if kind < 8:
            status = NodeStatus(f"worker-{i:05d}", "worker", new.name, new.name, "Done", "", stamp)
        elif kind < 17:
            status = NodeStatus(f"worker-{i:05d}", "worker", old.name, old.name, "Done", "", stamp)
        elif kind < 19:
            status = NodeStatus(f"worker-{i:05d}", "worker", old.name, new.name, "Working", "draining", stamp)
        else:
            status = NodeStatus(f"worker-{i:05d}", "worker", old.name, new.name, "Degraded",
                                f"failed to apply /etc/bench/b-{i % files}.conf: disk full", stamp)
        before = with_report(None, NodeStatus(status.name, "worker", old.name, old.name, "Done", "", "2026-12-02T00:00:00Z"))
        records.append(with_report(before, status))  # a record as the server writes it: with its history
    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(store.put_node_status, records))
    return old.name, new.name


async def _time(http: aiohttp.ClientSession, url: str, warmup: int, runs: int,
                before: Callable[[int], None] | None = None) -> tuple[float, float, float, int]:
    """(median ms, p95 ms, CPU ms per request, body bytes); `before(i)` runs untimed before each request."""
    size = 0
    for i in range(warmup):
        if before is not None:
            before(i)
        async with http.get(url) as response:
            assert response.status == 200, (url, response.status)
            size = len(await response.read())
    samples = []
    cpu = 0.0
    for i in range(runs):
        if before is not None:
            before(warmup + i)
        began, began_cpu = time.perf_counter(), time.process_time()
        async with http.get(url) as response:
            await response.read()
        samples.append((time.perf_counter() - began) * 1000)
        cpu += time.process_time() - began_cpu
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.95))], cpu * 1000 / runs, size


def reporter(store: Store, new: str) -> Callable[[int], None]:
    """Stores one report that moves a machine along (as during a rollout), so no page finds the fleet unchanged."""
    def report(i: int) -> None:
        name = f"worker-{(i * 20 + 9) % 10_000:05d}"
        status = NodeStatus(name, "worker", new, new, "Done", "", STAMP.format(59, i % 60))
        store.put_node_status(status)
        while store.get_node_status(name) != status:  # an etcd replica: until its mirror has the write
            time.sleep(0.001)
    return report


async def bench(kind: str, machines: int, files: int, warmup: int, runs: int
                ) -> list[tuple[str, float, float, float, int]]:
    with tempfile.TemporaryDirectory(prefix="mco-ui-bench-") as tmp, contextlib.ExitStack() as cleanup:
        store: Store
        if kind == "etcd":  # a replica's store: the page reads its watch-fed mirror
            etcd = EtcdCluster(Path(shutil.which("etcd") or "etcd"), Path(shutil.which("etcdctl") or "etcdctl"))
            cleanup.callback(etcd.stop)
            etcd.start()
            writer = open_store(etcd.url("bench"))
            cleanup.callback(close_store, writer)
            old, new = fill(writer, machines, files, writers=32)
            store = open_store(etcd.url("bench"), follow=True)
            cleanup.callback(close_store, store)
        else:
            store = MemoryStore() if kind == "memory" else DirectoryStore(Path(tmp) / "store")
            old, new = fill(store, machines, files)
        settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log="off")
        running = await start(settings, store=store, leader=False)
        try:
            _, host, port = running.addresses[0]
            base = f"http://{host}:{port}"
            urls = [("GET /pools/worker (JSON, reference)", "/pools/worker"),
                    ("GET /ui/ (overview)", "/ui/"),
                    ("GET /ui/pools/worker (first page)", "/ui/pools/worker"),
                    ("… ?state=Degraded&sort=reported&order=desc&page=3",
                     "/ui/pools/worker?state=Degraded&sort=reported&order=desc&page=3"),
                    ("GET /ui/nodes/worker-00019 (machine)", "/ui/nodes/worker-00019"),
                    (f"GET /ui/pools/worker/diff ({files} files each)", f"/ui/pools/worker/diff?from={old}&to={new}")]
            rows = []
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as http:
                for label, path in urls:
                    median, p95, cpu, size = await _time(http, base + path, warmup, runs)
                    rows.append((label, median, p95, cpu, size))
                for label, path in (("GET /ui/ after a report", "/ui/"),
                                    ("GET /ui/pools/worker after a report", "/ui/pools/worker")):
                    median, p95, cpu, size = await _time(http, base + path, warmup, runs, reporter(store, new))
                    rows.append((label, median, p95, cpu, size))
            return rows
        finally:
            await running.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machines", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--store", default="memory,directory,etcd")
    args = parser.parse_args()
    if "etcd" in args.store.split(",") and not (shutil.which("etcd") and shutil.which("etcdctl")):
        sys.exit("etcd not installed (scripts/install-deps.sh); or --store memory,directory")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    worst = 0.0
    for kind in args.store.split(","):
        rows = asyncio.run(bench(kind, args.machines, args.files, args.warmup, args.runs))
        reference = rows[0][1]
        print(f"\n{kind} store, {args.machines} machines, {args.runs} runs")
        print("| request | median ms | p95 ms | CPU ms | median / reference | body KB |")
        print("|---|---|---|---|---|---|")
        for label, median, p95, cpu, size in rows:
            print(f"| {label} | {median:.1f} | {p95:.1f} | {cpu:.1f} | {median / reference:.2f} | {size / 1024:.0f} |")
            if "/ui" in label or label.startswith("…"):
                worst = max(worst, median)
    print(f"\nslowest page median: {worst:.1f} ms (goal < {GOAL_MS:.0f} ms): {'met' if worst < GOAL_MS else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
