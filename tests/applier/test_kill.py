"""SIGKILL at any point of an apply, then a rerun converges: no half-written file, backups intact,
currentconfig never ahead of the disk (a real `mco apply` subprocess, killed at staggered moments)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from applier.files import host_path
from applier.runner import SubprocessRunner
from applier.state import StateDir
from applier.units import Systemctl
from applier.verify import verify_config
from tests.applier.helpers import file_entry, make_root
from tests.builders import rendered_config
from tests.tools import real_tool

N = 400
POLICY = json.dumps({"files": [{"path": "/etc/kill", "actions": [{"type": "None"}]}]})
ANN = {"machineconfiguration.openshift.io/node-disruption-policy": POLICY}


def _config(tag: str, paths: range) -> dict:
    files = [file_entry(f"/etc/kill/{i // 100}/f{i}.conf", f"{tag} {i}\n" * (1 + i % 7)) for i in paths]
    files.append(file_entry("/etc/kill/original.conf", f"{tag} managed\n"))
    return rendered_config(tag, files, annotations=ANN).to_dict()


def _mco(root: Path, desired: Path) -> list[str]:
    return [sys.executable, "-m", "cli.main", "apply", "--once", "--node", "n1", "--desired", str(desired),
            "--root", str(root), "--reboot-command", "true"]


def _expected(doc: dict) -> dict[str, str]:
    from urllib.parse import unquote

    return {f["path"]: unquote(f["contents"]["source"][len("data:,"):]) for f in doc["spec"]["config"]["storage"]["files"]}


def test_sigkill_anywhere_then_converge(tmp_path: Path) -> None:
    real_tool("systemctl")
    root = make_root(tmp_path / "root")
    original = root / "etc/kill/original.conf"
    original.parent.mkdir(parents=True)
    original.write_text("shipped by the OS\n")
    a, b = _config("a", range(0, N)), _config("b", range(N // 3, N + N // 3))
    fa, fb = tmp_path / "a.json", tmp_path / "b.json"
    fa.write_text(json.dumps(a))
    fb.write_text(json.dumps(b))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "cli.main", "apply", "--help"], env=env, capture_output=True)
    startup = time.monotonic() - started
    started = time.monotonic()
    assert subprocess.run(_mco(root, fa), env=env, capture_output=True).returncode == 0
    full = time.monotonic() - started  # kill moments are spread over [startup, full]: machine-speed independent
    state = StateDir(root / "etc/machine-config-daemon")
    systemctl = Systemctl(SubprocessRunner(), root)
    want_a, want_b = _expected(a), _expected(b)
    rng = random.Random(7)
    kills = 0
    for attempt in range(6):
        target = fb if attempt % 2 == 0 else fa  # alternate, so every attempt has work to do
        proc = subprocess.Popen(_mco(root, target), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(startup + rng.random() * max(full - startup, 0.05))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        # invariants after every kill
        current = state.current()
        assert current is not None
        reached = {"rendered-worker-a": a, "rendered-worker-b": b}[current.name]
        if state.pending() is None:  # no update in progress: the disk is exactly currentconfig
            assert verify_config(root, reached["spec"]["config"], systemctl=systemctl) == []
        for path in set(want_a) | set(want_b):
            target_path = host_path(root, path)
            if target_path.exists():
                assert target_path.read_text() in (want_a.get(path), want_b.get(path), "shipped by the OS\n"), path
        assert state.orig("/etc/kill/original.conf").read_text() == "shipped by the OS\n"
    assert kills >= 2, "the apply finished before any kill landed; raise N"
    final = subprocess.run(_mco(root, fb), env=env, capture_output=True, text=True)
    assert final.returncode == 0, final.stderr
    assert json.loads(final.stdout)["state"] == "Done"
    assert state.current().name == "rendered-worker-b" and state.pending() is None
    assert verify_config(root, b["spec"]["config"], systemctl=systemctl) == []
    gone = set(want_a) - set(want_b)
    assert gone and not any(host_path(root, p).exists() for p in gone)
    assert not [p for p in root.rglob("*") if ".mco-tmp" in p.name]
    # and back: the managed original is restored when it leaves the config
    c = rendered_config("c", [file_entry("/etc/kill/other.conf", "c\n")], annotations=ANN).to_dict()
    (tmp_path / "c.json").write_text(json.dumps(c))
    assert subprocess.run(_mco(root, tmp_path / "c.json"), env=env, capture_output=True).returncode == 0
    assert original.read_text() == "shipped by the OS\n"
