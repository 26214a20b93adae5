"""Render benchmark: a generated cluster of 1,000 MachineConfigs with 20,000 files in all.

Times are CPU seconds of this process (`time.process_time`), so that other work on a shared machine
disturbs the ratio less than it disturbs wall-clock figures (rendering is single-threaded). Prints the time to render it (load, validate, merge, name, provenance, store) beside the floor: merely
parsing and serialising the same manifest bytes with `json`, in the same run; then the ratio.
Usage: .venv/bin/python bench/render_bench.py [--configs N] [--files-per-config M] [--repeat R] (best of R, floor and render
interleaved; each stage line is the best of R cold runs of that stage)

Two pairs of figures: both runs in this process (the render's memo tables emptied first), and each run in a
process of its own, as `mco render` runs (imports left out of the time, nothing warm). No render result is
kept alive across the timed runs: holding one (40 MB of small objects) made every later render 10-20%
slower, in every stage alike (the allocator then places new objects among the old ones), which measured
the benchmark, not the render.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from timing import best_of  # noqa: E402

from fleet.directory_store import DirectoryStore  # noqa: E402
from fleet.store import MemoryStore  # noqa: E402
from ignition.rules.caches import clear_caches  # noqa: E402
from renderer.inputs import load_inputs  # noqa: E402
from renderer.merge_machineconfigs import merge_machine_configs  # noqa: E402
from renderer.order import merge_order  # noqa: E402
from renderer.provenance import compute_provenance  # noqa: E402
from renderer.render import render_cluster  # noqa: E402
from renderer.validate_machineconfigs import check_machine_config, validate_result  # noqa: E402


def generate(root: Path, configs: int, per_config: int) -> list[Path]:
    """Write cluster.yaml and `configs` JSON MachineConfigs (half worker, half master); 1 in 5 files overrides."""
    (root / "manifests").mkdir(parents=True)
    (root / "cluster.yaml").write_text("name: bench\nosImageURL: quay.io/fedora/fedora-coreos:stable\n")
    paths = []
    for i in range(configs):
        role = "worker" if i % 2 == 0 else "master"
        files = []
        for j in range(per_config):
            shared = j % 5 == 0
            path = f"/etc/bench/shared-{j}.conf" if shared else f"/etc/bench/{i}/file-{j}.conf"
            files.append({"path": path, "mode": 0o644, "contents": {"source": f"data:,v{i}.{j}%0A"}})
        units = [{"name": f"bench-{i}.service", "enabled": True,
                  "contents": f"[Unit]\nDescription=bench {i}\n[Service]\nExecStart=/bin/true\n"
                              "[Install]\nWantedBy=multi-user.target\n"}]
        doc = {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
               "metadata": {"name": f"{i:04d}-{role}-bench", "labels": {"machineconfiguration.openshift.io/role": role}},
               "spec": {"kernelArguments": [f"bench.{i}=1"] if i % 50 == 0 else [],
                        "config": {"ignition": {"version": "3.5.0"}, "storage": {"files": files},
                                   "systemd": {"units": units}}}}
        path = root / "manifests" / f"{i:04d}-{role}-bench.json"
        path.write_text(json.dumps(doc, indent=1))
        paths.append(path)
    return paths


def floor(paths: list[Path]) -> float:
    """Seconds to read, json-parse and json-serialise every manifest."""
    start = time.process_time()
    for path in paths:
        json.dumps(json.loads(path.read_bytes()), sort_keys=True).encode()
    return time.process_time() - start


def cold_render(cluster: Path, store: MemoryStore | DirectoryStore) -> None:
    """One render with the validation rules' memo tables emptied first (what a fresh process does)."""
    clear_caches()
    render_cluster(cluster, store=store)


