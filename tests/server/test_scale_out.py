"""Replicas and elected controllers on a real 3-member etcd cluster, as processes: the controller renders,
every replica serves the same bytes, changes propagate, render errors keep the last good target, leadership
moves at once on SIGTERM and within the lease TTL + 1 s after SIGKILL, and the CLI contract holds."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.etcd_cluster import EtcdCluster
from tests.server.helpers import ACCEPT_33
from tests.server.scale_out import CLUSTER, ENV, ROOT, Fleet, current_leader, until


@pytest.fixture
def cluster_dir(tmp_path: Path) -> Path:
    target = tmp_path / "cluster"
    shutil.copytree(CLUSTER, target)
    return target


def config(base: str) -> bytes:
    response = requests.get(f"{base}/config/worker", headers={"Accept": ACCEPT_33}, timeout=10)
    assert response.status_code == 200, response.text
    return response.content


def test_controller_renders_replicas_serve_changes_and_errors(fleet: Fleet, cluster_dir: Path) -> None:
    fleet.start_controller("ctl-a", cluster_dir)
    fleet.start_controller("ctl-b", cluster_dir)
    replicas = [fleet.start_replica(), fleet.start_replica()]
    first = config(replicas[0])
    assert config(replicas[1]) == first and b"hello%20from%20the%20server" in first
    health = requests.get(f"{replicas[0]}/healthz", timeout=5)
    assert health.status_code == 200 and "current at etcd revision" in health.text

    manifest = cluster_dir / "manifests" / "10-worker-demo.yaml"
    manifest.write_text(manifest.read_text().replace("hello%20from%20the%20server", "hello%20again"))
    for base in replicas:
        until(lambda base=base: b"hello%20again" in config(base))
    second = config(replicas[0])

    (cluster_dir / "manifests" / "20-broken.yaml").write_text(
        "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 20-broken\n"
        "  labels:\n    machineconfiguration.openshift.io/role: worker\nspec:\n  config:\n"
        "    ignition: {version: 3.4.0}\n    storage: {files: [{path: relative/path}]}\n")

    def degraded() -> bool:
        pool = requests.get(f"{replicas[1]}/pools/worker", timeout=5).json()
        cond = {c["type"]: c for c in pool["status"]["conditions"]}
        return cond["RenderDegraded"]["status"] == "True" and "20-broken" in cond["RenderDegraded"]["message"]

    until(degraded)
    assert all(config(base) == second for base in replicas)  # the last good target is still served


def test_leadership_moves_on_sigterm_at_once_and_after_sigkill_once_the_lease_expires(fleet: Fleet, cluster_dir: Path) -> None:
    ttl = 2
    for name in ("ctl-a", "ctl-b", "ctl-c"):
        fleet.start_controller(name, cluster_dir, ttl=ttl)
    leader = current_leader(fleet.store_url)
    first = str(until(leader))

    fleet.kill(fleet.controllers[first], signal.SIGTERM)
    assert fleet.controllers[first].returncode == 0
    assert leader() != first  # resigned on its way out: its key went with its lease, not `ttl` seconds later
    second = str(until(lambda: (name := leader()) not in (None, first) and name))

    fleet.kill(fleet.controllers[second], signal.SIGKILL)  # no resignation: its key lasts until its lease expires
    third = str(until(lambda: (name := leader()) not in (None, second) and name))
    assert third not in (first, second)


@pytest.mark.parametrize(("args", "message"), [
    (["serve", "--store", "etcd://127.0.0.1:1", "examples/cluster"], "give no CLUSTER_DIR"),
    (["serve", "--store", "etcd://nohostport"], "is not HOST:PORT"),
    (["serve", "examples/cluster", "--etcd-cacert", "/nonexistent"], "need --store etcd://"),
    (["controller", "examples/cluster", "--store", "/tmp/dir"], "needs an etcd://"),
    (["controller", "examples/cluster", "--store", "etcd://127.0.0.1:1", "--lease-ttl", "1"], "at least 2"),
    (["controller", "examples/cluster", "--store", "etcd://127.0.0.1:1", "--etcd-cert", "/nonexistent"],
     "not a readable file"),
    (["serve", "--store", "etcd://127.0.0.1:1", "--listen", "127.0.0.1:0"], "--store: etcd:"),
    (["controller", "examples/cluster", "--store", "etcd://127.0.0.1:1"], "cannot reach etcd"),
], ids=["serve-etcd-with-dir", "bad-url", "tls-without-etcd", "controller-dir-store", "short-ttl", "missing-cert",
        "serve-etcd-unreachable", "controller-etcd-unreachable"])
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = subprocess.run([sys.executable, "-m", "cli", *args], env=ENV, cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr


def test_replica_serves_reads_without_quorum_and_answers_writes_503(own_etcd_cluster: EtcdCluster, tmp_path: Path,
                                                                   cluster_dir: Path) -> None:
    fleet = Fleet(own_etcd_cluster.url("quorum"), tmp_path)
    try:
        fleet.start_controller("ctl-a", cluster_dir)
        base = fleet.start_replica()
        served = config(base)
        name = requests.get(f"{base}/pools/worker", timeout=10).json()["spec"]["configuration"]["name"]
        report = {"pool": "worker", "currentConfig": name, "desiredConfig": name, "state": "Done"}
        assert requests.post(f"{base}/nodes/node-a/status", json=report, timeout=10).status_code == 200

        own_etcd_cluster.kill_member(1)
        own_etcd_cluster.kill_member(2)
        assert config(base) == served  # reads come from memory
        assert requests.post(f"{base}/nodes/node-b/status", json=report, timeout=30).status_code == 503
        health = until(lambda: "behind" in (h := requests.get(f"{base}/healthz", timeout=5)).text and h)
        assert health.status_code == 200 and "etcd last answered" in health.text  # type: ignore[attr-defined]
        assert config(base) == served

        own_etcd_cluster.start_member(1)
        own_etcd_cluster.start_member(2)
        own_etcd_cluster.wait_healthy()
        until(lambda: requests.post(f"{base}/nodes/node-b/status", json=report, timeout=30).status_code == 200)
        until(lambda: "current at etcd revision" in requests.get(f"{base}/healthz", timeout=5).text)
    finally:
        fleet.stop()
