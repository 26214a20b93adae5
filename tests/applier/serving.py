"""Run a real `mco serve` subprocess, and node loops of the real agent against it, for the applier's multi-node
and lifecycle tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.applier.helpers import reboot_command

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env() -> dict[str, str]:
    """Environment for subprocesses running this checkout's `mco`."""
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def mco(*args: str) -> list[str]:
    """argv for `mco ARGS` with this interpreter."""
    return [sys.executable, "-m", "cli.main", *args]


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def serving(cluster: Path, store: Path, *, extra: Sequence[str] = (), scheme: str = "http",
            ca: Path | None = None, log: Path | None = None) -> Iterator[str]:
    """Start `mco serve CLUSTER --store STORE` on a free port; yields the base URL; stops it afterwards."""
    port = free_port()
    listen = ["--listen", f"127.0.0.1:{port}"] if scheme == "http" else ["--listen", "off", "--tls-listen",
                                                                          f"127.0.0.1:{port}"]
    out = open(log or os.devnull, "w")
    proc = subprocess.Popen(mco("serve", str(cluster), "--store", str(store), *listen, "--poll-interval", "0.2",
                                "--access-log", "off", *extra), env=env(), stdout=out, stderr=out)
    url = f"{scheme}://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90  # start-up renders the cluster: slow on a busy machine
        while True:
            try:
                if requests.get(f"{url}/healthz", timeout=1, verify=str(ca) if ca else True).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mco serve did not start (exit {proc.poll()}); see {log}")
            time.sleep(0.1)
        yield url
    finally:
        stop(proc)
        out.close()


class NodeLoop(threading.Thread):
    """`mco apply --once` run again and again on one root: each exit after a reboot is the machine rebooting."""

    def __init__(self, name: str, root: Path, url: str) -> None:
        super().__init__(daemon=True)
        self.node, self.root, self.url = name, root, url
        self.stop = threading.Event()
        self.runs: list[int] = []

    def run(self) -> None:
        while not self.stop.is_set():
            proc = subprocess.run(mco("apply", "--once", "--node", self.node, "--server", self.url, "--pool", "worker",
                                      "--root", str(self.root), "--reboot-command", reboot_command(self.root)),
                                  env=env(), capture_output=True, text=True)
            self.runs.append(proc.returncode)
            time.sleep(0.05)
