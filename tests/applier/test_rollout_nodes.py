"""Several node roots converging at once against a running `mco serve`: never more than maxUnavailable nodes
unavailable during the rollout, the pool's status counts right at every sampled step, and a Degraded node
stops the rollout from widening."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import requests

from tests.applier.helpers import make_root
from tests.applier.serving import NodeLoop
from tests.serving import serving
from tests.tools import real_tool

NODES = 4
MAX_UNAVAILABLE = 2


def _check(status: dict, target: str) -> tuple[int, int]:
    """The counts the server shows must be the ones its node list implies; returns (unavailable, updated)."""
    nodes = status["status"]["nodes"]
    updated = [n for n in nodes if n["state"] == "Done" and n["currentConfig"] == n["desiredConfig"] == target]
    unavailable = [n for n in nodes if n["state"] != "Done" or n["currentConfig"] != n["desiredConfig"]]
    s = status["status"]
    assert (s["machineCount"], s["updatedMachineCount"], s["unavailableMachineCount"],
            s["degradedMachineCount"]) == (len(nodes), len(updated), len(unavailable),
                                           sum(n["state"] == "Degraded" for n in nodes)), s
    return len(unavailable), len(updated)


def _wait_all_updated(url: str, timeout: float = 90.0, samples: list | None = None) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        status = requests.get(f"{url}/pools/worker", timeout=5).json()
        target = status["spec"]["configuration"]["name"]
        unavailable, updated = _check(status, target)
        if samples is not None:
            samples.append((unavailable, updated))
        if status["status"]["machineCount"] == NODES and updated == NODES:
            return status
        assert time.monotonic() < deadline, status["status"]
        time.sleep(0.1)


def test_rolling_update_respects_max_unavailable(tmp_path: Path) -> None:
    real_tool("systemctl")
    cluster = tmp_path / "cluster"
    shutil.copytree(Path(__file__).parent / "cluster_small", cluster)
    with serving(cluster, tmp_path / "store", log=tmp_path / "serve.log") as url:
        loops = [NodeLoop(f"node-{i}", make_root(tmp_path / f"node-{i}"), url) for i in range(NODES)]
        for loop in loops:
            loop.start()
        first = _wait_all_updated(url)
        v1 = first["spec"]["configuration"]["name"]
        manifest = cluster / "manifests/10-app.yaml"
        manifest.write_text(manifest.read_text().replace("version%3D1", "version%3D2"))
        samples: list[tuple[int, int]] = []
        deadline = time.monotonic() + 30
        while requests.get(f"{url}/pools/worker", timeout=5).json()["spec"]["configuration"]["name"] == v1:
            assert time.monotonic() < deadline, "the server never re-rendered"
            time.sleep(0.05)
        final = _wait_all_updated(url, samples=samples)
        v2 = final["spec"]["configuration"]["name"]

        # a node that fails stops the rollout: maxUnavailable 1, and every node would fail the same way
        for loop in loops:
            (loop.root / "etc/app.d").mkdir(parents=True)  # a directory where v3 wants a file
        pools = cluster / "manifests/00-pools.yaml"
        pools.write_text(pools.read_text().replace("maxUnavailable: 2", "maxUnavailable: 1"))
        manifest.write_text(manifest.read_text().replace("version%3D2%0A", "version%3D3%0A\n"
                                                         "        - path: /etc/app.d\n"
                                                         "          contents:\n"
                                                         "            source: data:,x"))
        deadline = time.monotonic() + 30
        while True:
            status = requests.get(f"{url}/pools/worker", timeout=5).json()
            if status["spec"]["configuration"]["name"] != v2 and status["status"]["degradedMachineCount"] == 1:
                break
            assert time.monotonic() < deadline, status["status"]
            time.sleep(0.1)
        v3 = status["spec"]["configuration"]["name"]
        end = time.monotonic() + 3  # the others keep asking; none may be handed v3 while the slot is held
        while True:
            status = requests.get(f"{url}/pools/worker", timeout=5).json()
            _check(status, v3)
            nodes = status["status"]["nodes"]
            assert [n["desiredConfig"] for n in nodes].count(v3) == 1, nodes
            held = next(n for n in nodes if n["desiredConfig"] == v3)
            assert held["state"] in ("Degraded", "Working")  # it retries: Working, then Degraded again
            assert all(n["state"] == "Done" for n in nodes if n is not held), nodes
            if time.monotonic() > end and held["state"] == "Degraded":
                break
            time.sleep(0.1)
        degraded = held
        assert "/etc/app.d: cannot write file: a directory is in the way" in degraded["message"]
        assert next(c for c in status["status"]["conditions"] if c["type"] == "NodeDegraded")["status"] == "True"
        for loop in loops:
            loop.stop.set()
        for loop in loops:
            loop.join(timeout=30)
    assert v2 != v1
    assert max(u for u, _ in samples) <= MAX_UNAVAILABLE, samples
    assert max(u for u, _ in samples) >= 1  # the rollout was observed while it ran
    assert [c["status"] for c in final["status"]["conditions"] if c["type"] == "Updated"] == ["True"]
    for loop in loops:
        assert (loop.root / "etc/app.conf").read_text() == "version=2\n"  # the failed node kept its old state
    assert sorted(set(code for loop in loops for code in loop.runs)) in ([0], [0, 1])
