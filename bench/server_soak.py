"""Soak: 100,000+ seeded hostile and ordinary requests against one `mco serve`, checking it holds.

Starts `mco serve --workers 1` on the bench cluster (bench/server_bench.py's generator) with a directory
store, records the served bytes of every pool and the server's RSS, then sends the cases of
tests/server/fuzzcases.py (many header lines, long whitespace runs, obs-folds, control bytes,
mutations, hostile report bodies, odd names and versions), each on a fresh connection, `--threads` at
a time, while another thread asks `/healthz` every 0.2 s. Reports and checks:

- event-loop blocks over 100 ms (the server's own monitor, `/metrics`): must be 0;
- 5xx answers other than 505 (HTTP version not supported): must be 0;
- `/healthz` answering 200 throughout: every probe;
- RSS before and after; the served bytes unchanged.

    .venv/bin/python bench/server_soak.py [--cases 100000] [--seed 18] [--threads 32]
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import re
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from server_bench import ACCEPT, write_cluster  # noqa: E402
from wrk_setup import WrkBench, run_bench  # noqa: E402

from tests.server.fuzzcases import cases, first_status  # noqa: E402


def rss_kib(pid: int) -> int:
    """Resident set size of a process, KiB."""
    text = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+) kB", text)
    return int(match.group(1)) if match else 0


def served(base: str) -> dict[str, str]:
    """sha256 of what each pool serves (identity and gzip) with the Ignition Accept header."""
    out = {}
    for pool in ("worker", "master"):
        for encoding in ("identity", "gzip"):
            request = urllib.request.Request(f"{base}/config/{pool}",
                                             headers={"Accept": ACCEPT, "Accept-Encoding": encoding})
            with urllib.request.urlopen(request, timeout=10) as response:
                out[f"{pool}/{encoding}"] = hashlib.sha256(response.read()).hexdigest()
    return out


def loop_metrics(base: str) -> tuple[float, float]:
    """(longest block seconds, blocks over 100 ms) from the server's /metrics."""
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as response:
        text = response.read().decode()
    longest = re.search(r"^mco_event_loop_longest_block_seconds (\S+)$", text, re.M)
    blocks = re.search(r"^mco_event_loop_blocks_total (\S+)$", text, re.M)
    return float(longest.group(1)) if longest else float("nan"), float(blocks.group(1)) if blocks else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--threads", type=int, default=32)
    args = parser.parse_args()
    return run_bench("mco-soak-", (), soak, args)


def soak(bench: WrkBench, args: argparse.Namespace) -> int:
    """The cases against the server while /healthz is probed; the checks printed (0: the server held)."""
    write_cluster(bench.tmp / "cluster", large_files=200, small_bytes=1600)
    server = bench.serve(bench.tmp / "cluster", "--access-log", "off")
    proc, base = server.proc, server.url
    port = int(base.rsplit(":", 1)[1])
    before_bytes, rss_before = served(base), rss_kib(proc.pid)
    stop = threading.Event()
    probes = collections.Counter[int]()

    def probe() -> None:
        while not stop.is_set():
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:
                    probes[response.status] += 1
            except OSError:
                probes[0] += 1
            stop.wait(0.2)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    outcomes: collections.Counter[tuple[str, int]] = collections.Counter()
    started = time.monotonic()

    def run(case: tuple[str, bytes]) -> tuple[str, int]:
        return case[0], first_status(port, case[1], timeout=20)

    with ThreadPoolExecutor(args.threads) as pool:
        for kind, status in pool.map(run, ((c.kind, c.data) for c in cases(args.seed, args.cases)),
                                     chunksize=64):
            outcomes[(kind, status)] += 1
    elapsed = time.monotonic() - started
    stop.set()
    prober.join()
    longest, blocks = loop_metrics(base)
    after_bytes, rss_after = served(base), rss_kib(proc.pid)
    unexplained = {k: n for k, n in outcomes.items() if k[1] >= 500 and k[1] != 505}
    by_status = collections.Counter[int]()
    for (_, status), n in outcomes.items():
        by_status[status] += n
    print(f"cases: {sum(outcomes.values())} (seed {args.seed}) in {elapsed:.0f} s, {args.threads} at a time")
    print("answers by status:", ", ".join(f"{s or 'closed'}: {n}" for s, n in sorted(by_status.items())))
    print(f"event loop: longest block {longest * 1000:.1f} ms, blocks over 100 ms: {blocks:.0f}")
    print(f"unexplained 5xx: {sum(unexplained.values())} {dict(unexplained) if unexplained else ''}")
    print(f"/healthz probes: {probes[200]} answered 200, {sum(probes.values()) - probes[200]} not")
    print(f"RSS: {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB after")
    print(f"served bytes unchanged: {before_bytes == after_bytes}")
    ok = (blocks == 0 and not unexplained and probes[200] > 0 and sum(probes.values()) == probes[200]
          and before_bytes == after_bytes)
    print("soak:", "held" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
