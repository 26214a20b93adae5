"""`mco apply --once` goes on after a verified reboot: when the desired config is newer than
the one just verified, the same invocation applies it, and exits 0 only with it applied or pending its reboot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from applier.state import StateDir
from cli.main import main
from tests.applier.helpers import file_entry, make_root, reboot_command
from tests.builders import rendered_config

POLICY = json.dumps({"files": [{"path": "/etc/quiet.conf", "actions": [{"type": "None"}]}]})
ANN = {"machineconfiguration.openshift.io/node-disruption-policy": POLICY}

CASES = [
    # name, B's files, B's expected outcome (state, current, rebooting)
    ("newer-without-reboot", {"/etc/loud.conf": "a\n", "/etc/quiet.conf": "b\n"}, ("Done", "rendered-worker-b", False)),
    ("newer-with-reboot", {"/etc/loud.conf": "b\n", "/etc/quiet.conf": "a\n"}, ("Working", "rendered-worker-a", True)),
]


@pytest.mark.parametrize("files,outcome", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_once_applies_the_newer_config_after_verifying(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       files: dict[str, str], outcome: tuple[str, str, bool]) -> None:
    root = make_root(tmp_path / "root")
    docs = {}
    for name, content in (("a", {"/etc/loud.conf": "a\n", "/etc/quiet.conf": "a\n"}), ("b", files)):
        docs[name] = tmp_path / f"{name}.json"
        docs[name].write_text(json.dumps(rendered_config(name, [file_entry(p, t) for p, t in content.items()],
                                                  annotations=ANN).to_dict()))

    def once(name: str) -> tuple[int, dict]:
        code = main(["apply", "--once", "--node", "n1", "--desired", str(docs[name]), "--root", str(root),
                     "--backend", "none", "--reboot-command", reboot_command(root)])
        return code, json.loads(capsys.readouterr().out)

    code, first = once("a")  # a first apply writes /etc/loud.conf, which has no policy: reboot
    assert (code, first["rebooting"]) == (0, True)
    code, result = once("b")  # the reboot into A happened; B is already the target
    assert code == 0
    assert (result["state"], result["current"], result["desired"], result["rebooting"]) == (
        outcome[0], outcome[1], "rendered-worker-b", outcome[2]), result
    state = StateDir(root / "etc/machine-config-daemon")
    if outcome[2]:
        assert state.pending().config.name == "rendered-worker-b" and state.current().name == "rendered-worker-a"
    else:
        assert state.pending() is None and state.current().name == "rendered-worker-b"
    for path, text in files.items():
        assert (root / path.lstrip("/")).read_text() == text
