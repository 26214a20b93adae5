"""Benchmark: the scale-out layout on a real 3-member etcd cluster (loopback, this machine's cores shared by all).

- propagation: a manifest change -> every one of 3 replicas serves the new bytes. Timed from the moment the
  controller's new pool record is in etcd (seen by a watch in this process: "after the render finishes") to
  the last replica answering the new bytes (each polled every 2 ms); also from the file write. p50/p99 over
  `--changes` changes.
- serving cost: wrk (`-t2 -c64`, Ignition 2.14's Accept header) on one etcd-backed replica and on
  `mco serve --store DIR` (the directory-store server) serving the same rendered bytes, interleaved over
  `--rounds` rounds; requests/s and requests per server CPU-second, ratio replica/directory (goal >= 0.9x).

    .venv/bin/python bench/scale_out_bench.py [--changes 50] [--duration 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from server_bench import ACCEPT, cpu_seconds, run_wrk, write_cluster  # noqa: E402

from fleet.etcd_client import Connection  # noqa: E402
from fleet.etcd_mirror import Mirror  # noqa: E402
from fleet.etcd_url import parse_url  # noqa: E402
from tests.etcd_cluster import free_ports  # noqa: E402
from tests.server.scale_out import ENV, Fleet, bench_deployment, wait_healthy  # noqa: E402


def fetch(base: str) -> bytes:
    request = urllib.request.Request(f"{base}/config/worker", headers={"Accept": ACCEPT})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def propagation(fleet: Fleet, cluster_dir: Path, replicas: list[str], changes: int) -> tuple[list[float], list[float]]:
    """(ms after the pool record landed in etcd, ms after the file write) for each change."""
    conn = Connection(parse_url(fleet.store_url))
    mirror = Mirror(conn)
    landed: dict[str, float] = {}
    lock = threading.Lock()

    def changed() -> None:
        pool = mirror.pool("worker")
        if pool is not None and pool.current:
            with lock:
                landed.setdefault(pool.current, time.monotonic())

    mirror.on_change(changed)
    mirror.start()
    manifest = cluster_dir / "manifests" / "10-worker-bench.yaml"
    original = manifest.read_text()
    after_render, after_write = [], []
    try:
        for i in range(changes):
            before = fetch(replicas[0])
            manifest.write_text(original.replace("value%3D", f"value{i}%3D"))
            written = time.monotonic()
            pending = set(replicas)
            while pending:
                pending = {r for r in pending if fetch(r) == before}
                time.sleep(0.002)
            done = time.monotonic()
            name = mirror.pool("worker").current  # type: ignore[union-attr]
            with lock:
                at = landed[name]
            after_render.append((done - at) * 1000)
            after_write.append((done - written) * 1000)
    finally:
        manifest.write_text(original)
        mirror.stop()
        conn.close()
    return after_render, after_write


def serving(fleet: Fleet, cluster_dir: Path, replica_port: int, tmp: Path, duration: float, rounds: int) -> None:
    port = free_ports(1)[0]
    direct = subprocess.Popen([sys.executable, "-m", "cli", "serve", str(cluster_dir), "--store", str(tmp / "dir-store"),
                               "--listen", f"127.0.0.1:{port}", "--access-log", "off"], env=ENV, cwd=ROOT,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    fleet.others.append(direct)  # stopped with the fleet, SIGTERM included
    try:
        servers = {"etcd replica": (f"http://127.0.0.1:{replica_port}", fleet.replicas[replica_port].pid),
                   "directory store": (f"http://127.0.0.1:{port}", direct.pid)}
        wait_healthy(servers["directory store"][0], direct)
        assert fetch(servers["etcd replica"][0]) == fetch(servers["directory store"][0]), "not the same bytes"
        results: dict[str, list[tuple[float, float]]] = {k: [] for k in servers}
        for _ in range(rounds):
            for label, (base, pid) in servers.items():
                run_wrk(f"{base}/config/worker", 1)  # warm-up
                cpu0 = cpu_seconds(pid)
                result = run_wrk(f"{base}/config/worker", duration)
                cpu = cpu_seconds(pid) - cpu0
                assert result["non2xx"] == 0 and result["socket_errors"] == 0, result
                results[label].append((result["rps"], result["rps"] * duration / max(cpu, 1e-9)))
        print("| server | req/s best | req/s median | req per CPU-s (median) |")
        print("|---|---|---|---|")
        for label, runs in results.items():
            print(f"| {label} | {max(r for r, _ in runs):.0f} | {statistics.median(r for r, _ in runs):.0f} | "
                  f"{statistics.median(c for _, c in runs):.0f} |")
        best = {k: max(r for r, _ in v) for k, v in results.items()}
        per_cpu = {k: statistics.median(c for _, c in v) for k, v in results.items()}
        print(f"replica/directory: {best['etcd replica'] / best['directory store']:.2f}x req/s (best), "
              f"{per_cpu['etcd replica'] / per_cpu['directory store']:.2f}x req per CPU-s (goal >= 0.9x)")
    finally:
        direct.kill()
        direct.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with bench_deployment("bench", tools=("wrk",)) as (_etcd, fleet, tmp):
        cluster_dir = tmp / "cluster"
        write_cluster(cluster_dir, large_files=250, small_bytes=4000)
        fleet.start_controller("ctl-a", cluster_dir)
        fleet.start_controller("ctl-b", cluster_dir)
        ports = free_ports(3)
        replicas = [fleet.start_replica(p) for p in ports]
        size = len(fetch(replicas[0]))
        after_render, after_write = propagation(fleet, cluster_dir, replicas, args.changes)
        print(f"propagation over {args.changes} changes of a {size // 1000} KB worker config, 3 replicas:")
        print("| from | p50 ms | p99 ms | max ms |")
        print("|---|---|---|---|")
        for label, values in (("pool record in etcd (render done)", after_render),
                              ("manifest file written", after_write)):
            print(f"| {label} | {percentile(values, 0.5):.0f} | {percentile(values, 0.99):.0f} | {max(values):.0f} |")
        serving(fleet, cluster_dir, ports[0], tmp, args.duration, args.rounds)


if __name__ == "__main__":
    main()
