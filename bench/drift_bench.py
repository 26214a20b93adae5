"""Drift repaired at once in service mode: the real `mco serve` and agent (`mco apply --server --interval 60`),
hand changes timed from the change to the node root showing the declared state again (polled every 5 ms); the
next boot's kernel arguments changed by hand on a real ostree sysroot (`--backend ostree`), timed until the next
boot's entry has fips=1 again; and the watch's cost over a 10,000-file config.

    .venv/bin/python bench/drift_bench.py [--trials 50] [--kargs-trials 20]

References in the same run: a write of the same file by this process (what a file repair at least costs), and
the hand `ostree admin deploy`'s own time (what staging again at least costs). Figures in bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from applier.drift import watch_map  # noqa: E402
from applier.watch import Watcher  # noqa: E402
from tests.applier.drift_lab import RULES, RULES_TEXT, UNIT, DriftLab, drift_lab  # noqa: E402
from tests.applier.kargs_lab import KARG, kargs_lab, next_boot_has_karg  # noqa: E402
from tests.applier.sysroot import edit_next_boot_kargs, stage_by_hand_without_fips  # noqa: E402


def _changes(lab: DriftLab) -> dict[str, tuple[object, object]]:
    rules = lab.root / RULES
    return {
        "edit": (lambda: rules.write_text("-D\n"), lab.rules_ok),
        "chmod": (lambda: os.chmod(rules, 0o644), lab.rules_ok),
        "delete": (lambda: rules.unlink(), lab.rules_ok),
        "systemctl --root disable": (lambda: subprocess.run(["systemctl", f"--root={lab.root}", "disable", UNIT],
                                                            check=True, capture_output=True), lab.enabled),
    }


def _summary(name: str, times: list[float], missed: int, limit: float) -> None:
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"{name}: n={len(times)} median {statistics.median(times) * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms, "
          f"max {times[-1] * 1e3:.1f} ms, {missed} not within {limit:g} s")


def repairs(trials: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, drift_lab(Path(tmp)) as lab:
        start = time.perf_counter()
        for _ in range(trials):
            (lab.root / "etc" / "reference").write_text(RULES_TEXT)
        reference = (time.perf_counter() - start) / trials
        print(f"reference: a write of the file by this process {reference * 1e3:.2f} ms")
        for name, (change, check) in _changes(lab).items():
            times, missed = [], 0
            for _ in range(trials):
                began = time.perf_counter()
                change()  # type: ignore[operator]
                try:
                    lab.until(check, 5, name)  # type: ignore[arg-type]
                except AssertionError:
                    missed += 1  # not repaired within 5 s: counted, and left to the periodic check
                    lab.until(check, 90, name)  # type: ignore[arg-type]
                times.append(time.perf_counter() - began)
                time.sleep(0.05)  # the repair's own report settles
            _summary(name, times, missed, 5)


def kargs(trials: int) -> None:
    """The next boot's kernel arguments changed by hand, timed from the start of the change until the next boot's
    entry has fips=1 again."""
    with tempfile.TemporaryDirectory() as tmp, kargs_lab(Path(tmp)) as (lab, sysroot):
        changes = {"next boot staged by hand without fips=1": lambda: stage_by_hand_without_fips(sysroot),
                   "next boot's entry edited (fips=1 removed)": lambda: edit_next_boot_kargs(sysroot, KARG)}
        hand: list[float] = []
        for name, change in changes.items():
            times, missed = [], 0
            for _ in range(trials):
                time.sleep(0.5)  # the agent idle again, waiting on the server's held answer
                began = time.perf_counter()
                change()
                hand.append(time.perf_counter() - began)
                try:
                    lab.until(lambda: next_boot_has_karg(sysroot), 2, name)
                except AssertionError:
                    missed += 1
                    lab.until(lambda: next_boot_has_karg(sysroot), 90, name)
                times.append(time.perf_counter() - began)
            _summary(name, times, missed, 2)
            if name.startswith("next boot staged"):
                print(f"reference: the hand `ostree admin deploy` itself, median "
                      f"{statistics.median(hand) * 1e3:.1f} ms")


def watch_cost(files: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        entries = []
        for i in range(files):
            path = f"/etc/bench/d{i // 100}/f{i}.conf"
            (root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            (root / path.lstrip("/")).write_text("x\n")
            entries.append({"path": path, "mode": 420, "contents": {"source": "data:,x%0A"}})
        config = {"ignition": {"version": "3.4.0"}, "storage": {"files": entries}}
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        watcher = Watcher(root, watch_map(root, config))
        setup = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cpu0 = time.process_time()
        idle_end = time.monotonic() + 60
        while time.monotonic() < idle_end:  # what the agent's idle loop does: wait in steps of 0.5 s
            Watcher.ready([watcher], 0.5)
        cpu = time.process_time() - cpu0
        print(f"watch over {files} files in {files // 100} directories: {len(watcher._dirs)} inotify watches, "
              f"set up in {setup * 1e3:.0f} ms, max RSS +{(after - before) / 1024:.1f} MiB, "
              f"CPU {cpu * 1e3:.1f} ms per idle minute")
        watcher.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--kargs-trials", type=int, default=20)
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--watch-only", action="store_true", help="only the watch's cost")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    if not args.watch_only:
        repairs(args.trials)
        kargs(args.kargs_trials)
    watch_cost(args.files)


if __name__ == "__main__":
    main()
