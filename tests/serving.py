"""Run the real `mco serve` as a process: the one way every test (and bench) starts one."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
_ANNOUNCED = re.compile(r"serving (https?://\S+)")  # `mco: serving http://127.0.0.1:PORT (pools: ...)`


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


@dataclass
class Serve:
    """A running `mco serve`: its process, the URL of each listener by scheme, and the file its output goes to."""

    proc: subprocess.Popen[bytes]
    urls: dict[str, str]
    log: Path

    @property
    def url(self) -> str:
        """The base URL of the first listener announced."""
        return next(iter(self.urls.values()))


@contextmanager
def mco_serve(*args: str, ca: Path | None = None, log: Path | None = None, timeout: float = 90.0) -> Iterator[Serve]:
    """The one way the tests run `mco serve ARGS` as a process: listeners on free ports (`127.0.0.1:0` unless ARGS
    name them), its output in `log` (a file, never an unread pipe), ready once every listener is announced and
    `/healthz` answers 200; stopped (SIGTERM, then SIGKILL) afterwards unless the test stopped it."""
    argv = list(args)
    if "--listen" not in argv:
        argv += ["--listen", "127.0.0.1:0"]
    if "--access-log" not in argv:
        argv += ["--access-log", "off"]
    listeners = sum(1 for i, a in enumerate(argv[:-1]) if a in ("--listen", "--tls-listen") and argv[i + 1] != "off")
    with contextlib.ExitStack() as cleanup:
        if log is None:
            log = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="mco-serve-"))) / "serve.log"
        out = cleanup.enter_context(open(log, "wb"))
        proc = subprocess.Popen(mco("serve", *argv), env=env(), cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=out)
        try:
            deadline = time.monotonic() + timeout  # start-up renders the cluster: slow on a busy machine
            urls: dict[str, str] = {}
            while len(urls) < listeners:
                urls = {u.split(":", 1)[0]: u for u in _ANNOUNCED.findall(log.read_text(errors="replace"))}
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mco serve did not start (exit {proc.poll()}): {log.read_text()[-2000:]}")
                time.sleep(0.05)
            served = Serve(proc, urls, log)
            while not _healthy(served.url, ca):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mco serve is not healthy (exit {proc.poll()}): {log.read_text()[-2000:]}")
                time.sleep(0.1)
            yield served
        finally:
            if proc.poll() is None:
                stop(proc)


def _healthy(url: str, ca: Path | None) -> bool:
    try:
        return requests.get(f"{url}/healthz", timeout=1, verify=str(ca) if ca else True).status_code == 200
    except requests.RequestException:
        return False


@contextmanager
def serving(cluster: Path, store: Path, *, extra: Sequence[str] = (), scheme: str = "http",
            ca: Path | None = None, log: Path | None = None) -> Iterator[str]:
    """`mco_serve(CLUSTER, --store STORE, EXTRA)` on HTTP or (scheme https) on TLS only; yields the base URL."""
    listen = [] if scheme == "http" else ["--listen", "off", "--tls-listen", "127.0.0.1:0"]
    with mco_serve(str(cluster), "--store", str(store), *listen, "--poll-interval", "0.2", *extra, ca=ca,
                   log=log) as served:
        yield served.url


def access_log_entries(log: Path) -> list[dict[str, Any]]:
    """The whole lines of a running server's access log (server/accesslog.py), parsed: its writer thread may be
    writing a batch while a test reads, and the line being written is not whole yet."""
    if not log.exists():
        return []
    *whole, _being_written = log.read_bytes().split(b"\n")
    return [json.loads(line) for line in whole]
