"""The kill campaign's node and trials (bench/kill_campaign.py runs it at scale, tests/applier/test_kill_campaign.py
and test_kill_phases.py in CI); the rules are in bench/kill_campaign.py's docstring."""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from applier.errors import ApplyError  # noqa: E402
from applier.state import StateDir  # noqa: E402
from fleet.atomic import TEMP_MARK  # noqa: E402

PHASES = ("backup", "restore", "remove", "marker", "temp", "state")
POLICY = json.dumps({"files": [{"path": "/etc/kill", "actions": [{"type": "None"}]}]})


def _path(i: int) -> str:
    return f"/etc/kill/d{i % 20}/f{i}.conf"


def _config(name: str, indices: range, variant: int) -> tuple[dict, dict[str, tuple[bytes, int]]]:
    """A rendered config and what it puts on disk (path -> (contents, mode))."""
    expected: dict[str, tuple[bytes, int]] = {}
    entries = []
    for i in indices:
        text = f"{'b' if variant and i % 2 == 0 else 'a'} {i}\n" * (1 + i % 7)
        mode = 0o640 if variant and i % 3 == 0 else 0o644
        expected[_path(i)] = (text.encode(), mode)
        entries.append({"path": _path(i), "mode": mode, "overwrite": True,
                        "contents": {"source": "data:," + urllib.parse.quote(text, safe="")}})
    doc = {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
           "metadata": {"name": f"rendered-worker-{name}",
                        "labels": {"machineconfiguration.openshift.io/pool": "worker"},
                        "annotations": {"machineconfiguration.openshift.io/node-disruption-policy": POLICY}},
           "spec": {"config": {"ignition": {"version": "3.4.0"}, "storage": {"files": entries}}}}
    return doc, expected


