"""Processes of a scale-out deployment for tests and benchmarks: `mco controller` candidates and `mco serve`
replicas on an etcd store, each a child process of the test, stopped by PID; `bench_deployment` is the set-up
and teardown the scale-out benchmarks share."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from fleet.etcd_client import Connection
from fleet.etcd_election import Election
from fleet.etcd_url import parse_url
from tests.etcd_cluster import EtcdCluster, free_ports
from tests.serving import ROOT, env, mco, mco_serve

CLUSTER = Path(__file__).resolve().parent / "cluster"  # the small cluster directory the server tests render
ENV = env()  # for a test's own subprocesses (mco render ...)
# The worker pool of the rollout test and bench: maxUnavailable 10%.
ROLLOUT_POOL = """apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata:
  name: worker
spec:
  machineConfigSelector:
    matchLabels:
      machineconfiguration.openshift.io/role: worker
  nodeSelector:
    matchLabels:
      node-role.kubernetes.io/worker: ""
  maxUnavailable: 10%
"""


class Fleet:
    """Controller candidates and replicas started by this test; `stop()` kills whatever is left."""

    def __init__(self, store_url: str, log_dir: Path) -> None:
        self.store_url = store_url
        self.log_dir = log_dir
        self.controllers: dict[str, subprocess.Popen[bytes]] = {}
        self.replicas: dict[int, subprocess.Popen[bytes]] = {}
        self.others: list[subprocess.Popen[bytes]] = []  # e.g. a benchmark's reference server, stopped with the rest
        self._served = contextlib.ExitStack()  # the replicas' tests/serving.py contexts

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.log_dir / f"{name}.log", "ab")  # noqa: SIM115 - handed to the child
        try:
            return subprocess.Popen(mco(*args), env=env(), cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        finally:
            log.close()

    def start_controller(self, identity: str, cluster_dir: Path, *, ttl: int = 2) -> None:
        """A controller candidate named `identity`."""
        self.controllers[identity] = self._spawn(identity, [
            "controller", str(cluster_dir), "--store", self.store_url, "--id", identity, "--lease-ttl", str(ttl),
            "--poll-interval", "0.1"])

    def start_replica(self, port: int | None = None, *extra: str) -> str:
        """A replica (`mco serve` started the tests' one way, tests/serving.py) on `port` (a free one by default);
        returns its base URL once /healthz answers 200."""
        port = port or free_ports(1)[0]
        log = self.log_dir / f"replica-{port}-{len(self.replicas)}.log"  # a restart on the same port keeps the old log
        served = self._served.enter_context(mco_serve(
            "--store", self.store_url, "--listen", f"127.0.0.1:{port}", "--poll-interval", "0.5", *extra, log=log))
        self.replicas[port] = served.proc
        return served.url

    def kill(self, proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
        """Signal one process and reap it."""
        proc.send_signal(sig)
        proc.wait(timeout=30)

    def stop(self) -> None:
        """Kill every process still running."""
        for proc in [*self.controllers.values(), *self.replicas.values(), *self.others]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self._served.close()


def until(check: Callable[[], object], timeout: float = 60.0) -> object:
    """The first truthy `check()`, asked every 0.02 s; AssertionError after `timeout` seconds without one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.02)
    raise AssertionError(f"not reached within {timeout}s")


def wait_healthy(base: str, proc: subprocess.Popen[bytes] | None = None, *, timeout: float = 60.0) -> None:
    """Wait until `base`/healthz answers 200 (fails if the process exits first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{base}: the process exited with {proc.returncode}")
        try:
            if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{base}: not healthy after {timeout}s")


def haproxy_config(port: int, replicas: list[int]) -> str:
    """haproxy in front of the replicas: health checks on /healthz every 200 ms, connection failures retried on
    another replica (the layout docs/scale-out.md describes, on loopback)."""
    servers = "\n".join(f"  server r{i} 127.0.0.1:{p} check" for i, p in enumerate(replicas))
    return f"""global
  maxconn 4096
defaults
  mode http
  timeout connect 1s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response response-timeout
frontend machines
  bind 127.0.0.1:{port}
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server inter 200ms fall 1 rise 2
{servers}
"""


def start_haproxy(haproxy: Path, port: int, replicas: list[int], log_dir: Path) -> subprocess.Popen[bytes]:
    """haproxy in the foreground (-db), a child of the test; returns once it accepts connections."""
    cfg = log_dir / "haproxy.cfg"
    cfg.write_text(haproxy_config(port, replicas))
    log = open(log_dir / "haproxy.log", "ab")  # noqa: SIM115 - handed to the child
    try:
        proc = subprocess.Popen([str(haproxy), "-db", "-f", str(cfg)], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    finally:
        log.close()
    wait_healthy(f"http://127.0.0.1:{port}", proc)
    return proc


@contextmanager
def bench_deployment(name: str, *, tools: tuple[str, ...] = ()) -> Iterator[tuple[EtcdCluster, Fleet, Path]]:
    """For a benchmark: a started 3-member etcd cluster, a Fleet on its `name` prefix and a temporary directory
    (for the cluster directory and the processes' logs). On any exit, SIGTERM included (the asyncio loop may be
    busy: the handler cleans up itself, then leaves with 143), every process is stopped and the directory removed."""
    for tool in ("etcd", "etcdctl", *tools):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not installed (scripts/install-deps.sh)")
    etcd = EtcdCluster(Path(shutil.which("etcd") or "etcd"), Path(shutil.which("etcdctl") or "etcdctl"))
    tmp = Path(tempfile.mkdtemp(prefix=f"mco-{name}-bench-"))
    fleet = Fleet(etcd.url(name), tmp)

    def clean_up() -> None:
        fleet.stop()
        etcd.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    def interrupted(*_: object) -> None:
        clean_up()
        os._exit(143)

    previous = signal.signal(signal.SIGTERM, interrupted)
    try:
        etcd.start()
        yield etcd, fleet, tmp
    finally:
        clean_up()
        signal.signal(signal.SIGTERM, previous)


def current_leader(url: str) -> Callable[[], str | None]:
    """A function naming the controller that leads now (None: none), through an observer of the election."""
    conn = Connection(parse_url(url))
    election = Election(conn, identity="observer")
    return election.leader
