"""Node administration over HTTP: only the administrator token opens `/nodes`, `/nodes/{name}` and
`/nodes/{name}/labels`, it opens nothing else; nodes register with labels and their labels decide their pool."""

from __future__ import annotations

from typing import Any

import pytest

from fleet.label_selector import LabelSelector
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.store import MemoryStore
from server.auth import AccessPolicy, node_token
from tests.builders import rendered_config
from tests.server.conftest import MakeClient
from tests.server.helpers import SOURCES, ignition_config, publish

SECRET = b"0123456789abcdef-node-secret"
ADMIN = {"Authorization": "Bearer admin-token"}
GPU = "node-role.kubernetes.io/gpu"
WORKER = "node-role.kubernetes.io/worker"
POLICY = AccessPolicy(tokens={"worker": ("pool-token",)}, node_secret=SECRET, admin_tokens=("admin-token",))


@pytest.fixture
def store() -> MemoryStore:
    s = MemoryStore()
    publish(s, rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=2)))
    publish(s, rendered_config(pool="gpu", sources=SOURCES, config=ignition_config("3.4.0", files=1)))
    publish(s, rendered_config(pool="infra", sources=SOURCES, config=ignition_config("3.4.0", files=3)))
    s.put_node_status(NodeStatus("n1", "worker", "", "", "Done", "", "t0"))
    return s


def _node(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {node_token(SECRET, name)}"}


ROUTES = [("GET", "/nodes", None), ("GET", "/nodes/n1", None), ("PATCH", "/nodes/n1/labels", {GPU: ""})]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=["list", "get", "label"])
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer pool-token"}, _node("n1"),
                                     {"Authorization": "Bearer wrong"}], ids=["none", "pool", "node", "wrong"])
async def test_only_the_admin_token_opens_the_admin_routes(make_client: MakeClient, store: MemoryStore, method: str,
                                                           path: str, body: Any, headers: dict[str, str]) -> None:
    client = await make_client(store, policy=POLICY)
    refused = await client.request(method, path, json=body, headers=headers)
    assert refused.status == 403
    assert store.get_node_status("n1").labels == {WORKER: ""}  # nothing written
    assert (await client.request(method, path, json=body, headers=ADMIN)).status == 200


async def test_without_an_admin_token_file_the_routes_refuse_everyone(make_client: MakeClient,
                                                                      store: MemoryStore) -> None:
    client = await make_client(store)
    assert (await client.get("/nodes", headers=ADMIN)).status == 403


async def test_the_admin_token_opens_nothing_else(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=POLICY)
    assert (await client.get("/config/worker", headers=ADMIN)).status == 403
    assert (await client.post("/nodes/n1/desired", headers=ADMIN)).status == 403
    report = {"pool": "worker", "currentConfig": "", "desiredConfig": "", "state": "Done"}
    assert (await client.post("/nodes/n1/status", json=report, headers=ADMIN)).status == 403


async def test_relabel_moves_the_node_and_the_claim_follows(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=POLICY)
    answer = await (await client.patch("/nodes/n1/labels", json={GPU: ""}, headers=ADMIN)).json()
    assert answer["pool"] == "gpu" and answer["labels"] == {GPU: "", WORKER: ""}
    assert answer["membership"] == {"pools": ["gpu", "worker"], "reason": "", "note": ""}
    claim = await client.post("/nodes/n1/desired", params={"pool": "worker"}, headers=_node("n1"))
    assert (await claim.json())["pool"] == "gpu"
    assert (await claim.json())["desiredConfig"] == store.get_pool("gpu").current
    two = await (await client.patch("/nodes/n1/labels", json={"node-role.kubernetes.io/infra": ""},
                                    headers=ADMIN)).json()
    assert two["pool"] == "" and two["membership"]["reason"] == (
        "node n1 belongs to 2 custom roles, cannot proceed with this Node")
    refused = await client.post("/nodes/n1/desired", headers=_node("n1"))
    assert refused.status == 409 and "2 custom roles" in (await refused.json())["message"]
    pools = await (await client.get("/pools")).json()
    assert [u["name"] for u in pools["unpooled"]] == ["n1"]
    back = await client.patch("/nodes/n1/labels", json={GPU: None, "node-role.kubernetes.io/infra": None},
                              headers=ADMIN)
    assert (await back.json())["pool"] == "worker"


