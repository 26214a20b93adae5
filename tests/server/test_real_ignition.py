"""The real client: Debian's `ignition` 2.14 fetches from a running `mco serve` through a pointer config.

Over HTTP and over HTTPS with the CA from `mco certs init`, with a bearer token from the pointer's
httpHeaders. Ignition 2.14 asks for spec 3.3.0 and the cluster is written in 3.4.0, so a successful run
also proves the down-translation. The files, modes, links, units and dropins Ignition wrote into the
temporary root are compared with the rendered config the server's store holds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.server.realignition import check_root, run_ignition
from tests.serving import access_log_entries, mco_serve
from tests.tools import real_tool

HERE = Path(__file__).resolve().parent
MCO = [sys.executable, "-m", "cli"]
TOKEN = "t0ken-for-workers"

pytestmark = pytest.mark.realtool


@dataclass(frozen=True)
class Served:
    """A running `mco serve` and what the tests need to reach it."""

    http: str
    https: str
    ca: Path
    token_file: Path
    access_log: Path


def _mco(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MCO, *args], capture_output=True, text=True, timeout=60, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(HERE.parent.parent)})



@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("served")
    os.chmod(base, 0o755)
    cluster = base / "cluster"
    shutil.copytree(HERE / "cluster", cluster)
    certs = base / "certs"
    done = _mco("certs", "init", str(certs), "--ip", "127.0.0.1", "--dns", "localhost")
    assert done.returncode == 0, done.stderr
    token_file = base / "worker.token"
    token_file.write_text(TOKEN + "\n")
    log = base / "access.log"
    with mco_serve(str(cluster), "--store", str(base / "store"), "--tls-listen", "127.0.0.1:0",
                   "--cert", str(certs / "tls.crt"), "--key", str(certs / "tls.key"), "--token", f"worker={token_file}",
                   "--access-log", str(log)) as serve:
        yield Served(serve.urls["http"], serve.urls["https"], certs / "ca.crt", token_file, log)


def _rendered_config(served: Served, pool: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    status = requests.get(f"{served.http}/pools/{pool}", headers=headers, timeout=10).json()
    name = status["spec"]["configuration"]["name"]
    rendered = requests.get(f"{served.http}/rendered/{name}", headers=headers, timeout=10).json()
    return rendered["spec"]["config"]


def _ignition_fetches(log: Path) -> list[dict[str, Any]]:
    """The access log's Ignition fetches of /config/worker; the server's writer thread flushes every 0.1 s."""
    deadline = time.monotonic() + 10
    while True:
        lines = access_log_entries(log)
        fetches = [e for e in lines if e["path"] == "/config/worker" and e["ua"].startswith("Ignition/")]
        if fetches or time.monotonic() > deadline:
            return fetches
        time.sleep(0.05)


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_real_ignition_writes_the_render(served: Served, scheme: str, tmp_path: Path) -> None:
    ignition = real_tool("ignition")
    url = served.http if scheme == "http" else served.https
    pointer = tmp_path / "pointer.ign"
    args = ["ignition", "pointer", "--pool", "worker", "--url", url, "--token-file", str(served.token_file),
            "--output-file", str(pointer)]
    if scheme == "https":
        args += ["--ca", str(served.ca)]
    done = _mco(*args)
    assert done.returncode == 0, done.stderr
    run = run_ignition(ignition, pointer, tmp_path / "run")
    rendered = _rendered_config(served, "worker")
    assert rendered["ignition"]["version"] > "3.3.0"  # what Ignition 2.14 got was translated down
    assert check_root(run.root, rendered) == []
    for appended in ("etc/machine-config-daemon/node-annotations.json", "etc/mcs-machine-config-content.json",
                     "etc/ignition-machine-config-encapsulated.json"):
        assert (run.root / appended).is_file()
    annotations = json.loads((run.root / "etc/machine-config-daemon/node-annotations.json").read_text())
    assert annotations["machineconfiguration.openshift.io/currentConfig"].startswith("rendered-worker-")
    encapsulated = json.loads((run.root / "etc/ignition-machine-config-encapsulated.json").read_text())
    assert encapsulated["spec"]["config"] == {"ignition": {"version": "3.5.0"}}  # NewIgnConfig(), not the served 3.3.0
    content = json.loads((run.root / "etc/mcs-machine-config-content.json").read_text())
    assert content["spec"]["config"] == rendered  # the whole MachineConfig, its config as rendered
    fetches = _ignition_fetches(served.access_log)
    assert fetches and fetches[-1]["status"] == 200 and fetches[-1]["version"] == "3.3.0"
    assert TOKEN not in served.access_log.read_text()  # no secrets in the access log


def test_real_ignition_without_the_token_is_refused(served: Served, tmp_path: Path) -> None:
    ignition = real_tool("ignition")
    pointer = tmp_path / "pointer.ign"
    assert _mco("ignition", "pointer", "--pool", "worker", "--url", served.http, "--output-file", str(pointer)).returncode == 0
    with pytest.raises(AssertionError, match="failed to fetch"):
        run_ignition(ignition, pointer, tmp_path / "run")
    assert not (tmp_path / "run/root/etc/demo").exists()


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`mco serve examples/cluster` (the README's example), plain HTTP, no tokens."""
    base = tmp_path_factory.mktemp("example")
    with mco_serve(str(HERE.parent.parent / "examples" / "cluster"), "--store", str(base / "store")) as serve:
        yield serve.url


@pytest.mark.parametrize("pool", ["worker", "master"])
def test_real_ignition_on_the_example_cluster(example: str, pool: str, tmp_path: Path) -> None:
    ignition = real_tool("ignition")
    pointer = tmp_path / "pointer.ign"
    assert _mco("ignition", "pointer", "--pool", pool, "--url", example, "--output-file", str(pointer)).returncode == 0
    run = run_ignition(ignition, pointer, tmp_path / "run")
    name = requests.get(f"{example}/pools/{pool}", timeout=10).json()["spec"]["configuration"]["name"]
    rendered = requests.get(f"{example}/rendered/{name}", timeout=10).json()["spec"]["config"]
    assert check_root(run.root, rendered) == []
    keys = run.root / "home/core/.ssh/authorized_keys.d/ignition"
    assert keys.is_file() and "ops@lab.example.net" in keys.read_text()
