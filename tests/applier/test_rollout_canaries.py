"""A bad config meets canaries, the health gate, the automatic pause and a revert, with the real agent on simulated
node roots (docs/rollouts.md, the worked example): against `mco serve` on a directory store, and against etcd
replicas while the elected controller and a replica are killed mid-wave."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

from tests.applier.helpers import make_root
from tests.applier.serving import NodeLoop
from tests.etcd_cluster import EtcdCluster, etcd_cluster  # noqa: F401 - a pytest fixture
from tests.server.scale_out import Fleet, current_leader
from tests.serving import env, mco, serving
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


def _cluster(tmp_path: Path) -> Path:
    cluster = tmp_path / "cluster"
    shutil.copytree(Path(__file__).parent / "cluster_small", cluster)
    pools = cluster / "manifests/00-pools.yaml"
    pools.write_text(pools.read_text().replace("spec:", ANNOTATIONS, 1))
    return cluster


def _pool(url: str) -> dict[str, Any]:
    return requests.get(f"{url}/pools/worker", timeout=5).json()


def _until(url: Callable[[], str], ok: Callable[[dict[str, Any]], bool], what: str,
           timeout: float = 180.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            pool = _pool(url())
        except requests.RequestException:
            pool = {"status": "unreachable"}
        else:
            if ok(pool):
                return pool
        assert time.monotonic() < deadline, f"{what}: {pool['status']}"
        time.sleep(0.1)


def _all_done_at(target: str | None = None) -> Callable[[dict[str, Any]], bool]:
    def check(pool: dict[str, Any]) -> bool:
        nodes = pool["status"]["nodes"]
        want = target or pool["spec"]["configuration"]["name"]
        return len(nodes) == NODES and all(n["state"] == "Done" and n["currentConfig"] == want for n in nodes)
    return check


def _handed(url: str, v2: str) -> set[str]:
    return {n["name"] for n in _pool(url)["status"]["nodes"] if n["desiredConfig"] == v2}


def _plan(cluster: Path, store: str) -> dict[str, Any]:
    """`mco rollout plan worker CLUSTER` with the bad change, before it is made (in a copy of the directory)."""
    preview = cluster.parent / "preview"
    shutil.rmtree(preview, ignore_errors=True)
    shutil.copytree(cluster, preview)
    manifest = preview / "manifests/10-app.yaml"
    manifest.write_text(manifest.read_text().replace("version%3D1", "version%3D2"))
    plan = subprocess.run(mco("rollout", "plan", "worker", str(preview), "--store", store, "-o", "json"), env=env(),
                          capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    return json.loads(plan.stdout)


def _roll_out_bad_config(cluster: Path, url: Callable[[], str], store: str) -> tuple[str, str, dict[str, Any]]:
    """v1 everywhere, then the bad v2 (previewed first: the plan's canaries are the machines that take it, with
    the action the agents take): returns (v1, v2, the pool once paused)."""
    v1 = _until(url, _all_done_at(), "v1 everywhere")["spec"]["configuration"]["name"]
    plan = _plan(cluster, store)
    assert {(m["action"], m["drain"]) for m in plan["machines"]} == {("reboot", True)}
    canaries = {m["node"] for m in plan["machines"] if m["canary"]}
    assert len(canaries) == 2 and {m["wave"] for m in plan["machines"] if m["canary"]} == {0}
    manifest = cluster / "manifests/10-app.yaml"
    manifest.write_text(manifest.read_text().replace("version%3D1", "version%3D2"))
    paused = _until(url, lambda p: "rolloutPause" in p["status"], "the automatic pause")
    v2 = paused["spec"]["configuration"]["name"]
    assert v2 == plan["target"] != v1
    assert paused["status"]["rolloutPause"]["node"] in _handed(url(), v2) <= canaries
    assert "health check app" in paused["status"]["rolloutPause"]["reason"]
    updating = next(c for c in paused["status"]["conditions"] if c["type"] == "Updating")
    assert (updating["status"], updating["reason"]) == ("False", "RolloutPaused")
    return v1, v2, paused


def _only_canaries(url: str, v2: str, loops: list[NodeLoop], seconds: float = 4) -> set[str]:
    """Watch for `seconds`: the machines ever handed v2 are at most the two canaries; the others keep v1 on disk."""
    handed: set[str] = set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        handed |= _handed(url, v2)
        time.sleep(0.2)
    assert 1 <= len(handed) <= 2, handed
    for loop in loops:
        if loop.node not in handed:
            assert (loop.root / "etc/app.conf").read_text() == "version=1\n"
    return handed


def _revert_and_check(store: str, url: Callable[[], str], v1: str, v2: str, loops: list[NodeLoop]) -> None:
    revert = subprocess.run(mco("rollout", "revert", "worker", "--store", store), env=env(), capture_output=True,
                            text=True)
    assert revert.returncode == 0, revert.stderr
    back = _until(url, _all_done_at(v1), "every node back at v1")
    assert back["spec"]["configuration"]["name"] == v1
    assert back["status"]["revertedFrom"] == v2
    pinned = next(c for c in back["status"]["conditions"] if c["type"] == "RolloutPinned")
    assert pinned["status"] == "True"
    for loop in loops:
        assert (loop.root / "etc/app.conf").read_text() == "version=1\n"
    config = requests.get(f"{url()}/config/worker", timeout=5).text
    assert "version%3D2" not in config  # what a booting machine gets follows the revert


def _loops(tmp_path: Path, url: str) -> list[NodeLoop]:
    loops = [NodeLoop(f"node-{i}", make_root(tmp_path / f"node-{i}"), url) for i in range(NODES)]
    for loop in loops:
        loop.start()
    return loops


def _stop(loops: list[NodeLoop]) -> None:
    for loop in loops:
        loop.stop.set()
    for loop in loops:
        loop.join(timeout=60)


def test_canaries_fail_pause_and_revert(tmp_path: Path) -> None:
    real_tool("systemctl")
    cluster = _cluster(tmp_path)
    store = tmp_path / "store"
    with serving(cluster, store, log=tmp_path / "serve.log") as url:
        loops = _loops(tmp_path, url)
        try:
            v1, v2, _ = _roll_out_bad_config(cluster, lambda: url, str(store))
            _only_canaries(url, v2, loops)
            metrics = requests.get(f"{url}/metrics", timeout=5).text
            assert 'mco_pool_rollout_paused{node="' in metrics
            _revert_and_check(str(store), lambda: url, v1, v2, loops)
        finally:
            _stop(loops)


def test_pause_and_revert_survive_killed_controller_and_replica(etcd_cluster: EtcdCluster,  # noqa: F811
                                                                tmp_path: Path) -> None:
    """The etcd layout: two controller candidates, replicas; the agents use replica B, the test reads replica A.
    Once paused, the leading controller and replica A are killed: the pause (same node), the canaries and then the
    revert hold, read through a new replica C, and a render by the new leader keeps the pool pinned."""
    real_tool("systemctl")
    cluster = _cluster(tmp_path)
    fleet = Fleet(etcd_cluster.url("rollout-canaries"), tmp_path)
    loops: list[NodeLoop] = []
    try:
        for identity in ("ctl-a", "ctl-b"):
            fleet.start_controller(identity, cluster)
        a, b = fleet.start_replica(), fleet.start_replica()
        reader = [a]
        loops = _loops(tmp_path, b)
        v1, v2, paused = _roll_out_bad_config(cluster, lambda: reader[0], fleet.store_url)
        leader = current_leader(fleet.store_url)()
        assert leader in fleet.controllers
        fleet.kill(fleet.controllers[leader])
        fleet.kill(fleet.replicas[int(a.rsplit(":", 1)[1])])
        reader[0] = fleet.start_replica()
        again = _until(lambda: reader[0], lambda p: "rolloutPause" in p["status"], "the pause after the kills")
        # the node that stopped the rollout, and why, as first seen: recorded in the pool's record, not derived
        # again from reports that carry whole seconds (two canaries failing within one second would tie)
        assert again["status"]["rolloutPause"] == paused["status"]["rolloutPause"]
        _only_canaries(reader[0], v2, loops)
        _until(lambda: reader[0], lambda _p: current_leader(fleet.store_url)() not in (None, leader), "a new leader")
        _revert_and_check(fleet.store_url, lambda: reader[0], v1, v2, loops)
        manifest = cluster / "manifests/10-app.yaml"  # the new leader renders again: the same bad config, pinned
        manifest.write_text(manifest.read_text() + "# touched\n")
        end = time.monotonic() + 5
        while time.monotonic() < end:
            pool = _pool(reader[0])
            assert (pool["spec"]["configuration"]["name"], pool["status"]["revertedFrom"]) == (v1, v2)
            time.sleep(0.2)
    finally:
        _stop(loops)
        fleet.stop()
