"""render_bench.py's ratio counted in instructions instead of CPU time: a figure the machine's load cannot move.

On a shared machine the floor's time swings by half from one minute to the next (other tenants' work) and a
render, whose data do not fit in the caches, swings more. Instructions retired do not swing: valgrind's
cachegrind counts them exactly. This runs the floor (json parse + serialise of every manifest) and a cold
render of the same generated cluster (1,000 JSON MachineConfigs, 20,000 files) under cachegrind, once and
three times each, and prints the instructions of one more run of each and their ratio. The goal stays
render_bench.py's (CPU time within 6x); instructions leave out what the caches and page faults add, which is
why both are printed (bench/README.md).

Usage: .venv/bin/python bench/render_instructions.py [--configs N] [--files-per-config M]
(needs valgrind; about a minute)
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _work(kind: str, cluster: Path, runs: int) -> None:
    """The measured work, `runs` times (run inside valgrind by `instructions`)."""
    from render_bench import cold_render, floor

    from fleet.store import MemoryStore

    paths = sorted((cluster / "manifests").glob("*.json"))
    for _ in range(runs):
        if kind == "floor":
            floor(paths)
        else:
            cold_render(cluster, MemoryStore())


def instructions(kind: str, cluster: Path) -> int:
    """Instructions of one run of `kind`: three runs less one, halved (imports and set-up cancel out)."""
    counts = []
    for runs in (1, 3):
        done = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
             sys.executable, __file__, "--work", kind, str(cluster), str(runs)],
            capture_output=True, text=True, check=True)
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if found is None:
            raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[1] - counts[0]) // 2


def main() -> int:
    """Generate, count, print."""
    if len(sys.argv) == 5 and sys.argv[1] == "--work":
        _work(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", type=int, default=1000)
    parser.add_argument("--files-per-config", type=int, default=20)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("render_instructions: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    from render_bench import generate

    with tempfile.TemporaryDirectory() as tmp:
        cluster = Path(tmp) / "cluster"
        generate(cluster, args.configs, args.files_per_config)
        floor_count = instructions("floor", cluster)
        render_count = instructions("render", cluster)
    print(f"cluster: {args.configs} MachineConfigs, {args.configs * args.files_per_config} files")
    print(f"floor  (json parse + serialise): {floor_count / 1e6:8.1f} M instructions")
    print(f"render (MemoryStore)           : {render_count / 1e6:8.1f} M instructions   ratio {render_count / floor_count:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
