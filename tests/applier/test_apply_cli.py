"""`mco apply`: flags, output and exit codes (0 Done, 1 Degraded/refused, 2 usage or I/O)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from cli.main import main
from tests.applier.helpers import data_url, file_entry, make_root
from tests.builders import rendered_config
from tests.serving import env, mco


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["apply", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def node(tmp_path: Path) -> Path:
    return make_root(tmp_path / "root")


POLICY = json.dumps({"files": [{"path": "/etc/a", "actions": [{"type": "None"}]}]})


def _desired(tmp_path: Path, *, fmt: str = "json", **kw) -> Path:
    doc = rendered_config("v1", [file_entry("/etc/a", "a\n")],
                   annotations={"machineconfiguration.openshift.io/node-disruption-policy": POLICY}, **kw).to_dict()
    path = tmp_path / f"desired.{fmt}"
    path.write_text(json.dumps(doc) if fmt == "json" else yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_done_exit_0_json_line(tmp_path: Path, node: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, _ = _run(capsys, "--once", "--node", "n1", "--desired", str(_desired(tmp_path, fmt=fmt)),
                        "--root", str(node), "--backend", "none")
    result = json.loads(out)
    assert (code, result["state"], result["current"]) == (0, "Done", "rendered-worker-v1")
    assert (node / "etc/a").read_text() == "a\n"


def test_degraded_exit_1(tmp_path: Path, node: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (node / "etc/a").mkdir()
    code, out, _ = _run(capsys, "--once", "--node", "n1", "--desired", str(_desired(tmp_path)), "--root", str(node))
    assert code == 1 and json.loads(out)["message"].endswith("/etc/a: cannot write file: a directory is in the way")


USAGE = [
    ("repair-needs-once", ["--repair"], "--repair needs --once"),
    ("missing-file", ["--once", "--desired", "/nonexistent.json"], "no such file"),
    ("bad-root", ["--once", "--root", "/nonexistent-root"], "not a directory"),
]


@pytest.mark.parametrize("extra,message", [c[1:] for c in USAGE], ids=[c[0] for c in USAGE])
def test_usage_errors_exit_2(tmp_path: Path, node: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
                             message: str) -> None:
    args = ["--node", "n1"]
    if "--desired" not in extra:
        args += ["--desired", str(_desired(tmp_path))]
    if "--root" not in extra:
        args += ["--root", str(node)]
    code, _, err = _run(capsys, *args, *extra)
    assert code == 2 and message in err


def test_not_a_machineconfig_exit_1(tmp_path: Path, node: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\n")
    code, _, err = _run(capsys, "--once", "--node", "n1", "--desired", str(bad), "--root", str(node))
    assert code == 1 and "not a rendered MachineConfig" in err


def test_server_away_exit_2(node: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "--once", "--node", "n1", "--server", "http://127.0.0.1:9", "--pool", "worker",
                        "--root", str(node), "--retries", "1")
    assert code == 2 and "server unreachable" in err


def test_bad_policy_file_exit_1(tmp_path: Path, node: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "mc.yaml"
    policy.write_text("spec:\n  nodeDisruptionPolicy:\n    files:\n      - path: etc/x\n        actions: [{type: None}]\n")
    code, _, err = _run(capsys, "--once", "--node", "n1", "--desired", str(_desired(tmp_path)), "--root", str(node),
                        "--policy", str(policy))
    assert code == 1 and "$.spec.nodeDisruptionPolicy.files[0].path" in err


def test_repair_on_demand(tmp_path: Path, node: Path, capsys: pytest.CaptureFixture[str]) -> None:
    desired = str(_desired(tmp_path))
    assert _run(capsys, "--once", "--node", "n1", "--desired", desired, "--root", str(node))[0] == 0
    (node / "etc/a").write_text("edited\n")
    code, out, _ = _run(capsys, "--once", "--node", "n1", "--desired", desired, "--root", str(node), "--drift", "report")
    assert code == 1 and 'content mismatch for file "/etc/a"' in json.loads(out)["message"]
    code, out, _ = _run(capsys, "--once", "--repair", "--node", "n1", "--desired", desired, "--root", str(node),
                        "--drift", "report")
    assert (code, json.loads(out)["message"]) == (0, "repaired drift: file /etc/a")
    assert (node / "etc/a").read_text() == "a\n"


def test_policy_file_overrides_allow_disk_changes(tmp_path: Path, node: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = str(_desired(tmp_path))
    assert _run(capsys, "--once", "--node", "n1", "--desired", first, "--root", str(node))[0] == 0
    doc = json.loads(Path(first).read_text())
    doc["metadata"]["name"] = "rendered-worker-v2"
    doc["spec"]["config"]["storage"]["disks"] = [{"device": "/dev/vdb", "wipeTable": True}]
    second = tmp_path / "v2.json"
    second.write_text(json.dumps(doc))
    code, out, _ = _run(capsys, "--once", "--node", "n1", "--desired", str(second), "--root", str(node))
    assert code == 1 and json.loads(out)["message"].endswith("ignition disks section contains changes")
    policy = tmp_path / "mc.yaml"
    policy.write_text("apiVersion: operator.openshift.io/v1\nkind: MachineConfiguration\nmetadata: {name: cluster}\n"
                      "spec:\n  irreconcilableValidationOverrides:\n    storage: [Disks]\n"
                      "  nodeDisruptionPolicy:\n    files: [{path: /etc/a, actions: [{type: None}]}]\n")
    code, out, _ = _run(capsys, "--once", "--node", "n1", "--desired", str(second), "--root", str(node),
                        "--policy", str(policy))
    assert (code, json.loads(out)["state"]) == (0, "Done")


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` with its bytes (None for a directory), the agent's state directory left out."""
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))
            if "machine-config-daemon" not in p.parts}


def test_contents_not_matching_their_hash_are_refused_and_the_node_is_unchanged(tmp_path: Path, node: Path) -> None:
    """The real agent reads file contents through Ignition's resource reader: `verification.hash` is checked."""
    desired = tmp_path / "v1.json"
    policy = {"machineconfiguration.openshift.io/node-disruption-policy": json.dumps(
        {"files": [{"path": p, "actions": [{"type": "None"}]} for p in ("/etc/a", "/etc/b")]})}
    desired.write_text(json.dumps(rendered_config("v1", [file_entry("/etc/a", "a\n")], annotations=policy).to_dict()))
    args = ["--once", "--node", "n1", "--root", str(node), "--backend", "none"]
    first = subprocess.run(mco("apply", *args, "--desired", str(desired)), env=env(), capture_output=True, text=True)
    assert (first.returncode, json.loads(first.stdout)["state"]) == (0, "Done"), first.stderr
    before = _tree(node)
    wrong = "sha512-" + hashlib.sha512(b"something else").hexdigest()
    files = [file_entry("/etc/b", "b\n"), file_entry("/etc/a", "a2\n", contents={
        "source": data_url("a2\n"), "verification": {"hash": wrong}})]
    desired.write_text(json.dumps(rendered_config("v2", files, annotations=policy).to_dict()))
    second = subprocess.run(mco("apply", *args, "--desired", str(desired)), env=env(), capture_output=True, text=True)
    result = json.loads(second.stdout)
    assert (second.returncode, result["state"], result["current"]) == (1, "Degraded", "rendered-worker-v1")
    assert "/etc/a" in result["message"] and "verification.hash" in result["message"]
    assert wrong.partition("-")[2] in result["message"]
    assert _tree(node) == before
