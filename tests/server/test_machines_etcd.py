"""Machine documents through the etcd store, end to end: `mco controller` renders a cluster with Machine documents
into a real etcd cluster, and an `mco serve` replica (no cluster directory, node authentication on) serves each
machine its own config from it: by its facts at first boot, by its node's token on day 2 (its node registered
through etcd), and a changed variable re-rendered by the controller reaches that machine's config only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import requests

from ignition.dataurl import decode_data_url
from server.auth import node_token
from tests.server.helpers import ACCEPT_33
from tests.server.scale_out import Fleet, until

MACHINES = Path(__file__).resolve().parents[1] / "renderer" / "machines_cluster"
SECRET = b"0123456789abcdef-node-secret"
KEYFILE = "/etc/NetworkManager/system-connections/enp1s0.nmconnection"
FACTS = {"node-a": "mac=52:54:00:00:00:0a&hostname=node-a",
         "node-b": "uuid=6e5b1c2a-0000-4000-8000-00000000000b&hostname=node-b"}




def _get(base: str, query: str, token: str | None = None) -> requests.Response:
    headers = {"Accept": ACCEPT_33, **({"Authorization": f"Bearer {token}"} if token else {})}
    return requests.get(f"{base}/config/worker?{query}", headers=headers, timeout=30)


def _files(body: bytes) -> dict[str, bytes]:
    return {f["path"]: decode_data_url(f["contents"]["source"]) for f in json.loads(body)["storage"]["files"]}


def test_machine_configs_rendered_into_etcd_are_served_per_machine(fleet: Fleet, tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    shutil.copytree(MACHINES, cluster)
    (tmp_path / "secret").write_bytes(SECRET)
    fleet.start_controller("c1", cluster)
    base = fleet.start_replica(None, "--node-secret-file", str(tmp_path / "secret"))
    tokens = {n: node_token(SECRET, n) for n in FACTS}

    pool = requests.get(f"{base}/pools/worker", timeout=10).json()
    configs = {m["name"]: m["config"] for m in pool["status"]["machines"]}
    assert set(configs) == {"node-a", "node-b"}
    for node, facts in FACTS.items():  # first boot: each machine by its facts, its own hostname and address
        answer = _get(base, facts)
        assert answer.status_code == 200, answer.text
        assert answer.headers["X-Rendered-Config"] == configs[node]
        files = _files(answer.content)
        assert files["/etc/hostname"] == f"{node}\n".encode() and files["/etc/motd"] == b"welcome\n"
    plain = _get(base, "")
    assert plain.headers["X-Rendered-Config"] == pool["spec"]["configuration"]["name"]
    assert _files(plain.content)["/etc/hostname"] == b"localhost\n"

    # day 2: node-a registers (a claim written to etcd); the replica then serves its machine to its token only
    claim = requests.post(f"{base}/nodes/node-a/desired", params={"pool": "worker"}, timeout=30,
                          headers={"Authorization": f"Bearer {tokens['node-a']}"})
    assert claim.status_code == 200 and claim.json()["desiredConfig"] == configs["node-a"]
    until(lambda: _get(base, FACTS["node-a"]).status_code == 403)
    mine = _get(base, "node=node-a", tokens["node-a"])
    assert mine.status_code == 200 and mine.headers["X-Rendered-Config"] == configs["node-a"]
    assert b"address1=192.168.122.10/24" in _files(mine.content)[KEYFILE]
    assert _get(base, "node=node-a", tokens["node-b"]).status_code == 403
    stored = requests.get(f"{base}/rendered/{configs['node-a']}", timeout=10,
                          headers={"Authorization": f"Bearer {tokens['node-a']}"})
    assert stored.status_code == 200 and stored.json()["metadata"]["name"] == configs["node-a"]

    # a changed variable: the controller re-renders into etcd, and only node-b's config changes
    machines = cluster / "manifests/machines.yaml"
    machines.write_text(machines.read_text().replace("192.168.122.11/24", "192.168.122.21/24"))
    moved = until(lambda: (r := _get(base, FACTS["node-b"])).headers.get("X-Rendered-Config") != configs["node-b"]
                   and r)
    assert isinstance(moved, requests.Response) and moved.status_code == 200
    assert b"address1=192.168.122.21/24" in _files(moved.content)[KEYFILE]
    again = _get(base, "node=node-a", tokens["node-a"])
    assert again.headers["X-Rendered-Config"] == configs["node-a"] and again.content == mine.content
