"""A node root with the real agent (`mco apply --server ... --interval S`) running against a real `mco serve` of
tests/applier/cluster_drift: what the drift tests and bench/drift_bench.py change by hand and time the repair of."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

from tests.applier.helpers import make_root
from tests.serving import env, mco, serving, stop

CLUSTER = Path(__file__).parent / "cluster_drift"
RULES = "etc/audit/rules.d/99-mco.rules"
RULES_TEXT = "-w /etc/shadow -p wa -k identity\n"
APP = "etc/app/app.conf"
UNIT = "auditd-mco.service"
DROPIN = f"etc/systemd/system/{UNIT}.d/10-mco.conf"
WANTS = f"etc/systemd/system/multi-user.target.wants/{UNIT}"
NODE = "node-1"
WATCH_ONLY = 3600.0  # an --interval no test outlasts: a repair within a test is the watch's, not a periodic sync's


@dataclass
class DriftLab:
    """A served cluster directory, a node root and its running agent."""

    cluster: Path
    root: Path
    url: str
    store: Path
    agent: subprocess.Popen[bytes]
    log: Path
    argv: list[str]

    def start_agent(self) -> None:
        """Start the agent (its output appended to `log`); the one running is stopped first."""
        if self.agent.poll() is None:
            stop(self.agent)
        with open(self.log, "ab") as out:
            self.agent = subprocess.Popen(self.argv, env=env(), stdout=out, stderr=out)

    def node(self) -> dict:
        """The node's entry in the pool status."""
        status = requests.get(f"{self.url}/pools/worker", timeout=5).json()
        return next((n for n in status["status"]["nodes"] if n["name"] == NODE), {})

    def until(self, check: Callable[[], bool], timeout: float, what: str) -> None:
        """Wait until `check()` holds (polled every 5 ms); fails naming `what` after `timeout` (liveness only)."""
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline or self.agent.poll() is not None:
                raise AssertionError(f"{what}: not within {timeout} s (agent exit {self.agent.poll()}); "
                                     f"log: {self.log.read_text()[-3000:]}")
            time.sleep(0.005)

    def rules_ok(self) -> bool:
        """The audit rules file is back as declared (contents and mode)."""
        path = self.root / RULES
        try:
            return path.stat().st_mode & 0o7777 == 0o600 and path.read_text() == RULES_TEXT
        except OSError:
            return False

    def enabled(self) -> bool:
        """The unit's enablement symlink is in place."""
        return (self.root / WANTS).is_symlink()


@contextmanager
def drift_lab(tmp_path: Path, *, interval: float = 60.0, extra: Sequence[str] = (), cluster: Path = CLUSTER,
              root: Path | None = None, once: int = 0,
              ready: Callable[[DriftLab], bool] = DriftLab.rules_ok) -> Iterator[DriftLab]:
    """Serve a copy of `cluster`, start the agent on `root` (a fresh one by default), and wait for the node to be
    Done and `ready`. `once`: `mco apply --once` runs first that many times (an update through its reboot)."""
    work = tmp_path / "cluster"
    shutil.copytree(cluster, work)
    root = root or make_root(tmp_path / "root")
    log = tmp_path / "agent.log"
    with serving(work, tmp_path / "store", log=tmp_path / "serve.log") as url:
        argv = mco("apply", "--node", NODE, "--server", url, "--pool", "worker", "--root", str(root),
                   "--interval", str(interval), *extra)
        log.write_bytes(b"")
        with open(log, "ab") as out:  # appended to: a restarted agent writes after the first one
            for _ in range(once):
                subprocess.run([*argv, "--once"], env=env(), stdout=out, stderr=out, timeout=120, check=True)
            agent = subprocess.Popen(argv, env=env(), stdout=out, stderr=out)
        lab = DriftLab(work, root, url, tmp_path / "store", agent, log, argv)
        try:
            lab.until(lambda: lab.node().get("state") == "Done" and ready(lab), 60, "first update")
            yield lab
        finally:
            stop(lab.agent)
