"""GET/HEAD never write, only a node may speak for itself, and a node's own report never
moves it to another pool. (That node listings do not re-read unchanged records: tests/fleet/test_node_journal.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from fleet.node_admin import relabel, selectors_of
from fleet.store import MemoryStore
from server.auth import AccessPolicy, node_token
from tests.builders import rendered_config
from tests.server.conftest import MakeClient
from tests.server.helpers import SOURCES, ignition_config, publish

SECRET = b"0123456789abcdef-node-secret"


@pytest.fixture
def store() -> MemoryStore:
    s = MemoryStore()
    publish(s, rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=2)))
    publish(s, rendered_config(pool="infra", sources=SOURCES, config=ignition_config("3.4.0", files=1)))
    return s


def _report(pool: str = "worker", state: str = "Done") -> dict[str, str]:
    return {"pool": pool, "currentConfig": "", "desiredConfig": "", "state": state}


def _bearer(node: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {node_token(SECRET, node)}"}


async def test_get_and_head_never_write(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store)
    for i in range(10):
        for method in ("GET", "HEAD"):
            response = await client.request(method, f"/nodes/made-up-{i}/desired", params={"pool": "worker"})
            assert response.status == 200
    assert store.list_node_status() == []


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/nodes/node-b/status", _report()),
    ("POST", "/nodes/node-b/desired?pool=worker", None),
    ("GET", "/nodes/node-b/desired?pool=worker", None),
], ids=["report", "claim", "ask"])
async def test_a_token_for_node_a_cannot_act_for_node_b(make_client: MakeClient, store: MemoryStore, method: str,
                                                        path: str, body: Any) -> None:
    client = await make_client(store, policy=AccessPolicy(node_secret=SECRET))
    for headers, status in (({}, 403), (_bearer("node-a"), 403), ({"Authorization": "Bearer x"}, 403),
                            (_bearer("node-b"), 200)):
        response = await client.request(method, path, json=body, headers=headers)
        assert response.status == status, headers
    if method == "POST":
        assert [s.name for s in store.list_node_status()] == ["node-b"]


async def test_a_node_is_never_moved_by_its_own_report(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=AccessPolicy(node_secret=SECRET))
    headers = _bearer("node-a")
    assert (await client.post("/nodes/node-a/status", json=_report("worker"), headers=headers)).status == 200
    moved = await client.post("/nodes/node-a/status", json={**_report("infra"), "labels": {"x": "y"}},
                              headers=headers)
    assert moved.status == 200 and (await moved.json())["pool"] == "worker"  # its labels decide, not its word
    claim = await client.post("/nodes/node-a/desired", params={"pool": "infra", "labels": "a=b"}, headers=headers)
    assert claim.status == 200 and (await claim.json())["pool"] == "worker"
    record = store.get_node_status("node-a")
    assert (record.pool, dict(record.labels)) == ("worker", {"node-role.kubernetes.io/worker": ""})


async def test_without_node_secret_pool_tokens_still_guard_reports(make_client: MakeClient,
                                                                  store: MemoryStore) -> None:
    client = await make_client(store, policy=AccessPolicy(tokens={"worker": ("pool-token",)}))
    assert (await client.post("/nodes/n1/status", json=_report())).status == 403
    ok = await client.post("/nodes/n1/status", json=_report(), headers={"Authorization": "Bearer pool-token"})
    assert ok.status == 200


def test_node_token_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET + b"\n")
    assert main(["certs", "node-token", "--secret-file", str(secret), "node-a"]) == 0
    assert capsys.readouterr().out.strip() == node_token(SECRET, "node-a")
    assert main(["certs", "node-token", "--secret-file", str(secret), "Node_A"]) == 1
    short = tmp_path / "short"
    short.write_text("tiny")
    assert main(["certs", "node-token", "--secret-file", str(short), "node-a"]) == 2
    assert main(["certs", "node-token", "--secret-file", str(tmp_path / "missing"), "node-a"]) == 2
    err = capsys.readouterr().err
    assert SECRET.decode() not in err


def test_token_for_a_pool_that_does_not_exist_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = Path(__file__).resolve().parent / "cluster"
    token = tmp_path / "token"
    token.write_text("t0ken\n")
    code = main(["serve", str(cluster), "--listen", "127.0.0.1:0", "--access-log", "off",
                 "--token", f"wroker={token}"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--token wroker" in err and "no pool 'wroker'" in err
    assert json.dumps("t0ken") not in err


async def test_a_relabelled_node_fetches_its_new_pools_config_with_its_own_token(make_client: MakeClient,
                                                                                 store: MemoryStore) -> None:
    """Pools with different tokens: the node holds only worker's. Relabelled into infra, it is handed infra's
    config and fetches it as itself (`?node=`); no other node's token, and no token without `node`, opens it."""
    policy = AccessPolicy(node_secret=SECRET, tokens={"worker": ("worker-token",), "infra": ("infra-token",)})
    client = await make_client(store, policy=policy)
    infra = store.get_pool("infra").current
    assert (await client.post("/nodes/node-a/status", json=_report("worker"), headers=_bearer("node-a"))).status == 200
    relabel(store, "node-a", {"node-role.kubernetes.io/infra": ""}, ["node-role.kubernetes.io/worker"],
            selectors_of(store))
    claim = await client.post("/nodes/node-a/desired", headers=_bearer("node-a"))
    assert (await claim.json())["desiredConfig"] == infra
    worker_token = {"Authorization": "Bearer worker-token"}
    for params, headers, status in (({"node": "node-a"}, _bearer("node-a"), 200),
                                    ({"node": "node-a"}, _bearer("node-b"), 403),
                                    ({"node": "node-b"}, _bearer("node-b"), 403),  # handed node-b nothing
                                    ({}, _bearer("node-a"), 403), ({}, worker_token, 403),
                                    ({"node": "node-a"}, worker_token, 403),
                                    ({"node": "Not_A_Name"}, _bearer("node-a"), 400),
                                    ({}, {"Authorization": "Bearer infra-token"}, 200)):
        response = await client.get(f"/rendered/{infra}", params=params, headers=headers)
        assert response.status == status, (params, headers)
        if status == 200:
            assert (await response.json())["metadata"]["name"] == infra