BAD = [([GPU], "$"), ({"Bad Key": "v"}, "$['Bad Key']"), ({"a": 1}, "$['a']"), ({"a": "b c"}, "$['a']")]


@pytest.mark.parametrize(("body", "path"), BAD, ids=["list", "bad-key", "number", "bad-value"])
async def test_bad_label_patches_are_400_naming_the_field(make_client: MakeClient, store: MemoryStore, body: Any,
                                                          path: str) -> None:
    client = await make_client(store, policy=POLICY)
    answer = await client.patch("/nodes/n1/labels", json=body, headers=ADMIN)
    assert answer.status == 400 and (await answer.json())["path"] == path
    assert store.get_node_status("n1").labels == {WORKER: ""}


async def test_unknown_node(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=POLICY)
    assert (await client.get("/nodes/ghost", headers=ADMIN)).status == 404
    assert (await client.patch("/nodes/ghost/labels", json={GPU: ""}, headers=ADMIN)).status == 404
    assert (await client.get("/nodes/Bad_Name", headers=ADMIN)).status == 400


async def test_a_node_registers_with_its_labels_once(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=POLICY)
    first = await client.post("/nodes/n2/desired", params={"pool": "worker", "labels": f"{WORKER}=,{GPU}="},
                              headers=_node("n2"))
    assert (await first.json())["pool"] == "gpu"  # booted from /config/worker, labelled into gpu
    again = await client.post("/nodes/n2/desired", params={"pool": "worker", "labels": f"{WORKER}="},
                              headers=_node("n2"))
    assert (await again.json())["pool"] == "gpu"  # later claims cannot change them
    assert store.get_node_status("n2").labels == {WORKER: "", GPU: ""}
    bad = await client.post("/nodes/n3/desired", params={"pool": "worker", "labels": "no-equals"}, headers=_node("n3"))
    assert bad.status == 400 and (await bad.json())["path"] == "query labels"


async def test_a_node_in_no_pool_is_registered_and_never_handed_an_update(make_client: MakeClient,
                                                                           store: MemoryStore) -> None:
    store.put_pool(PoolRecord("empty", node_selector=LabelSelector({})))
    client = await make_client(store, policy=POLICY)
    claim = await client.post("/nodes/lone/desired", params={"pool": "worker", "labels": "zone=a"},
                              headers=_node("lone"))
    assert claim.status == 409 and (await claim.json())["error"] == "unpooled"
    record = store.get_node_status("lone")
    assert (record.pool, record.desired_config, dict(record.labels)) == ("", "", {"zone": "a"})
    listed = await (await client.get("/nodes", headers=ADMIN)).json()
    assert {n["name"]: n["pool"] for n in listed["items"]} == {"lone": "", "n1": "worker"}
    report = {"pool": "worker", "currentConfig": "", "desiredConfig": "", "state": "Done"}
    assert (await (await client.post("/nodes/lone/status", json=report, headers=_node("lone"))).json())["pool"] == ""


async def test_reports_enter_phases_shown_by_get_node(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=POLICY)
    target = store.get_pool("worker").current
    for phase, detail in (("prepared", ""), ("written", ""), ("reboot-requested", "boot-1")):
        body = {"pool": "worker", "currentConfig": "", "desiredConfig": target, "state": "Working", "phase": phase,
                **({"detail": detail} if detail else {})}
        assert (await client.post("/nodes/n1/status", json=body, headers=_node("n1"))).status == 200
    shown = await (await client.get("/nodes/n1", headers=ADMIN)).json()
    assert [(e["phase"], e.get("detail", "")) for e in shown["timeline"]] == [
        ("prepared", ""), ("written", ""), ("reboot-requested", "boot-1")]
    listed = await (await client.get("/nodes", headers=ADMIN)).json()
    assert listed["items"][0]["phase"]["phase"] == "reboot-requested" and "timeline" not in listed["items"][0]
    bad = {"pool": "worker", "currentConfig": "", "desiredConfig": "", "state": "Working", "phase": "napping"}
    answer = await client.post("/nodes/n1/status", json=bad, headers=_node("n1"))
    assert answer.status == 400 and (await answer.json())["path"] == "$.phase"
