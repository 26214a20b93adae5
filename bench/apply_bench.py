"""`mco apply` speed: a no-op sync of a node holding a 10,000-file config beside a one-file change.

A one-file change must cost about what the no-op costs, not what a full rewrite costs. Everything is timed
in the same run on the same node root (best of --runs), in-process through the agent (config read from a
JSON file as `--desired` does, verification, state writes with fsync):
  full write      first apply of the config onto an empty root (the reference a rewrite would cost)
  no-op (cold)    a fresh agent: every file re-read and compared (what `mco apply --once` does)
  no-op (warm)    the looping agent: files whose lstat is unchanged are not re-read
  one-file change the config with one file's contents changed (rebootless policy), alternating A/B
Usage: .venv/bin/python bench/apply_bench.py [--files 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from timing import best_of  # noqa: E402

from applier.agent import Agent, AgentSettings  # noqa: E402
from applier.backends.none import NoBackend  # noqa: E402
from applier.fetch import FileSource  # noqa: E402
from applier.runner import SubprocessRunner  # noqa: E402
from tests.applier.doubles import MemoryReporter  # noqa: E402

POLICY = json.dumps({"files": [{"path": "/etc/bench", "actions": [{"type": "None"}]}]})


def config(name: str, files: int, changed: int | None = None) -> dict:
    """A rendered config of `files` files in 100 directories; file `changed` gets other contents."""
    entries = []
    for i in range(files):
        text = f"# bench file {i}\nkey{i} = value {i * 7919 % 10007}\n" + ("x" * (i % 300)) + "\n"
        if i == changed:
            text += f"changed in {name}\n"
        entries.append({"path": f"/etc/bench/d{i % 100}/file-{i}.conf", "mode": 0o644, "overwrite": True,
                        "contents": {"source": "data:," + urllib.parse.quote(text, safe="")}})
    return {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
            "metadata": {"name": f"rendered-worker-{name}", "labels": {"machineconfiguration.openshift.io/pool":
                                                                        "worker"},
                         "annotations": {"machineconfiguration.openshift.io/node-disruption-policy": POLICY}},
            "spec": {"config": {"ignition": {"version": "3.5.0"}, "storage": {"files": entries}}}}


def agent(root: Path, desired: Path) -> Agent:
    """An agent on `root` reading `desired`."""
    return Agent(AgentSettings(node="bench", root=root, reboot_command="true"), source=FileSource(desired),
                 reporter=MemoryReporter(), backend=NoBackend(), runner=SubprocessRunner())


def main() -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mco-apply-bench-"))
    try:
        a, b = work / "a.json", work / "b.json"
        a.write_text(json.dumps(config("a", args.files, changed=None)))
        b.write_text(json.dumps(config("b", args.files, changed=args.files // 2)))
        desired = work / "desired.json"

        roots = iter(range(10_000))

        def full_write() -> None:
            root = work / f"root-{next(roots)}"
            root.mkdir()
            shutil.copy(a, desired)
            result = agent(root, desired).sync()
            assert result.state == "Done", result.message
            shutil.rmtree(root)

        t_full = best_of(full_write, 1)  # fsync-bound: one run is enough
        root = work / "node"
        root.mkdir()
        shutil.copy(a, desired)
        looping = agent(root, desired)
        assert looping.sync().state == "Done"

        def noop_cold() -> None:
            result = agent(root, desired).sync()
            assert (result.state, result.changed) == ("Done", False), result.message

        def noop_warm() -> None:
            result = looping.sync()
            assert (result.state, result.changed) == ("Done", False), result.message

        flip = iter(range(10_000))

        def one_file() -> None:
            shutil.copy(b if next(flip) % 2 == 0 else a, desired)
            result = looping.sync()
            assert result.state == "Done" and result.changed and "without reboot" in result.message, result.message

        looping.sync()  # warm the stat cache
        t_cold = best_of(noop_cold, args.runs)
        t_warm = best_of(noop_warm, args.runs)
        t_one = best_of(one_file, args.runs)
        shutil.copy(a, desired)
        looping.sync()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = a.stat().st_size if a.exists() else 0
    print(f"apply_bench: {args.files} files, best of {args.runs}{f', config {size / 1e6:.1f} MB' if size else ''}")
    print(f"{'full write':>16} {t_full * 1000:9.0f} ms")
    print(f"{'no-op (cold)':>16} {t_cold * 1000:9.0f} ms")
    print(f"{'no-op (warm)':>16} {t_warm * 1000:9.0f} ms")
    print(f"{'one-file change':>16} {t_one * 1000:9.0f} ms")
    print(f"ratio one-file / no-op (warm): {t_one / t_warm:.2f}x; one-file / no-op (cold): {t_one / t_cold:.2f}x; "
          f"one-file / full write: {t_one / t_full:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
