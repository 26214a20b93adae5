"""Moving a node between pools by its labels, end to end on both stores: three real agents against a real
`mco serve` (a directory store; an etcd store with `mco controller` and a replica). One node is labelled
`node-role.kubernetes.io/gpu=`: it leaves `worker`, applies the gpu pool's config (its file on disk) through the
ordinary rollout; the label removed, it returns to worker's config. At no sampled moment does either pool have
more nodes updating than its maxUnavailable."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

from tests.applier.helpers import make_root, reboot_command
from tests.applier.serving import NodeLoop
from tests.builders import machine_config_manifest
from tests.etcd_cluster import etcd_cluster  # noqa: F401 - pytest fixture
from tests.server.scale_out import Fleet
from tests.serving import env, mco, serving
from tests.tools import real_tool

GPU_POOL = """apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata:
  name: gpu
spec:
  machineConfigSelector:
    matchExpressions:
      - {key: machineconfiguration.openshift.io/role, operator: In, values: [worker, gpu]}
  nodeSelector:
    matchLabels:
      node-role.kubernetes.io/gpu: ""
  maxUnavailable: 1
---
""" + machine_config_manifest("20-gpu", "gpu", files={"/etc/gpu.conf": "data:,driver%3Dnvidia%0A"},
                                mode=0o644)
MAX_UNAVAILABLE = {"worker": 2, "gpu": 1}
MOVE_PHASES = ["prepared", "written", "reboot-requested", "rebooted", "verified", "done"]
GPU = "node-role.kubernetes.io/gpu"


@contextmanager
def _deployment(kind: str, cluster: Path, tmp_path: Path,
                request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str]]]:
    """(the server's URL, the `mco nodes` flags that reach the node records)."""
    (tmp_path / "admin").write_text("admin-token\n")
    admin = ["--admin-token-file", str(tmp_path / "admin")]
    if kind == "directory":
        with serving(cluster, tmp_path / "store", extra=admin, log=tmp_path / "serve.log") as url:
            yield url, ["--store", str(tmp_path / "store")]
        return
    store_url = request.getfixturevalue("etcd_cluster").url(f"relabel-{tmp_path.name}")
    fleet = Fleet(store_url, tmp_path)
    try:
        fleet.start_controller("c1", cluster)
        url = fleet.start_replica(None, *admin)
        yield url, ["--server", url, "--token-file", str(tmp_path / "admin")]
    finally:
        fleet.stop()


def _pools(url: str) -> dict[str, dict]:
    listed = requests.get(f"{url}/pools", timeout=5).json()
    return {p["metadata"]["name"]: p for p in listed["items"]}


def _wait(url: str, done: Callable[[dict[str, dict]], bool], samples: list[dict[str, int]], what: str,
          timeout: float = 120.0) -> dict[str, dict]:
    deadline = time.monotonic() + timeout
    while True:
        pools = _pools(url)
        samples.append({name: p["status"]["unavailableMachineCount"] for name, p in pools.items()})
        if done(pools):
            return pools
        assert time.monotonic() < deadline, (what, {n: p["status"] for n, p in pools.items()})
        time.sleep(0.1)


def _settled(pools: dict[str, dict], counts: dict[str, int]) -> bool:
    return all(pools[name]["status"]["machineCount"] == n and pools[name]["status"]["updatedMachineCount"] == n
               and pools[name]["spec"]["configuration"]["name"] for name, n in counts.items())


def _node(where: list[str]) -> dict:
    proc = subprocess.run(mco("nodes", "get", "node-1", *where, "-o", "json"), env=env(), capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def _label(where: list[str], *edits: str) -> None:
    proc = subprocess.run(mco("nodes", "label", "node-1", *edits, *where), env=env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("kind", ["directory", "etcd"])
def test_relabel_moves_a_node_to_the_gpu_pool_and_back(kind: str, tmp_path: Path,
                                                        request: pytest.FixtureRequest) -> None:
    real_tool("systemctl")
    cluster = tmp_path / "cluster"
    shutil.copytree(Path(__file__).parent / "cluster_small", cluster)
    (cluster / "manifests/20-gpu.yaml").write_text(GPU_POOL)
    with _deployment(kind, cluster, tmp_path, request) as (url, where):
        loops = [NodeLoop(f"node-{i}", make_root(tmp_path / f"node-{i}"), url) for i in range(3)]
        for loop in loops:
            loop.start()
        samples: list[dict[str, int]] = []
        try:
            # (machines being provisioned take no slot: sampled from when all three run worker's config)
            _wait(url, lambda p: _settled(p, {"worker": 3}), [], "every node at worker's config")
            assert not (loops[1].root / "etc/gpu.conf").exists()
            _label(where, f"{GPU}=")
            pools = _wait(url, lambda p: _settled(p, {"worker": 2, "gpu": 1}), samples, "node-1 moved to gpu")
            gpu_nodes = pools["gpu"]["status"]["nodes"]
            assert [n["name"] for n in gpu_nodes] == ["node-1"]
            assert gpu_nodes[0]["currentConfig"] == pools["gpu"]["spec"]["configuration"]["name"]
            assert (loops[1].root / "etc/gpu.conf").read_text() == "driver=nvidia\n"
            assert (loops[1].root / "etc/app.conf").read_text() == "version=1\n"  # worker's files come along
            assert not (loops[0].root / "etc/gpu.conf").exists()
            moved = _node(where)
            # the phases of the move, in order (no drain hook, no OS backend: neither drained nor image-staged)
            assert [e["phase"] for e in moved["timeline"]] == MOVE_PHASES, moved["timeline"]
            assert {e["config"] for e in moved["timeline"]} == {gpu_nodes[0]["currentConfig"]}
            assert [e["at"] for e in moved["timeline"]] == sorted(e["at"] for e in moved["timeline"])
            _label(where, f"{GPU}-")
            _wait(url, lambda p: _settled(p, {"worker": 3}) and p["gpu"]["status"]["machineCount"] == 0, samples,
                  "node-1 back at worker's config")
            assert not (loops[1].root / "etc/gpu.conf").exists()
            back = _node(where)
            assert [e["phase"] for e in back["timeline"]] == MOVE_PHASES
            assert back["updates"][0] == moved["timeline"]  # the move to gpu, kept in the node's history
        finally:
            for loop in loops:
                loop.stop.set()
            for loop in loops:
                loop.join(timeout=60)
    for name, limit in MAX_UNAVAILABLE.items():
        assert max(s.get(name, 0) for s in samples) <= limit, (name, samples)
    assert max(s.get("gpu", 0) for s in samples) == 1  # the move was seen while it ran


AGENT_INTERVAL = 2
GPU_BY_DISK = GPU_POOL.replace('node-role.kubernetes.io/gpu: ""', "disk: ssd").replace(
    "/etc/gpu.conf", "/etc/nmstate/openshift/gpu.yml")  # (a file whose change needs no reboot: default policy)


def _agent(url: str, node: str, root: Path, log: Path) -> subprocess.Popen[bytes]:
    """The real agent in service mode (`mco apply --server URL --interval 2`: its claims held up to 2 s)."""
    with open(log, "ab") as out:
        return subprocess.Popen(mco("apply", "--node", node, "--server", url, "--pool", "worker", "--root", str(root),
                                    "--interval", str(AGENT_INTERVAL), "--reboot-command", reboot_command(root)),
                                env=env(), stdout=out, stderr=out)


def _stopped(agent: subprocess.Popen[bytes]) -> None:
    agent.terminate()
    agent.wait(timeout=30)
    time.sleep(AGENT_INTERVAL + 1)  # a claim it left held is decided once more when its wait ends (and may write)


@pytest.mark.parametrize("kind", ["directory", "etcd"])
def test_a_changed_node_selector_moves_the_nodes_it_selects_at_once(kind: str, tmp_path: Path,
                                                                   request: pytest.FixtureRequest) -> None:
    """The gpu pool's nodeSelector is changed in the manifests to select a label node-1 carries while node-1's agent
    is stopped (so neither a report nor a claim can move it): node-1 is counted in gpu once the render is published;
    its agent started again is handed the gpu pool's config through the ordinary rollout. The selector changed back,
    it is counted in worker again at once, and returns to worker's config."""
    cluster = tmp_path / "cluster"
    shutil.copytree(Path(__file__).parent / "cluster_small", cluster)
    manifest = cluster / "manifests/20-gpu.yaml"
    manifest.write_text(GPU_POOL)
    with _deployment(kind, cluster, tmp_path, request) as (url, where):
        roots = [make_root(tmp_path / f"node-{i}") for i in range(2)]
        logs = [tmp_path / f"agent-{i}.log" for i in range(2)]
        agents = [_agent(url, f"node-{i}", root, logs[i]) for i, root in enumerate(roots)]
        samples: list[dict[str, int]] = []
        gpu_file = roots[1] / "etc/nmstate/openshift/gpu.yml"
        try:
            _wait(url, lambda p: _settled(p, {"worker": 2}), [], "every node at worker's config")
            _label(where, "disk=ssd")  # selects no pool yet: node-1 stays in worker
            assert _node(where)["pool"] == "worker"
            for selector, pool, counts in ((GPU_BY_DISK, "gpu", {"worker": 1, "gpu": 1}),
                                           (GPU_POOL, "worker", {"worker": 2})):
                _stopped(agents[1])
                manifest.write_text(selector)
                _wait(url, lambda p, c=counts: all(p[n]["status"]["machineCount"] == k for n, k in c.items())
                      and p["gpu"]["status"]["machineCount"] == c.get("gpu", 0), samples, f"node-1 counted in {pool}",
                      timeout=30)
                assert _node(where)["pool"] == pool
                agents[1] = _agent(url, "node-1", roots[1], logs[1])
                _wait(url, lambda p, c=counts: _settled(p, c), samples, f"node-1 at {pool}'s config", timeout=60)
                assert gpu_file.exists() == (pool == "gpu")
                if pool == "gpu":
                    assert gpu_file.read_text() == "driver=nvidia\n"
            assert not (roots[0] / "etc/nmstate/openshift/gpu.yml").exists()
        finally:
            for agent in agents:
                _stopped(agent)
    for name, limit in MAX_UNAVAILABLE.items():
        assert max(s.get(name, 0) for s in samples) <= limit, (name, samples)
