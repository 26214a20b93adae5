"""A real 3-member etcd cluster on loopback for tests and benchmarks (Debian's etcd-server, installed by
scripts/install-deps.sh).

Free ports, a temporary data directory, members stopped by PID (SIGKILL + wait: a graceful stop of all three
waits ~9 s for a leadership transfer nobody can take), the directory removed: nothing is left behind.
When `etcd` is missing the test is skipped, or fails under MCO_REQUIRE_TOOLS=1 (`make test`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tools import real_tool


def free_ports(count: int) -> list[int]:
    """Ports the kernel considers free right now (all held open together so they differ)."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class EtcdCluster:
    """Three etcd members on 127.0.0.1, each a child process of this one."""

    def __init__(self, etcd: Path, etcdctl: Path, *, members: int = 3) -> None:
        self.etcd = etcd
        self.etcdctl = etcdctl
        self.dir = Path(tempfile.mkdtemp(prefix="mco-etcd-"))
        ports = free_ports(2 * members)
        self.client_ports = ports[:members]
        self.peer_ports = ports[members:]
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * members
        self._initial = ",".join(f"e{i}=http://127.0.0.1:{p}" for i, p in enumerate(self.peer_ports))

    @property
    def endpoints(self) -> list[str]:
        """`127.0.0.1:PORT` of every member."""
        return [f"127.0.0.1:{p}" for p in self.client_ports]

    def url(self, prefix: str = "") -> str:
        """The `--store` URL naming every member (and a key prefix)."""
        return "etcd://" + ",".join(self.endpoints) + (f"/{prefix.strip('/')}" if prefix else "")

    def start_member(self, i: int) -> None:
        """Start member i (again, with the same data directory after a kill)."""
        client, peer = self.client_ports[i], self.peer_ports[i]
        log = open(self.dir / f"e{i}.out", "ab")  # noqa: SIM115 - handed to the child
        try:
            self.procs[i] = subprocess.Popen(
                [str(self.etcd), "--name", f"e{i}", "--data-dir", str(self.dir / f"e{i}"),
                 "--listen-client-urls", f"http://127.0.0.1:{client}",
                 "--advertise-client-urls", f"http://127.0.0.1:{client}",
                 "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                 "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                 "--initial-cluster", self._initial, "--initial-cluster-state", "new",
                 "--initial-cluster-token", self.dir.name, "--logger", "zap", "--log-outputs", "stderr"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        finally:
            log.close()

    def start(self, *, timeout: float = 20.0) -> None:
        """Start every member (0.2 s apart: simultaneous starts sometimes stall ~2 s) and wait for health."""
        for i in range(len(self.procs)):
            self.start_member(i)
            time.sleep(0.2)
        self.wait_healthy(timeout=timeout)

    def _ctl(self, *args: str, endpoints: list[str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.etcdctl), "--endpoints", ",".join(endpoints or self.endpoints), "--dial-timeout=500ms",
             "--command-timeout=1s", *args], capture_output=True, text=True, env={**os.environ, "ETCDCTL_API": "3"},
            timeout=30)

    def wait_healthy(self, *, timeout: float = 20.0, members: list[int] | None = None) -> None:
        """Wait until the named members (default: all running) answer a committed proposal."""
        wanted = members if members is not None else [i for i, p in enumerate(self.procs) if p is not None]
        deadline = time.monotonic() + timeout
        while True:
            result = self._ctl("endpoint", "health", endpoints=[self.endpoints[i] for i in wanted])
            if result.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"etcd not healthy after {timeout}s: {result.stderr.strip()}")
            time.sleep(0.05)

    def leader(self) -> int:
        """Index of the member that is raft leader now."""
        running = [i for i, p in enumerate(self.procs) if p is not None]
        result = self._ctl("endpoint", "status", "-w", "json", endpoints=[self.endpoints[i] for i in running])
        for i, entry in zip(running, json.loads(result.stdout or "[]"), strict=False):
            if entry["Status"]["leader"] == entry["Status"]["header"]["member_id"]:
                return i
        raise RuntimeError(f"no etcd leader: {result.stderr.strip()}")

    def kill_member(self, i: int) -> None:
        """SIGKILL member i and reap it."""
        proc = self.procs[i]
        if proc is not None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            self.procs[i] = None

    def compact(self) -> int:
        """Compact the history up to the current revision; returns that revision."""
        status = json.loads(self._ctl("endpoint", "status", "-w", "json").stdout)
        revision = max(int(e["Status"]["header"]["revision"]) for e in status)
        self._ctl("compaction", str(revision))
        return revision

    def stop(self) -> None:
        """Kill every member and remove the data directory."""
        for i in range(len(self.procs)):
            self.kill_member(i)
        shutil.rmtree(self.dir, ignore_errors=True)


def start_cluster() -> EtcdCluster:
    """A started cluster, or skip/fail the test when etcd is not installed."""
    cluster = EtcdCluster(real_tool("etcd"), real_tool("etcdctl"))
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="session")
def etcd_cluster() -> Iterator[EtcdCluster]:
    """One cluster for the session (tests use their own key prefix); do not kill its members."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def own_etcd_cluster() -> Iterator[EtcdCluster]:
    """A cluster of the test's own, for tests that kill members."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()
