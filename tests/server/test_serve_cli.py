"""`mco serve` as a command: flag errors, and several worker processes sharing the port and the store."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from cli.main import main
from tests.server.helpers import ACCEPT_33
from tests.serving import access_log_entries

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": str(HERE.parent.parent)}


@pytest.mark.parametrize("args", [
    ["serve", "/nonexistent-cluster"],
    ["serve", str(HERE / "cluster"), "--listen", "localhost"],
    ["serve", str(HERE / "cluster"), "--listen", "127.0.0.1:99999"],
    ["serve", str(HERE / "cluster"), "--tls-listen", "127.0.0.1:0"],
    ["serve", str(HERE / "cluster"), "--cert", "x.crt", "--key", "x.key"],
    ["serve", str(HERE / "cluster"), "--listen", "off"],
    ["serve", str(HERE / "cluster"), "--workers", "0"],
    ["serve", str(HERE / "cluster"), "--token", "worker"],
    ["serve", str(HERE / "cluster"), "--token", "worker=/nonexistent"],
    ["serve", str(HERE / "cluster"), "--allow", "10.0.0.0/33"],
    ["serve", str(HERE / "cluster"), "--default-version", "2.2.0"],
], ids=["no-dir", "no-port", "bad-port", "tls-without-cert", "cert-without-tls", "no-listener", "workers-0",
        "token-syntax", "token-file-missing", "bad-cidr", "bad-default-version"])
def test_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    assert capsys.readouterr().err.startswith("mco: ")


@pytest.mark.parametrize("node_secret", [False, True], ids=["open-reports-warned", "node-secret"])
def test_port_in_use_exits_2(tmp_path: Path, node_secret: bool) -> None:
    import socket

    secret = tmp_path / "node-secret"
    secret.write_text("a-node-secret-of-enough-bytes\n")
    extra = ["--node-secret-file", str(secret)] if node_secret else []
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "cli", "serve", str(HERE / "cluster"), "--listen",
                               f"127.0.0.1:{port}", "--access-log", "off", *extra], env=ENV, capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 2
    assert "cannot listen" in done.stderr
    warned = "any client may report status for any node" in done.stderr  # without --node-secret-file
    assert warned is not node_secret


def test_workers_share_port_and_store(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    shutil.copytree(HERE / "cluster", cluster)
    log = tmp_path / "access.log"
    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", str(cluster), "--store", str(tmp_path / "store"),
                             "--listen", "127.0.0.1:0", "--workers", "2", "--access-log", str(log)],
                            env=ENV, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = ""
        while "serving " not in line:
            line = proc.stderr.readline()
            assert line, "mco serve exited"
        base = line.split("serving ", 1)[1].split(" ", 1)[0]
        assert "workers: 2" in line
        pids: set[int] = set()
        deadline = time.monotonic() + 30
        while len(pids) < 2 and time.monotonic() < deadline:
            with requests.Session() as fresh:  # a new connection each time: the kernel spreads them
                response = fresh.get(f"{base}/config/worker", headers={"Accept": ACCEPT_33})
            assert response.status_code == 200
            entries = access_log_entries(log)
            pids = {e["worker"] for e in entries if e["path"] == "/config/worker"}
        assert len(pids) == 2, pids
        bodies = set()
        for _ in range(10):
            with requests.Session() as fresh:
                bodies.add(fresh.get(f"{base}/config/worker", headers={"Accept": ACCEPT_33}).content)
        assert len(bodies) == 1  # every worker serves the same bytes
        name = requests.get(f"{base}/pools/worker", timeout=10).json()["spec"]["configuration"]["name"]
        # Each report, stored by whichever worker takes it, is what every worker then answers with (the
        # directory store's journal tells each process which records changed).
        for state, counts in [("Done", (1, 0, 0)), ("Working", (0, 1, 0)), ("Degraded", (0, 1, 1)),
                              ("Done", (1, 0, 0))]:
            report = {"pool": "worker", "currentConfig": name, "desiredConfig": name, "state": state}
            assert requests.post(f"{base}/nodes/node-1/status", json=report, timeout=10).status_code == 200
            logged = len(access_log_entries(log))
            answered: set[int] = set()
            for _ in range(200):  # until both workers have answered since the report
                with requests.Session() as fresh:
                    status = fresh.get(f"{base}/pools/worker", timeout=10).json()["status"]
                assert status["machineCount"] == 1
                assert (status["updatedMachineCount"], status["unavailableMachineCount"],
                        status["degradedMachineCount"]) == counts, state
                entries = access_log_entries(log)[logged:]
                answered |= {e["worker"] for e in entries if e["path"] == "/pools/worker"}
                if len(answered) == 2:
                    break
            assert len(answered) == 2, answered
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