def _read(path: Path) -> bytes | None:
    """A regular file's bytes, or None when there is none."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except (FileNotFoundError, IsADirectoryError):
        return None


@dataclass
class Lab:
    """One node root, the two configs, and the checks."""

    root: Path
    desired: dict[str, Path]
    expected: dict[str, dict[str, tuple[bytes, int]]]
    originals: dict[str, bytes]

    @classmethod
    def build(cls, work: Path, *, files: int) -> Lab:
        """A fresh root with its pre-existing files, and A and B written as JSON files."""
        root = work / "root"
        (root / "etc").mkdir(parents=True)
        (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
        (root / "etc/group").write_text("root:x:0:\n")
        quarter = max(files // 4, 1)
        desired, expected = {}, {}
        for name, indices, variant in (("a", range(files), 0), ("b", range(quarter, files + quarter), 1)):
            doc, expected[name] = _config(name, indices, variant)
            desired[name] = work / f"{name}.json"
            desired[name].write_text(json.dumps(doc))
        originals = {}
        for i in range(0, files + quarter, 5):
            originals[_path(i)] = f"original {i}\n".encode()
            target = root / _path(i).lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(originals[_path(i)])
        return cls(root, desired, expected, originals)

    @property
    def state(self) -> StateDir:
        """The node's state directory."""
        return StateDir(self.root / "etc/machine-config-daemon")

    def command(self, target: str, killpoint: tuple[str, int] | None = None) -> list[str]:
        """The `mco apply --once` command towards `target` (through tests/applier/killpoint.py when aimed)."""
        args = ["--once", "--node", "n1", "--desired", str(self.desired[target]), "--root", str(self.root),
                "--backend", "none"]
        if killpoint is None:
            return [sys.executable, "-m", "cli.main", "apply", *args]
        return [sys.executable, str(REPO / "tests/applier/killpoint.py"), killpoint[0], str(killpoint[1]), "--", *args]

    def run(self, target: str, killpoint: tuple[str, int] | None = None) -> subprocess.CompletedProcess[str]:
        """Run the command in its own process to its end (or to its aimed kill)."""
        return subprocess.run(self.command(target, killpoint), cwd=REPO, capture_output=True, text=True,
                              timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})

    def run_here(self, target: str) -> tuple[int, str, str]:
        """The normal run after a kill: the same `mco apply` entry point, in this process (no start-up cost)."""
        from cli.main import main as mco

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = mco(self.command(target)[3:])
        return code, out.getvalue(), err.getvalue()

    def counts(self, start: str, target: str) -> Counter[str]:
        """How many steps of each phase an update from `start` to `target` takes (the node ends back at `start`)."""
        done = self.run(target, ("state", 0))
        line = next(x for x in done.stderr.splitlines() if x.startswith("killpoint-counts "))
        problems = self.converge(start)
        if done.returncode != 0 or problems:
            raise RuntimeError(f"counting run failed: {done.stderr[-500:]} {problems}")
        return Counter(json.loads(line.split(" ", 1)[1]))

    def paths(self) -> set[str]:
        """Every path either config manages."""
        return set(self.expected["a"]) | set(self.expected["b"])

    def _state_problems(self) -> list[str]:
        state = self.state
        try:
            state.current()
            state.pending()
            state.last_report()
            state.failed()
        except ApplyError as exc:
            return [f"state file does not parse: {exc}"]
        return []

    def check_after_kill(self) -> list[str]:
        """Old or new content everywhere, every original somewhere and intact, state files readable."""
        problems = self._state_problems()
        for path in sorted(self.paths()):
            original = self.originals.get(path)
            allowed = {e[path][0] for e in self.expected.values() if path in e} | ({original} if original else set())
            data = _read(self.root / path.lstrip("/"))
            if data is None and original is not None:
                problems.append(f"{path}: a pre-existing file is missing")
            elif data is not None and data not in allowed:
                problems.append(f"{path}: neither old nor new content ({len(data)} bytes)")
            backup = _read(self.state.orig(path))
            if backup is not None and backup != original:
                problems.append(f"{path}: backup does not hold the original")
            if original is not None and backup is None and data != original:
                problems.append(f"{path}: the original is lost")
        return problems

    def converge(self, target: str) -> list[str]:
        """A normal run towards `target`, and the exact state it must leave."""
        code, out, err = self.run_here(target)
        if code != 0:
            return [f"run towards {target} exited {code}: {err.strip()[-400:]}"]
        result = json.loads(out.strip().splitlines()[-1])
        name = f"rendered-worker-{target}"
        problems = [] if (result["state"], result["current"]) == ("Done", name) else [f"result {result}"]
        problems += self._state_problems()
        current, pending = self.state.current(), self.state.pending()
        if current is None or current.name != name or pending is not None:
            problems.append(f"state: current {current and current.name}, pending {pending and pending.config.name}")
        wanted = self.expected[target]
        for path in sorted(self.paths()):
            file = self.root / path.lstrip("/")
            original = self.originals.get(path)
            backup, stamp = self.state.orig(path), self.state.noorig(path)
            if path in wanted:
                data, mode = wanted[path]
                if not file.is_file() or file.read_bytes() != data or stat.S_IMODE(file.stat().st_mode) != mode:
                    problems.append(f"{path}: not the target's content and mode")
                if original is not None and (not backup.is_file() or backup.read_bytes() != original):
                    problems.append(f"{path}: managed, but its original's backup is missing or damaged")
                if original is None and not stamp.exists():
                    problems.append(f"{path}: managed without a no-original stamp")
            else:
                if original is not None and (not file.is_file() or file.read_bytes() != original):
                    problems.append(f"{path}: the original was not put back")
                if original is None and (file.exists() or file.is_symlink()):
                    problems.append(f"{path}: left behind")
                if backup.exists() or stamp.exists():
                    problems.append(f"{path}: backup or stamp left for a path the target does not manage")
        problems += [f"temp file left: {p}" for p in self.root.rglob(f"*{TEMP_MARK}*")]
        return problems


@dataclass
class Tally:
    """What a campaign did."""

    trials: int = 0
    kills: int = 0
    aimed: int = 0
    finished_first: int = 0
    failures: int = 0
    first_failure: str = ""

    def record(self, what: str, problems: list[str]) -> None:
        """Count one check's outcome."""
        if problems:
            self.failures += 1
            if not self.first_failure:
                self.first_failure = f"{what}: {'; '.join(problems[:5])}"


