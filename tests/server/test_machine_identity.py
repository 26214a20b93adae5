"""A machine's config on day 2, from the real `mco serve` (node authentication, a pool token, an address rule):
at first boot the machine is served by its facts under the pool's token; once its node has registered, its facts
no longer get it (a MAC is an identifier, not a credential), and `/config/worker?node=NAME` with NAME's node token
gets the pool's config merged with that machine's overlay, to that node only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import requests

from ignition.dataurl import decode_data_url
from server.auth import node_token
from tests.server.helpers import ACCEPT_33
from tests.serving import serving

MACHINES = Path(__file__).resolve().parents[1] / "renderer" / "machines_cluster"
SECRET = b"0123456789abcdef-node-secret"
POOL_TOKEN = "worker-pool-token"
FACTS = {"node-a": "mac=52-54-00-00-00-0A&hostname=node-a", "node-b": "uuid=6e5b1c2a-0000-4000-8000-00000000000b"
                                                                       "&hostname=node-b"}


def _files(body: bytes) -> dict[str, bytes]:
    return {f["path"]: decode_data_url(f["contents"]["source"]) for f in json.loads(body)["storage"]["files"]}


@pytest.fixture
def served(tmp_path: Path):  # type: ignore[no-untyped-def]
    cluster = tmp_path / "cluster"
    shutil.copytree(MACHINES, cluster)
    (tmp_path / "secret").write_bytes(SECRET)
    (tmp_path / "token").write_text(POOL_TOKEN + "\n")
    extra = ["--node-secret-file", str(tmp_path / "secret"), "--token", f"worker={tmp_path / 'token'}",
             "--allow", "127.0.0.0/8"]
    with serving(cluster, tmp_path / "store", extra=extra, log=tmp_path / "serve.log") as url:
        yield url


def _get(url: str, query: str, token: str | None) -> requests.Response:
    headers = {"Accept": ACCEPT_33, **({"Authorization": f"Bearer {token}"} if token else {})}
    return requests.get(f"{url}/config/worker?{query}", headers=headers, timeout=30)


def test_day_two_the_machine_is_served_by_its_nodes_credential_only(served: str) -> None:
    url = served
    tokens = {n: node_token(SECRET, n) for n in ("node-a", "node-b", "node-c")}
    pool = requests.get(f"{url}/pools/worker", headers={"Authorization": f"Bearer {POOL_TOKEN}"}, timeout=10).json()
    configs = {m["name"]: m["config"] for m in pool["status"]["machines"]}

    first = _get(url, FACTS["node-a"], POOL_TOKEN)  # first boot: the facts, under the pool's token
    assert first.status_code == 200 and _files(first.content)["/etc/hostname"] == b"node-a\n"
    assert first.headers["X-Rendered-Config"] == configs["node-a"]
    refused = _get(url, FACTS["node-a"], None)
    assert refused.status_code == 403 and b"storage" not in refused.content

    claim = requests.post(f"{url}/nodes/node-a/desired", params={"pool": "worker"}, timeout=30,
                          headers={"Authorization": f"Bearer {tokens['node-a']}"})
    assert claim.status_code == 200 and claim.json()["desiredConfig"] == configs["node-a"]

    # day 2: node-a's facts are no credential any more, even with the pool's token
    for attempt in range(2):  # (the second time from the answers the server remembers, if it kept one)
        late = _get(url, FACTS["node-a"], POOL_TOKEN)
        assert late.status_code == 403 and b"storage" not in late.content, attempt
    mine = _get(url, "node=node-a", tokens["node-a"])
    assert mine.status_code == 200, mine.text
    assert mine.headers["X-Rendered-Config"] == configs["node-a"]
    files = _files(mine.content)
    assert files["/etc/hostname"] == b"node-a\n" and files["/etc/motd"] == b"welcome\n"  # overlay over the pool's
    assert b"address1=192.168.122.10/24" in files["/etc/NetworkManager/system-connections/enp1s0.nmconnection"]
    assert _get(url, "node=node-a", tokens["node-a"]).content == mine.content  # the same bytes, remembered
    for token in (tokens["node-b"], POOL_TOKEN, None):  # another node's credential, the pool's, none
        other = _get(url, "node=node-a", token)
        assert other.status_code == 403 and b"storage" not in other.content
    assert _get(url, FACTS["node-b"], POOL_TOKEN).status_code == 200  # node-b has not registered: first boot
    unknown = _get(url, "node=node-c", tokens["node-c"])  # a node of the fleet with no machine document
    assert unknown.status_code == 404 and unknown.json()["path"] == "query node"
    both = _get(url, "node=node-a&mac=52:54:00:00:00:0a", tokens["node-a"])
    assert both.status_code == 400 and both.json()["path"] == "query node"
    assert _get(url, "", POOL_TOKEN).headers["X-Rendered-Config"] == pool["spec"]["configuration"]["name"]
