"""`mco image build` end to end: cluster directory -> render -> image, with the real tools."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli.main import main
from tests.imagebuild.conftest import run
from tests.tools import real_tool

DATA = Path(__file__).parent / "data"
CLUSTER_A = DATA / "cluster-a"
CLUSTER_B = DATA / "cluster-b"   # the same cluster, documents and keys in another order


def mco(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.realtool
def test_oci_mode_same_digest_across_runs_and_equivalent_clusters(
        base_layout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    digests = []
    for i, cluster in enumerate((CLUSTER_A, CLUSTER_A, CLUSTER_B)):
        out_dir, digestfile = tmp_path / f"out{i}", tmp_path / f"digest{i}"
        code, out, err = mco(capsys, "image", "build", cluster, "--pool", "worker", "--base", f"oci:{base_layout}:v1",
                             "--mode", "oci", "--output-layout", f"oci:{out_dir}:w", "--digestfile", digestfile)
        assert code == 0, err
        digest = digestfile.read_text()
        assert out.splitlines()[-1] == f"oci:{out_dir}@{digest}"
        assert "writing layer" in err     # progress goes to stderr
        digests.append(digest)
    assert digests[0] == digests[1] == digests[2]


@pytest.mark.realtool
def test_push_prints_the_digested_reference(base_layout: Path, registry: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = mco(capsys, "image", "build", CLUSTER_A, "--pool", "worker", "--base", f"oci:{base_layout}:v1",
                         "--mode", "oci", "--push", f"docker://{registry}/lab/worker:latest", "--tls-verify=false")
    assert code == 0, err
    reference = out.splitlines()[-1]
    info = json.loads(run(real_tool("skopeo"), "inspect", "--tls-verify=false", f"docker://{registry}/lab/worker:latest"))
    assert reference == f"{registry}/lab/worker@{info['Digest']}"
    assert info["Labels"]["machineconfigpool"] == "worker"


@pytest.mark.realtool
def test_json_format(base_layout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = mco(capsys, "image", "build", CLUSTER_A, "--pool", "worker", "--base", f"oci:{base_layout}:v1",
                         "--mode", "oci", "--output-layout", f"oci:{tmp_path / 'o'}:w", "-o", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["reference"] == f"oci:{tmp_path / 'o'}@{data['digest']}"
    assert data["kernelArguments"] == ["nosmt"] and data["refused"] == [] and data["mode"] == "oci"
    assert data["renderedConfig"].startswith("rendered-worker-")


def test_containerfile_mode_writes_the_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = mco(capsys, "image", "build", CLUSTER_A, "--pool", "worker", "--base",
                         "quay.io/example/os:1", "--out-dir", tmp_path / "ctx")
    assert code == 0, err
    assert out.splitlines()[-1] == str(tmp_path / "ctx" / "Containerfile")
    text = (tmp_path / "ctx" / "Containerfile").read_text()
    assert "FROM quay.io/example/os:1\nCOPY rootfs/ /\n" in text
    assert (tmp_path / "ctx/rootfs/etc/systemd/system/multi-user.target.wants/app.service").is_symlink()


def refusing_cluster(tmp_path: Path) -> Path:
    cluster = tmp_path / "cluster"
    shutil.copytree(CLUSTER_A, cluster)
    (cluster / "manifests" / "30-boot.yaml").write_text(
        "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 30-worker-boot\n"
        "  labels: {machineconfiguration.openshift.io/role: worker}\n"
        "spec:\n  extensions: [usbguard]\n  config:\n    ignition: {version: 3.2.0}\n    storage:\n      files:\n"
        "        - {path: /boot/grub2/user.cfg, contents: {source: 'data:,x'}}\n")
    return cluster


def test_refusals_exit_1_and_are_all_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = mco(capsys, "image", "build", refusing_cluster(tmp_path), "--pool", "worker", "--base",
                         "oci:/nonexistent:v1", "--mode", "oci", "--output-layout", f"oci:{tmp_path / 'o'}:w",
                         "-o", "json")
    assert code == 1
    refused = {(p["code"], p["path"], p["source"]) for p in json.loads(out)["refused"]}
    assert refused == {
        ("path-not-in-image", "$.spec.config.storage.files.1.path", "30-worker-boot (manifests/30-boot.yaml:12)"),
        ("needs-engine", "$.spec.extensions", "30-worker-boot (manifests/30-boot.yaml:7)")}
    assert "refused[path-not-in-image] at $.spec.config.storage.files.1.path (30-worker-boot" in err
    assert not (tmp_path / "o").exists()   # nothing half-written


USAGE = {
    "output-transport": ["--mode", "oci", "--output-layout", "dir:/tmp/x"],
    "push-transport": ["--mode", "oci", "--push", "oci:/tmp/x:y"],
    "build-with-oci": ["--mode", "oci", "--build", "--output-layout", "oci:/tmp/x:y"],
    "digestfile-without-image": ["--out-dir", "/tmp/ctx", "--digestfile", "/tmp/d"],
    "missing-base": ["--mode", "oci", "--output-layout", "oci:{tmp}/o:w"],
}


@pytest.mark.parametrize("extra", USAGE.values(), ids=USAGE.keys())
def test_usage_and_io_errors_exit_2(extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    code, _out, err = mco(capsys, "image", "build", CLUSTER_A, "--pool", "worker", "--base",
                          f"oci:{tmp_path}/no-such-layout:v1", *argv)
    assert code == 2, err
    assert err.splitlines()[-1].startswith("mco: ")


def test_unknown_pool_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = mco(capsys, "image", "build", CLUSTER_A, "--pool", "nope", "--base", "x:1",
                          "--out-dir", tmp_path / "c")
    assert code == 1 and "no pool 'nope'" in err


@pytest.mark.realtool
def test_output_and_push_with_source_date_epoch(base_layout: Path, registry: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    code, out, err = mco(capsys, "image", "build", CLUSTER_A, "--pool", "worker", "--base", f"oci:{base_layout}:v1",
                         "--mode", "oci", "--output-layout", f"oci:{tmp_path / 'o'}:w",
                         "--push", f"docker://{registry}/lab/epoch:v1", "--tls-verify=false")
    assert code == 0, err
    digest = out.splitlines()[-1].split("@", 1)[1]
    assert out.splitlines()[-1] == f"{registry}/lab/epoch@{digest}"
    assert f"wrote oci:{tmp_path / 'o'}@{digest}" in err
    info = json.loads(run(real_tool("skopeo"), "inspect", f"oci:{tmp_path / 'o'}:w"))
    assert info["Created"] == "1970-01-02T00:00:00Z" and info["Digest"] == digest
