"""`POST /nodes/{name}/reboot-slot` on the real `mco serve`: granted once, recorded as Working so a second node of a
maxUnavailable-1 pool is refused naming why; an unknown node and a bad name are 4xx naming the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import requests

from tests.serving import serving

CLUSTER = Path(__file__).resolve().parents[1] / "applier" / "cluster_kargs"


def test_reboot_slot(tmp_path: Path) -> None:
    shutil.copytree(CLUSTER, tmp_path / "cluster")
    with serving(tmp_path / "cluster", tmp_path / "store", log=tmp_path / "serve.log") as url:
        target = requests.get(f"{url}/pools/worker", timeout=5).json()["spec"]["configuration"]["name"]
        for node in ("node-a", "node-b"):
            report = {"pool": "worker", "currentConfig": target, "desiredConfig": target, "state": "Done"}
            assert requests.post(f"{url}/nodes/{node}/status", json=report, timeout=10).status_code == 200
        first = requests.post(f"{url}/nodes/node-a/reboot-slot", timeout=10)
        assert (first.status_code, first.json()) == (200, {"granted": True})
        nodes = {n["name"]: n for n in requests.get(f"{url}/pools/worker", timeout=5).json()["status"]["nodes"]}
        assert (nodes["node-a"]["state"], nodes["node-a"]["message"]) == ("Working", "rebooting to repair drift")
        second = requests.post(f"{url}/nodes/node-b/reboot-slot", timeout=10)
        assert second.json() == {"granted": False, "reason": "1 of 2 nodes unavailable (maxUnavailable 1)"}
        unknown = requests.post(f"{url}/nodes/node-c/reboot-slot", timeout=10)
        assert (unknown.status_code, unknown.json()["path"]) == (404, "path name")
        bad = requests.post(f"{url}/nodes/Not_A_Name/reboot-slot", timeout=10)
        assert (bad.status_code, bad.json()["path"]) == (400, "path name")
