"""`mco render` and `mco diff`: output formats and exit codes (0 ok, 1 invalid/refused, 2 usage or I/O)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cli.main import main
from fleet.directory_store import DirectoryStore
from fleet.rendered import RenderedConfig
from fleet.store_open import close_store, open_store
from tests.etcd_cluster import EtcdCluster, etcd_cluster  # noqa: F401 - pytest fixture


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_render_table_then_unchanged(cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "store")
    code, out, _ = run(capsys, "render", str(cluster), "--store", store)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["POOL", "RENDERED", "SOURCES", "CHANGED"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == {"infra", "master", "worker"}
    assert rows["worker"][1].startswith("rendered-worker-") and rows["worker"][2:] == ["8", "yes"]
    code, out, _ = run(capsys, "render", str(cluster), "--store", store)
    assert code == 0 and all(line.split()[-1] == "no" for line in out.splitlines()[1:])


@pytest.mark.parametrize("output", ["yaml", "json"])
def test_print_is_the_rendered_machine_config(cluster: Path, capsys: pytest.CaptureFixture[str], output: str) -> None:
    code, out, _ = run(capsys, "render", str(cluster), "--pool", "worker", "--print", "--output", output)
    assert code == 0
    data = json.loads(out) if output == "json" else yaml.safe_load(out)
    rendered = RenderedConfig.from_dict(data)
    assert rendered.name.startswith("rendered-worker-") and data["kind"] == "MachineConfig"
    golden = json.loads((Path(__file__).parent / "golden" / "example" / "worker.json").read_text())
    assert rendered == RenderedConfig.from_dict(golden)
    assert rendered.spec.config["ignition"]["version"] == "3.5.0"


@pytest.mark.parametrize(("query", "expected"), [
    ("/etc/kubernetes/kubelet.conf", ["storage.files[/etc/kubernetes/kubelet.conf]"]),
    ("nosmt", ["kernelArguments[nosmt]"]),
    ("node-exporter.service", ["systemd.units[node-exporter.service]"]),
    ("/etc/crio", ["storage.files[/etc/crio/crio.conf.d/00-default.conf]",
                   "storage.files[/etc/crio/crio.conf.d/01-ctrcfg-logLevel]",
                   "storage.files[/etc/crio/crio.conf.d/01-ctrcfg-pidsLimit]"]),
], ids=["file", "karg", "unit", "directory"])
def test_explain(cluster: Path, capsys: pytest.CaptureFixture[str], query: str, expected: list[str]) -> None:
    code, out, _ = run(capsys, "render", str(cluster), "--explain", "infra", query)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("# rendered-infra-")
    assert [line.split()[0] for line in lines[1:]] == expected


def test_explain_names_what_was_overridden(cluster: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "render", str(cluster), "--explain", "infra", "/etc/kubernetes/kubelet.conf")
    assert "<- 99-infra-generated-kubelet (manifests/80-kubelet-infra.yaml:2); overrode 01-worker-kubelet " \
           "(templates/worker/01-worker-kubelet/files/kubelet-conf.yaml:1)" in out


def test_invalid_manifest_exits_1_with_located_error(cluster: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cluster / "manifests" / "50-chrony.yaml").write_text(
        "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 50-chrony\n"
        "  labels:\n    machineconfiguration.openshift.io/role: master\nspec:\n  config:\n    ignition:\n"
        "      version: 3.5.0\n    storage:\n      files:\n        - path: etc/chrony.conf\n")
    code, out, err = run(capsys, "render", str(cluster))
    assert code == 1
    assert "error: pool master: manifests/50-chrony.yaml:13:17 $.spec.config.storage.files.0.path: " \
           "path not absolute" in err
    assert [line.split()[-1] for line in out.splitlines()[1:]] == ["yes", "DEGRADED", "yes"]


@pytest.mark.parametrize(("argv", "code"), [
    (["render", "/nonexistent/cluster"], 2),
    (["render", "{cluster}", "--print"], 2),
    (["render", "{cluster}", "--pool", "nope", "--print"], 1),
    (["diff", "rendered-a-1", "rendered-b-2", "--store", "{store}"], 1),
    (["diff", "only-one", "--store", "{store}"], 2),
], ids=["missing-dir", "print-without-pool", "unknown-pool", "unknown-rendered", "one-name"])
def test_exit_codes(cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                    code: int) -> None:
    (tmp_path / "store").mkdir()  # an empty store: its names are unknown
    args = [a.format(cluster=cluster, store=tmp_path / "store") for a in argv]
    assert run(capsys, *args)[0] == code


def _edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))


DIFFS = [
    (lambda c: _edit(c / "templates/worker/00-worker/files/chrony.yaml", "makestep 1.0 3", "makestep 1.0 5"),
     ["~ file /etc/chrony.conf"], "restart", "chrony-policy-restart"),
    (lambda c: (c / "manifests/05-worker-kernelarg-nosmt.yaml").unlink(),
     ["- karg nosmt", "- karg mitigations=auto,nosmt"], "reboot", "karg-reboot"),
    (lambda c: _edit(c / "templates/worker/00-worker/files/sshd-hardening.yaml", "MaxAuthTries 3", "MaxAuthTries 4"),
     ["~ file /etc/ssh/sshd_config.d/40-hardening.conf"], "reload", "sshd-dir-policy-reload"),
    (lambda c: None, [], "none", "no-change"),
]


@pytest.mark.parametrize(("edit", "summary", "verdict"), [d[:3] for d in DIFFS], ids=[d[3] for d in DIFFS])
def test_diff_pool_against_fresh_render(cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        edit, summary: list[str], verdict: str) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    assert run(capsys, "render", str(cluster), "--store", str(store))[0] == 0
    edit(cluster)
    code, out, _ = run(capsys, "diff", "--pool", "worker", "--store", str(store), "--cluster", str(cluster), "-o", "json")
    assert code == 0
    data = json.loads(out)
    assert data["disruption"]["verdict"] == verdict
    code, out, _ = run(capsys, "diff", "--pool", "worker", "--store", str(store), "--cluster", str(cluster))
    lines = out.splitlines()
    assert lines[2:2 + len(summary)] == summary
    assert any(line.startswith(f"disruption: {verdict} ") for line in lines)


def test_diff_two_names_from_the_store(cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    run(capsys, "render", str(cluster), "--store", str(store))
    old = DirectoryStore(store).get_pool("worker").current
    (cluster / "manifests/05-worker-kernelarg-nosmt.yaml").unlink()
    run(capsys, "render", str(cluster), "--store", str(store))
    new = DirectoryStore(store).get_pool("worker").current
    assert old and new and old != new
    code, out, _ = run(capsys, "diff", old, new, "--store", str(store))
    assert code == 0 and out.splitlines()[:2] == [f"--- {old}", f"+++ {new}"]
    assert "disruption: reboot (drain; actions: Reboot)" in out


def test_render_and_diff_through_an_etcd_store(cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              etcd_cluster: EtcdCluster, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    url = etcd_cluster.url(f"render-cli-{tmp_path.name}")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # where a URL read as a path would have made its directory
    code, out, _ = run(capsys, "render", str(cluster), "--store", url)
    assert code == 0 and {line.split()[0] for line in out.splitlines()[1:]} == {"infra", "master", "worker"}
    assert not list((tmp_path / "cwd").iterdir())  # nothing written here: it went to etcd
    store = open_store(url)
    try:
        old = store.get_pool("worker").current
    finally:
        close_store(store)
    (cluster / "manifests/05-worker-kernelarg-nosmt.yaml").unlink()
    code, out, _ = run(capsys, "diff", "--pool", "worker", "--store", url, "--cluster", str(cluster), "-o", "json")
    assert code == 0 and json.loads(out)["from"] == old and json.loads(out)["disruption"]["verdict"] == "reboot"


@pytest.mark.parametrize(("argv", "message"), [
    (["render", "{cluster}", "--store", "{store}", "--etcd-cert", "{cluster}/cluster.yaml"], "need --store etcd://"),
    (["render", "{cluster}", "--store", "etcd://"], "--store"),
    (["diff", "a", "b", "--store", "etcd://127.0.0.1:1/x", "--etcd-cacert", "/nonexistent"], "--etcd-cacert"),
    (["diff", "a", "b", "--store", "{store}/missing"], "not a directory"),  # a diff creates no store
    (["render", "{cluster}", "--store", ""], "--store: empty"),  # never the current directory
], ids=["tls-flag-without-etcd", "etcd-url-without-host", "missing-ca-file", "diff-of-a-missing-store",
        "empty-store"])
def test_store_flag_usage_errors(cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                 message: str) -> None:
    code, _, err = run(capsys, *[a.format(cluster=cluster, store=tmp_path / "store") for a in argv])
    assert code == 2 and message in err
    assert not (tmp_path / "store" / "missing").exists()


@pytest.mark.parametrize(("text", "message"), [
    ("baseDomain: x\n", "cluster.yaml:1:1 $.name: name is required"),
    ("name: lab\nsshKeys: ssh-ed25519 AAAA\n", "cluster.yaml:2:10 $.sshKeys: expected a list of strings"),
    ("name: [\n", "cluster.yaml:2:1: invalid YAML"),
], ids=["no-name", "keys-not-a-list", "syntax"])
def test_bad_cluster_yaml_exits_1(cluster: Path, capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    (cluster / "cluster.yaml").write_text(text)
    code, _, err = run(capsys, "render", str(cluster))
    assert code == 1 and message in err, err


def test_explain_points_into_butane_documents(cluster: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "render", str(cluster), "--explain", "infra", "/etc/sysconfig/node-exporter")
    assert out.splitlines()[1].endswith("<- 60-infra-node-exporter (manifests/60-infra-node-exporter.bu:10)")