def random_kill(lab: Lab, target: str, window: tuple[float, float], rng: random.Random) -> tuple[bool, float]:
    """Start a run towards `target` and SIGKILL it at a random moment of `window` seconds: whether the kill
    landed, and the moment drawn."""
    proc = subprocess.Popen(lab.command(target), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    moment = window[0] + rng.random() * (window[1] - window[0])
    time.sleep(moment)
    landed = proc.poll() is None
    if landed:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    return landed, moment


def narrowed(window: tuple[float, float], missed_at: float) -> tuple[float, float]:
    """The window after a run finished before its kill at `missed_at`: runs now take less than that (the
    window was timed while the machine was busier), so later kills are drawn below it. Without this, a
    campaign timed on a loaded machine could draw moments after every run's end and never finish."""
    low = min(window[0], missed_at / 2)
    return low, max(missed_at, low + 0.01)


def campaign(work: Path, *, files: int, kills: int, aimed: int, seed: int, until: float = float("inf")) -> Tally:
    """The aimed kills, then random ones until `kills` landed; every trial checked (module docstring).

    `until`: a time.time() after which no trial starts (the tally says how many ran).
    """
    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    lab = Lab.build(work, files=files)
    tally = Tally()
    tally.record("first run", lab.converge("a"))
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "cli.main", "apply", "--help"], cwd=REPO, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(REPO)})
    startup = time.monotonic() - started
    started = time.monotonic()
    timing = lab.run("b")  # a whole run in its own process: the window random kills are drawn from
    window = (startup, max(time.monotonic() - started, startup + 0.05))
    tally.record("timing run", [timing.stderr[-400:]] if timing.returncode else lab.converge("b"))
    for start, target in (("a", "b"), ("b", "a")):
        if aimed <= 0 or tally.failures:
            break
        tally.record(f"converge to {start}", lab.converge(start))
        counts = lab.counts(start, target)
        for phase in PHASES:
            total = counts.get(phase, 0)
            for nth in sorted({max(1, round(total * k / max(aimed - 1, 1))) for k in range(aimed)} if total else ()):
                for after in (start, target):
                    if time.time() > until:
                        return tally
                    tally.trials += 1
                    killed = lab.run(target, (phase, nth))
                    tally.kills += killed.returncode == -signal.SIGKILL
                    tally.aimed += killed.returncode == -signal.SIGKILL
                    tally.record(f"{phase} #{nth} {start}->{target} after the kill", lab.check_after_kill())
                    tally.record(f"{phase} #{nth} {start}->{target}, then towards {after}", lab.converge(after))
                    if after != start:
                        tally.record(f"back to {start}", lab.converge(start))
    at = "a"
    tally.record("start at a", lab.converge("a"))
    while tally.kills - tally.aimed < kills and tally.failures == 0 and time.time() < until:
        target = "a" if at == "b" else "b"
        tally.trials += 1
        landed, moment = random_kill(lab, target, window, rng)
        if landed:
            tally.kills += 1
        else:
            tally.finished_first += 1
            window = narrowed(window, moment)
        tally.record(f"trial {tally.trials} after the kill", lab.check_after_kill())
        at = rng.choice("ab")
        tally.record(f"trial {tally.trials} towards {at}", lab.converge(at))
        if tally.trials % 20 == 0:
            print(f"  {work.name}: {tally.trials} trials, {tally.kills} kills, {tally.failures} failures, "
                  f"{time.strftime('%H:%M:%S')}", flush=True)
    return tally


@contextlib.contextmanager
def scratch(base: Path | None = None) -> Iterator[Path]:
    """A work directory, on /dev/shm when there is one (module docstring), removed afterwards."""
    if base is None and os.access("/dev/shm", os.W_OK):
        base = Path("/dev/shm")
    work = Path(tempfile.mkdtemp(prefix="mco-kill-", dir=base))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _job(work: Path, files: int, kills: int, aimed: int, seed: int, until: float) -> Tally:
    return campaign(work, files=files, kills=kills, aimed=aimed, seed=seed, until=until)


def campaigns(work: Path, *, files: int, kills: int, aimed: int, seed: int, jobs: int, until: float) -> Tally:
    """`jobs` campaigns side by side, each on its own node root (the kills shared out, the aimed ones in the first)."""
    shares = [kills // jobs + (j < kills % jobs) for j in range(jobs)]
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        done = [pool.submit(_job, work / f"job{j}", files, shares[j], aimed if j == 0 else 0, seed + j, until)
                for j in range(jobs)]
        tallies = [f.result() for f in done]
    total = Tally()
    for t in tallies:
        total.trials += t.trials
        total.kills += t.kills
        total.aimed += t.aimed
        total.finished_first += t.finished_first
        total.failures += t.failures
        total.first_failure = total.first_failure or t.first_failure
    return total
