"""oci-mode layer for a 10,000-file rendered config vs `tar -c | gzip` of the same tree, in the same run.

Prints the best of N timings for: our layer from the plan (write_layer: PAX tar + gzip level 6), the whole
oci-mode step (plan_image incl. data-URL decoding + write_layer), and the reference `tar -cf - . | gzip`
(gzip's default level 6) over the same files materialised on disk; then the ratios. Goal: layer within 1.5x.

    .venv/bin/python bench/image_bench.py [--files 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from timing import best_of  # noqa: E402

from fleet.rendered import MachineConfigSpec, RenderedConfig  # noqa: E402
from imagebuild.layer import write_layer  # noqa: E402
from imagebuild.plan import plan_image  # noqa: E402

WORDS = "alpha beta gamma delta option value true false enabled server pool 10 20 30 /etc /usr".split()


def make_config(n: int, seed: int = 1) -> RenderedConfig:
    """n files of 100 B - 4 KiB of config-like text in 100 directories, as base64 data URLs."""
    rng = random.Random(seed)
    files = []
    for i in range(n):
        words = rng.choices(WORDS, k=rng.randint(15, 600))
        data = ("\n".join(" ".join(words[j:j + 6]) for j in range(0, len(words), 6)) + "\n").encode()
        files.append({"path": f"/etc/bench/d{i % 100:02d}/f{i:05d}.conf", "mode": 0o644,
                      "contents": {"source": "data:;base64," + base64.b64encode(data).decode()}})
    return RenderedConfig("rendered-bench-0", "bench",
                          MachineConfigSpec(config={"ignition": {"version": "3.2.0"}, "storage": {"files": files}}))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rendered = make_config(args.files)
    plan = plan_image(rendered)
    assert not plan.refused
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        for e in plan.entries:
            target = root / e.path.lstrip("/")
            if e.kind == "dir":
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.write_bytes(e.data)
                os.chmod(target, e.mode)
        sink = Path(tmp) / "out"

        def ours_layer() -> None:
            with open(sink, "wb") as out:
                write_layer(plan.entries, out)

        def ours_full() -> None:
            with open(sink, "wb") as out:
                write_layer(plan_image(rendered).entries, out)

        def tar_gzip() -> None:
            subprocess.run(f"tar -C {root} -cf - . | gzip -6 > {sink}", shell=True, check=True)

        t_tar = best_of(tar_gzip, args.repeat)
        tar_size = sink.stat().st_size
        t_layer = best_of(ours_layer, args.repeat)
        layer_size = sink.stat().st_size
        t_full = best_of(ours_full, args.repeat)
    total = sum(len(e.data) for e in plan.entries)
    print(f"files: {args.files}, entries: {len(plan.entries)}, content: {total / 1e6:.1f} MB, best of {args.repeat}")
    print(f"tar -c | gzip          {t_tar:7.3f} s  ({tar_size} bytes)")
    print(f"write_layer (gzip)     {t_layer:7.3f} s  ({layer_size} bytes)   ratio {t_layer / t_tar:.2f}x")
    print(f"plan_image+write_layer {t_full:7.3f} s                       ratio {t_full / t_tar:.2f}x")
    print(f"goal: write_layer within 1.5x of tar+gzip: {'met' if t_layer <= 1.5 * t_tar else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
