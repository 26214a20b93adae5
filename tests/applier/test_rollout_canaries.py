"""A bad config meets canaries, the health gate, the automatic pause and a revert, with the real `mco serve` (directory
store) and the real agent on simulated node roots (docs/rollouts.md, the worked example)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import requests

from tests.applier.helpers import make_root
from tests.applier.serving import env, mco, serving
from tests.applier.test_rollout_nodes import NodeLoop
from tests.tools import real_tool

NODES = 5
# The health check fails wherever /etc/app.conf says version=2: the bad config.
CHECK = ('[{"name": "app", "command": ["/bin/sh", "-c", '
         '"! grep -q version=2 \\"$MCO_ROOT/etc/app.conf\\""]}]')
ANNOTATIONS = f"""  annotations:
    rollout.machine-config.io/canaries: "2"
    rollout.machine-config.io/soak: "1s"
    rollout.machine-config.io/health-checks: '{CHECK}'
spec:"""


def _pool(url: str) -> dict[str, Any]:
    return requests.get(f"{url}/pools/worker", timeout=5).json()


def _until(url: str, ok: Any, what: str, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        pool = _pool(url)
        if ok(pool):
            return pool
        assert time.monotonic() < deadline, f"{what}: {pool['status']}"
        time.sleep(0.1)


def _all_done_at(target_of: Any) -> Any:
    def check(pool: dict[str, Any]) -> bool:
        nodes = pool["status"]["nodes"]
        target = target_of(pool)
        return len(nodes) == NODES and all(n["state"] == "Done" and n["currentConfig"] == target for n in nodes)
    return check


def test_canaries_fail_pause_and_revert(tmp_path: Path) -> None:
    real_tool("systemctl")
    cluster = tmp_path / "cluster"
    shutil.copytree(Path(__file__).parent / "cluster_small", cluster)
    pools = cluster / "manifests/00-pools.yaml"
    pools.write_text(pools.read_text().replace("spec:", ANNOTATIONS, 1))
    store = tmp_path / "store"
    with serving(cluster, store, log=tmp_path / "serve.log") as url:
        loops = [NodeLoop(f"node-{i}", make_root(tmp_path / f"node-{i}"), url) for i in range(NODES)]
        for loop in loops:
            loop.start()
        try:
            first = _until(url, _all_done_at(lambda p: p["spec"]["configuration"]["name"]), "v1 everywhere")
            v1 = first["spec"]["configuration"]["name"]
            manifest = cluster / "manifests/10-app.yaml"
            manifest.write_text(manifest.read_text().replace("version%3D1", "version%3D2"))
            paused = _until(url, lambda p: "rolloutPause" in p["status"], "the automatic pause")
            v2 = paused["spec"]["configuration"]["name"]
            assert v2 != v1
            handed = {n["name"] for n in paused["status"]["nodes"] if n["desiredConfig"] == v2}
            assert paused["status"]["rolloutPause"]["node"] in handed
            assert "health check app" in paused["status"]["rolloutPause"]["reason"]
            updating = next(c for c in paused["status"]["conditions"] if c["type"] == "Updating")
            assert (updating["status"], updating["reason"]) == ("False", "RolloutPaused")
            end = time.monotonic() + 4  # the rest keeps asking; none is handed the bad config
            while time.monotonic() < end:
                nodes = _pool(url)["status"]["nodes"]
                handed |= {n["name"] for n in nodes if n["desiredConfig"] == v2}
                time.sleep(0.2)
            assert 1 <= len(handed) <= 2, handed  # only canaries
            for loop in loops:
                if loop.node not in handed:
                    assert (loop.root / "etc/app.conf").read_text() == "version=1\n"
            metrics = requests.get(f"{url}/metrics", timeout=5).text
            assert 'mco_pool_rollout_paused{node="' in metrics

            revert = subprocess.run(mco("rollout", "revert", "worker", "--store", str(store)), env=env(),
                                    capture_output=True, text=True)
            assert revert.returncode == 0, revert.stderr
            back = _until(url, _all_done_at(lambda _p: v1), "every node back at v1")
            assert back["spec"]["configuration"]["name"] == v1
            assert back["status"]["revertedFrom"] == v2
            pinned = next(c for c in back["status"]["conditions"] if c["type"] == "RolloutPinned")
            assert pinned["status"] == "True"
            for loop in loops:
                assert (loop.root / "etc/app.conf").read_text() == "version=1\n"
            config = requests.get(f"{url}/config/worker", timeout=5).text
            assert "version%3D2" not in config  # what a booting machine gets follows the revert
        finally:
            for loop in loops:
                loop.stop.set()
            for loop in loops:
                loop.join(timeout=60)
