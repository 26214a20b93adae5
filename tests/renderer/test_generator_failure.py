"""A refused KubeletConfig or ContainerRuntimeConfig does not stop its pool (MCO: only that object gets a
Failure condition): the pool renders its other MachineConfigs with the generated config of the last
successful sync, the failure is listed by the render (file:line and field) and carried by the pool's
record and its /pools status."""

from __future__ import annotations

from pathlib import Path

import yaml

from fleet.store import MemoryStore
from renderer.render import render_cluster
from server.status import pool_summary, tally
from tests.renderer.documents import NEW_WORKER_MC, rendered_files

KC = """\
apiVersion: machineconfiguration.openshift.io/v1
kind: KubeletConfig
metadata:
  name: worker-kubelet
spec:
  machineConfigPoolSelector:
    matchLabels:
      pools.operator.machineconfiguration.openshift.io/worker: ""
  kubeletConfig:
    maxPods: {max_pods}
{extra}"""
def test_bad_kubelet_config_keeps_the_last_sync_and_the_pool_renders(cluster: Path) -> None:
    store = MemoryStore()
    kc = cluster / "manifests" / "81-kc.yaml"
    kc.write_text(KC.format(max_pods=300, extra=""))
    first = render_cluster(cluster, store=store)
    assert first.pools["worker"].errors == ()
    assert yaml.safe_load(rendered_files(first.pools["worker"].rendered)["/etc/kubernetes/kubelet.conf"])["maxPods"] == 300

    kc.write_text(KC.format(max_pods=500, extra="    cgroupDriver: cgroupfs\n"))
    (cluster / "manifests" / "60-worker-new.yaml").write_text(NEW_WORKER_MC)
    second = render_cluster(cluster, store=store)
    worker = second.pools["worker"]
    assert worker.errors == ()
    assert worker.changed
    files = rendered_files(worker.rendered)
    assert files["/etc/new"] == b"new"
    assert yaml.safe_load(files["/etc/kubernetes/kubelet.conf"])["maxPods"] == 300  # the last successful sync
    assert any(e.startswith("manifests/81-kc.yaml:11:") and "$.spec.kubeletConfig.cgroupDriver" in e
               for e in second.errors), second.errors
    record = store.get_pool("worker")
    failure = record.condition("KubeletConfigFailure")
    assert failure is not None and failure.status == "True" and failure.reason == "worker-kubelet"
    assert "manifests/81-kc.yaml:11:" in failure.message and "cgroupDriver" in failure.message
    assert record.condition("RenderDegraded").status == "False"
    shown = {c["type"]: c for c in pool_summary(record, tally("worker", []))["status"]["conditions"]}
    assert shown["KubeletConfigFailure"]["status"] == "True"

    kc.write_text(KC.format(max_pods=500, extra=""))
    third = render_cluster(cluster, store=store)
    assert third.errors == ()
    assert yaml.safe_load(rendered_files(third.pools["worker"].rendered)["/etc/kubernetes/kubelet.conf"])["maxPods"] == 500
    assert store.get_pool("worker").condition("KubeletConfigFailure").status == "False"


def test_bad_first_sync_renders_without_it(cluster: Path) -> None:
    (cluster / "manifests" / "80-crio-worker.yaml").write_text(
        (cluster / "manifests" / "80-crio-worker.yaml").read_text().replace("pidsLimit: 4096", "pidsLimit: 5"))
    result = render_cluster(cluster, store=MemoryStore())
    worker = result.pools["worker"]
    assert worker.errors == ()
    assert not any(p.startswith("/etc/crio/crio.conf.d/01-ctrcfg") for p in rendered_files(worker.rendered))
    assert any("$.spec.containerRuntimeConfig.pidsLimit: invalid PidsLimit 5" in e for e in result.errors)