def stages(cluster: Path) -> dict[str, float]:
    """Seconds per stage of one cold render (the same calls render_cluster makes, timed one by one)."""
    clear_caches()
    out: dict[str, float] = {}
    start = time.process_time()
    inputs = load_inputs(cluster)
    out["load + model"] = time.process_time() - start
    start = time.process_time()
    for mc in inputs.machine_configs:
        check_machine_config(mc, allowed_extensions=inputs.cluster.extensions_allow_list)
    out["validate inputs (ignition.validate)"] = time.process_time() - start
    for name in ("merge", "provenance", "validate result (ignition.validate)"):
        out[name] = 0.0
    for role in ("worker", "master"):
        selected = merge_order(m for m in inputs.machine_configs if m.role == role)
        start = time.process_time()
        spec = merge_machine_configs(selected)
        out["merge"] += time.process_time() - start
        start = time.process_time()
        compute_provenance(selected)
        out["provenance"] += time.process_time() - start
        start = time.process_time()
        validate_result(spec, selected, size=0, pool=role)
        out["validate result (ignition.validate)"] += time.process_time() - start
    return out


def fresh(kinds: tuple[str, ...], cluster: Path, repeat: int) -> dict[str, float]:
    """Best CPU seconds of `repeat` runs of each of `kinds`, every run a new process (`--child`), alternated."""
    out: dict[str, float] = {}
    for _ in range(repeat):
        for name in kinds:
            done = subprocess.run([sys.executable, __file__, "--child", name, str(cluster)],
                                  capture_output=True, text=True, check=True)
            out[name] = min(out.get(name, float("inf")), float(done.stdout))
    return out


def child(kind: str, cluster: Path) -> None:
    """One run of the floor or of a render in this fresh process; prints its CPU seconds."""
    paths = sorted((cluster / "manifests").glob("*.json"))
    start = time.process_time()
    if kind == "floor":
        floor(paths)
    else:
        render_cluster(cluster, store=MemoryStore())
    print(time.process_time() - start)


def main() -> int:
    """Generate, time, print."""
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], Path(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", type=int, default=1000)
    parser.add_argument("--files-per-config", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Path(tmp) / "cluster"
        paths = generate(cluster, args.configs, args.files_per_config)
        size = sum(p.stat().st_size for p in paths)
        result = render_cluster(cluster, store=MemoryStore())
        if not result.ok:
            print("render failed:", result.errors, {p: r.errors[:3] for p, r in result.pools.items()},
                  file=sys.stderr)
            return 1
        del result  # see the module docstring: a result kept alive slows every later render
        # interleaved, best of each: both see the same machine load
        t_floor, t_render = float("inf"), float("inf")
        for _ in range(args.repeat):
            t_floor = min(t_floor, best_of(lambda: floor(paths), 1, time.process_time))
            t_render = min(t_render, best_of(lambda: cold_render(cluster, MemoryStore()), 1, time.process_time))
        store_dir = Path(tmp) / "store"
        t_disk = best_of(lambda: cold_render(cluster, DirectoryStore(store_dir)), 1, time.process_time)
        processes = fresh(("floor", "render"), cluster, args.repeat)
        parts = stages(cluster)
        for _ in range(args.repeat - 1):  # best of R per stage too: a single cold run swings by a quarter
            parts = {name: min(seconds, again) for (name, seconds), again in
                     zip(parts.items(), stages(cluster).values(), strict=True)}
    files = args.configs * args.files_per_config
    print(f"cluster: {args.configs} MachineConfigs, {files} files, {size / 1e6:.1f} MB of JSON manifests")
    print(f"floor  (json parse + serialise): {t_floor * 1000:8.1f} ms")
    print(f"render (MemoryStore)           : {t_render * 1000:8.1f} ms   ratio {t_render / t_floor:5.2f}x (goal <= 6x)")
    print(f"render (DirectoryStore, 1 run) : {t_disk * 1000:8.1f} ms   ratio {t_disk / t_floor:5.2f}x")
    p_floor, p_render = processes["floor"], processes["render"]
    print(f"a process per run (as `mco render` runs), best of {args.repeat}:")
    print(f"floor  (json parse + serialise): {p_floor * 1000:8.1f} ms")
    print(f"render (MemoryStore)           : {p_render * 1000:8.1f} ms   ratio {p_render / p_floor:5.2f}x (goal <= 6x)")
    print("stages (in this process):")
    for name, seconds in parts.items():
        print(f"  stage {name:36s} {seconds * 1000:8.1f} ms   {seconds / t_floor:5.2f}x floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
