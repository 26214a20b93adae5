"""Benchmark: what one rollout hand-out (`claim_node`) and one fleet read cost a store of 10,000 node reports.

One run: pool `worker` (maxUnavailable 10%, every node Done at the old target) with `--nodes` reports, in a
`MemoryStore` and in a `DirectoryStore` on a temporary directory. Measured, each as the median of `--runs`:
- `claim_node` handing one more node the target (the server's decision, `fleet.rollout.desired_for`), each
  claim by a different node, each followed by one report stored through a second DirectoryStore instance on
  the same directory (another `mco serve --workers N` process), so every claim has one change to pick up;
- `list_node_status` of a reader instance after one report stored through another instance;
- `put_node_status`, one report (the write a claim also does).
CPU time of this process (`time.process_time`: the store does its work in this thread) and wall time. The
references, in the same run: one `os.stat` pass over every node record (an O(fleet) pass over the
directory, what a listing that checks every file costs at least) and the MemoryStore's claim (O(1)).

    .venv/bin/python bench/store_bench.py [--nodes 10000] [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fleet.directory_store import DirectoryStore  # noqa: E402
from fleet.node_status import NodeStatus  # noqa: E402
from fleet.rendered import PoolRecord  # noqa: E402
from fleet.rollout import NodeStatuses, desired_for  # noqa: E402
from fleet.store import MemoryStore, Store  # noqa: E402

try:  # the directory store's module since it was split out of fleet/store.py
    from fleet.directory_store import DirectoryStore  # noqa: E402
except ImportError:  # pragma: no cover - measuring an older checkout
    from fleet.directory_store import DirectoryStore  # type: ignore[attr-defined,no-redef]  # noqa: E402

OLD, NEW = "rendered-worker-old", "rendered-worker-new"


def fill(store: Store, nodes: int) -> None:
    """Pool `worker` moving from OLD to NEW, every node Done at OLD."""
    store.put_pool(PoolRecord("worker", current=NEW, max_unavailable="10%"))
    for i in range(nodes):
        store.put_node_status(NodeStatus(f"worker-{i:05d}", "worker", OLD, OLD, "Done", "", "2026-12-03T10:00:00Z"))


def measure(step: Callable[[int], object], runs: int, between: Callable[[int], object] = lambda i: None
            ) -> tuple[float, float]:
    """(median CPU ms, median wall ms) of `step(i)` over `runs` calls; `between(i)` runs untimed before each."""
    cpu, wall = [], []
    for i in range(runs):
        between(i)
        c, w = time.process_time(), time.perf_counter()
        step(i)
        cpu.append((time.process_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    return statistics.median(cpu), statistics.median(wall)


def claimer(store: Store) -> Callable[[int], object]:
    """Claim node `worker-<i>` the way `POST /nodes/<node>/desired` does."""
    def claim(i: int) -> object:
        node = f"worker-{i:05d}"

        def decide(statuses: NodeStatuses) -> NodeStatus | None:
            record = store.get_pool("worker")
            if desired_for(node, record, statuses) != NEW:
                raise AssertionError(f"{node} was not handed the target")
            return NodeStatus(node, "worker", OLD, NEW, "Done", "handed out", "2026-12-03T10:00:01Z")
        return store.claim_node(node, decide)
    return claim


def report(store: Store, first: int) -> Callable[[int], object]:
    """Another writer stores one report, of node `worker-<first - i>` (nodes the claims never reach)."""
    def put(i: int) -> None:
        store.put_node_status(NodeStatus(f"worker-{first - i:05d}", "worker", OLD, OLD, "Done", f"r{i}",
                                         "2026-12-03T10:00:02Z"))
    return put


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {args.nodes} nodes, "
          f"median of {args.runs}")
    rows: list[tuple[str, float, float]] = []
    memory = MemoryStore()
    fill(memory, args.nodes)
    rows.append(("MemoryStore claim_node (reference)", *measure(claimer(memory), args.runs)))
    with tempfile.TemporaryDirectory(prefix="mco-store-bench-") as tmp:
        root = Path(tmp) / "store"
        store, other = DirectoryStore(root), DirectoryStore(root)
        fill(store, args.nodes)
        files = [e.path for e in os.scandir(root / "nodes") if e.name.endswith(".json")]
        rows.append(("os.stat of every node record (reference)",
                     *measure(lambda i: [os.stat(f) for f in files], args.runs)))
        store.list_node_status()
        other.list_node_status()
        rows.append(("DirectoryStore put_node_status (one report, two fsyncs)",
                     *measure(report(other, args.nodes // 4), args.runs)))
        rows.append(("DirectoryStore claim_node, one report by another instance before each",
                     *measure(claimer(store), args.runs, report(other, args.nodes - 1))))
        rows.append(("DirectoryStore list_node_status, one report by another instance before each",
                     *measure(lambda i: store.list_node_status(), args.runs, report(other, args.nodes // 2))))
    stat_cpu = rows[1][1]
    memory_cpu = rows[0][1]
    print("| operation | CPU ms | wall ms | CPU / stat pass | CPU / MemoryStore claim |")
    print("|---|---|---|---|---|")
    for label, cpu, wall in rows:
        print(f"| {label} | {cpu:.3f} | {wall:.3f} | {cpu / stat_cpu:.3f} | {cpu / memory_cpu:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
