"""The cluster's node disruption policy reaches the agent: the renderer keeps
MachineConfiguration `cluster`'s `spec.nodeDisruptionPolicy` beside each pool's target, the server hands
it in the desired-config answer, and the agent's ServerSource carries it into the config it plans with;
a policy-only change moves no rendered name and so starts no rollout. Against a real `mco serve`."""

from __future__ import annotations

import shutil
from pathlib import Path

from applier.fetch import ServerClient, ServerSource
from fleet.directory_store import DirectoryStore
from fleet.disruption_policy import policy_from_annotations
from renderer.render import render_cluster
from tests.serving import serving

ROOT = Path(__file__).resolve().parents[2]


def _policy_file(cluster: Path) -> Path:
    return cluster / "manifests" / "90-machineconfiguration.yaml"


def test_policy_only_change_moves_no_target(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    shutil.copytree(ROOT / "examples" / "cluster", cluster)
    store = DirectoryStore(tmp_path / "store")
    first = render_cluster(cluster, store=store)
    record = store.get_pool("worker")
    assert record.disruption_policy is not None
    assert record.disruption_policy["files"][0]["path"] == "/etc/chrony.conf"
    text = _policy_file(cluster).read_text().replace("/etc/chrony.conf", "/etc/chrony.d")
    _policy_file(cluster).write_text(text)
    second = render_cluster(cluster, store=store)
    for pool in ("worker", "master", "infra"):
        assert second.pools[pool].rendered.name == first.pools[pool].rendered.name
        assert not second.pools[pool].changed
    after = store.get_pool("worker")
    assert after.disruption_policy["files"][0]["path"] == "/etc/chrony.d"
    assert after.history == record.history


def test_served_policy_reaches_the_agent(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    shutil.copytree(ROOT / "examples" / "cluster", cluster)
    with serving(cluster, tmp_path / "store") as url:
        source = ServerSource(ServerClient(url))
        desired = source.desired("node-a", "worker", None)
        assert desired is not None
        policy = policy_from_annotations(desired.annotations)
        assert [a.to_dict() for a in policy.for_file("/etc/chrony.conf").actions] == \
            [{"type": "Restart", "restart": {"serviceName": "chronyd.service"}}]
        again = source.desired("node-a", "worker", desired)  # the same target: the policy is carried again
        assert again is not None and again.name == desired.name
        assert policy_from_annotations(again.annotations).for_file("/etc/chrony.conf") == \
            policy.for_file("/etc/chrony.conf")
