"""Day 2 with image mirrors, the real way: `mco serve` renders an ImageDigestMirrorSet into the worker's
registries.conf and the real agent (`mco apply --server`) applies it to a node root. Adding a digest mirror
reaches the node with a CRI-O reload and no drain (MCO `pkg/daemon/drain.go` isSafeContainerRegistryConfChanges,
fleet/registries_conf.py); removing it drains the node first (the drain and uncordon hooks run) and still does
not reboot."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

import requests

from tests.applier.helpers import make_root, reboot_command
from tests.serving import env, mco, serving
from tests.tools import real_tool

NODE = "worker-0"
IDMS = """\
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: release-mirrors
spec:
  imageDigestMirrors:
  - source: quay.io/openshift-release-dev/ocp-release
    mirrors:
{mirrors}
"""
FIRST = "    - mirror.lab.example.net:5000/ocp/release\n"
SECOND = FIRST + "    - backup.lab.example.net/ocp/release\n"


def _apply(root: Path, url: str, log: Path) -> dict:
    proc = subprocess.run(mco("apply", "--once", "--node", NODE, "--server", url, "--pool", "worker", "--root",
                              str(root), "--reboot-command", reboot_command(root, log),
                              "--drain-command", f"echo drain {{node}} >> {log}",
                              "--uncordon-command", f"echo uncordon $NODE >> {log}"),
                          env=env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _target(url: str, previous: str | None = None) -> str:
    deadline = time.monotonic() + 60
    while True:
        name = requests.get(f"{url}/pools/worker", timeout=5).json()["spec"]["configuration"]["name"]
        if name and name != previous:
            return str(name)
        assert time.monotonic() < deadline, "the server did not re-render"
        time.sleep(0.1)


def _converge(root: Path, url: str, log: Path, target: str) -> dict:
    for _ in range(5):
        result = _apply(root, url, log)
        if result["state"] == "Done" and result["current"] == target:
            return result
    raise AssertionError(result)


def _mirrors(root: Path) -> list[str]:
    conf = tomllib.loads((root / "etc/containers/registries.conf").read_text())
    entry = next(r for r in conf["registry"] if r["location"] == "quay.io/openshift-release-dev/ocp-release")
    assert {m["pull-from-mirror"] for m in entry["mirror"]} == {"digest-only"}
    return [m["location"] for m in entry["mirror"]]


def test_adding_a_digest_mirror_does_not_drain_and_removing_it_does(tmp_path: Path) -> None:
    real_tool("systemctl")
    cluster = tmp_path / "cluster"
    shutil.copytree(Path(__file__).parent / "cluster_small", cluster)
    idms = cluster / "manifests/20-idms.yaml"
    idms.write_text(IDMS.format(mirrors=FIRST))
    root, log = make_root(tmp_path / NODE), tmp_path / "hooks.log"
    with serving(cluster, tmp_path / "store", log=tmp_path / "serve.log") as url:
        first = _target(url)
        _converge(root, url, log, first)
        assert _mirrors(root) == ["mirror.lab.example.net:5000/ocp/release"]
        log.write_text("")

        idms.write_text(IDMS.format(mirrors=SECOND))  # day 2: a second digest mirror
        second = _target(url, first)
        added = _converge(root, url, log, second)
        assert _mirrors(root) == ["mirror.lab.example.net:5000/ocp/release", "backup.lab.example.net/ocp/release"]
        assert log.read_text() == "", "adding a digest-only mirror must neither drain nor reboot"
        assert "without reboot" in added["message"], added

        idms.write_text(IDMS.format(mirrors=FIRST))  # and removed again
        third = _target(url, second)
        removed = _converge(root, url, log, third)
        assert _mirrors(root) == ["mirror.lab.example.net:5000/ocp/release"]
        assert log.read_text().split() == ["drain", NODE, "uncordon", NODE], "removing a mirror drains, no reboot"
        assert "without reboot" in removed["message"], removed
        status = requests.get(f"{url}/pools/worker", timeout=5).json()["status"]
        assert status["updatedMachineCount"] == status["machineCount"] == 1
