"""A pool with spec-2 MachineConfigs: converted as the MCO converts them, then merged in name order
(MCO TestMergeMachineConfigs: a spec-2 config merges beside spec-3 ones), and said so by --explain."""

from __future__ import annotations

from pathlib import Path

from cli.main import main
from fleet.store import MemoryStore
from ignition.dataurl import decode_data_url
from renderer.render import render_cluster

V2 = """\
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 60-worker-v2
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config:
    ignition:
      version: 2.2.0
    passwd:
      users:
      - name: core
        sshAuthorizedKeys: [ssh-ed25519 AAAA-v2]
    storage:
      files:
      - {filesystem: root, path: /etc/shared, mode: 420, contents: {source: "data:,v2-old"}}
      - {filesystem: root, path: /etc/shared, mode: 420, contents: {source: "data:,v2-new"}}
      - {filesystem: root, path: /etc/only-v2, contents: {source: "data:,x"}}
"""
V3 = """\
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 55-worker-v3
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config:
    ignition:
      version: 3.2.0
    storage:
      files:
      - {path: /etc/shared, mode: 384, contents: {source: "data:,v3"}}
"""


def test_spec2_config_merges_after_spec3_by_name(cluster: Path) -> None:
    (cluster / "manifests" / "60-worker-v2.yaml").write_text(V2)
    (cluster / "manifests" / "55-worker-v3.yaml").write_text(V3)
    result = render_cluster(cluster, store=MemoryStore())
    worker = result.pools["worker"]
    assert worker.errors == ()
    assert worker.rendered is not None
    config = worker.rendered.spec.config
    files = {f["path"]: f for f in config["storage"]["files"]}
    assert decode_data_url(files["/etc/shared"]["contents"]["source"]) == b"v2-new"
    assert files["/etc/shared"]["mode"] == 420 and files["/etc/shared"]["overwrite"] is True
    assert files["/etc/only-v2"]["overwrite"] is True
    core = next(u for u in config["passwd"]["users"] if u["name"] == "core")
    assert "ssh-ed25519 AAAA-v2" in core["sshAuthorizedKeys"]
    assert config["ignition"]["version"] == "3.5.0"


def test_explain_says_the_config_was_converted(cluster: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (cluster / "manifests" / "60-worker-v2.yaml").write_text(V2)
    code = main(["render", str(cluster), "--store", str(tmp_path / "store"), "--explain", "worker", "/etc/only-v2"])
    out = capsys.readouterr().out
    assert code == 0
    assert "60-worker-v2 (manifests/60-worker-v2.yaml:" in out
    assert "[Ignition 2.2.0 config converted to spec 3]" in out
