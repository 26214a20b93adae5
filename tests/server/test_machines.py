"""Per-machine answers: `/config/{pool}?mac=...&uuid=...` serves the machine's own config (its pool's merged with
its overlay), with the facts normalised, refusals naming the query field, a tie a 409 naming both documents, an
unknown machine a 404 only when the pool requires a match; the pool's token and address rules first; while the
pool holds its target back the overlay is merged over the older config; on day 2 the rollout hands a node its
machine's config, and with node authentication only that node may fetch it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from fleet.node_status import NodeStatus
from fleet.rendered import machine_config_name, pool_config_of
from fleet.store import MemoryStore
from ignition.dataurl import decode_data_url
from renderer.render import render_cluster
from server.auth import AccessPolicy, node_token, parse_networks
from tests.server.conftest import MakeClient
from tests.server.helpers import ACCEPT_33

MACHINES = Path(__file__).resolve().parents[1] / "renderer" / "machines_cluster"
SECRET = b"0123456789abcdef-node-secret"
MAC_A = "52:54:00:00:00:0a"
UUID_B = "6e5b1c2a-0000-4000-8000-00000000000b"


def _render(tmp_path: Path, *, require: bool = False) -> MemoryStore:
    cluster = tmp_path / "cluster"
    shutil.copytree(MACHINES, cluster)
    if require:
        (cluster / "manifests/pool.yaml").write_text(
            "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfigPool\nmetadata:\n  name: worker\n"
            "  annotations: {machine-config.io/require-machine: \"true\"}\nspec:\n  machineConfigSelector:\n"
            "    matchLabels: {machineconfiguration.openshift.io/role: worker}\n  nodeSelector:\n"
            "    matchLabels: {node-role.kubernetes.io/worker: \"\"}\n")
    store = MemoryStore()
    assert render_cluster(cluster, store=store).ok
    return store


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return _render(tmp_path)


def _hostname(body: bytes) -> bytes:
    files = {f["path"]: f for f in json.loads(body)["storage"]["files"]}
    return decode_data_url(files["/etc/hostname"]["contents"]["source"])


ANSWERS = [
    ("mac and hostname", f"?mac={MAC_A}&hostname=node-a", "node-a"),
    ("mac hyphenated, capitals", "?mac=52-54-00-00-00-0A&hostname=node-a", "node-a"),
    ("mac dotted", "?hostname=node-a&mac=5254.0000.000a", "node-a"),
    ("uuid in capitals", f"?uuid={UUID_B.upper()}&hostname=NODE-B", "node-b"),
    ("other parameters are ignored", f"?uuid={UUID_B}&hostname=node-b&arch=x86_64", "node-b"),
    ("no facts: the pool's config", "", None),
    ("mac alone: node-a's selector wants its hostname too", f"?mac={MAC_A}", None),
    ("unknown mac: the pool's config", "?mac=52:54:00:00:00:99&hostname=node-a", None),
    ("mac of node-a with another hostname", f"?mac={MAC_A}&hostname=node-z", None),
]


@pytest.mark.parametrize(("query", "machine"), [c[1:] for c in ANSWERS], ids=[c[0] for c in ANSWERS])
async def test_the_machine_gets_its_own_config(make_client: MakeClient, store: MemoryStore, query: str,
                                                machine: str | None) -> None:
    client = await make_client(store)
    response = await client.get(f"/config/worker{query}", headers={"Accept": ACCEPT_33})
    assert response.status == 200
    body = await response.read()
    pool = store.get_pool("worker")
    served = response.headers["X-Rendered-Config"]
    if machine is None:
        assert served == pool.current and _hostname(body) == b"localhost\n"
    else:
        assert served == next(m.rendered for m in pool.machines if m.name == machine)
        assert _hostname(body) == f"{machine}\n".encode()
        assert json.loads(body)["ignition"]["version"] == "3.3.0"  # negotiated as for the pool's config
    again = await client.get(f"/config/worker{query}", headers={"Accept": ACCEPT_33,
                                                                 "If-None-Match": response.headers["ETag"]})
    assert again.status == 304


REFUSALS = [
    ("bad mac", "?mac=52:54:00:00:00", 400, "query mac"),
    ("mac twice", f"?mac={MAC_A}&mac={MAC_A}", 400, "query mac"),
    ("bad uuid", "?uuid=nope", 400, "query uuid"),
    ("bad hostname", "?hostname=a_b", 400, "query hostname"),
]


@pytest.mark.parametrize(("query", "status", "path"), [c[1:] for c in REFUSALS], ids=[c[0] for c in REFUSALS])
async def test_unreadable_facts_are_a_4xx_naming_the_field(make_client: MakeClient, store: MemoryStore, query: str,
                                                           status: int, path: str) -> None:
    client = await make_client(store)
    response = await client.get(f"/config/worker{query}")
    assert response.status == status
    assert (await response.json())["path"] == path


async def test_a_pool_requiring_a_match_answers_404_to_an_unknown_machine(make_client: MakeClient,
                                                                           tmp_path: Path) -> None:
    client = await make_client(_render(tmp_path, require=True))
    for query in ("", "?mac=52:54:00:00:00:99"):
        response = await client.get(f"/config/worker{query}")
        assert response.status == 404 and (await response.json())["error"] == "unknown-machine"
        assert b"storage" not in await response.read()
    assert (await client.get(f"/config/worker?mac={MAC_A}&hostname=node-a")).status == 200


async def test_a_tie_is_a_409_naming_both(make_client: MakeClient, store: MemoryStore) -> None:
    record = store.get_pool("worker")
    a, b = record.machines
    store.put_pool(replace(record, machines=(replace(a, selector={"mac": MAC_A}),
                                             replace(b, selector={"uuid": UUID_B}))))
    client = await make_client(store)
    response = await client.get(f"/config/worker?mac={MAC_A}&uuid={UUID_B}")
    assert response.status == 409
    message = (await response.json())["message"]
    assert "node-a" in message and "node-b" in message


async def test_the_pools_token_and_addresses_come_first(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=AccessPolicy(tokens={"worker": ("t0ken",)}))
    refused = await client.get(f"/config/worker?mac={MAC_A}&hostname=node-a")
    assert refused.status == 403 and b"storage" not in await refused.read()
    ok = await client.get(f"/config/worker?mac={MAC_A}&hostname=node-a", headers={"Authorization": "Bearer t0ken"})
    assert ok.status == 200 and _hostname(await ok.read()) == b"node-a\n"
    client = await make_client(store, policy=AccessPolicy(allow=parse_networks(["10.9.9.0/24"], option="--allow")))
    assert (await client.get(f"/config/worker?mac={MAC_A}")).status == 403


async def test_a_held_back_pool_merges_the_overlay_over_the_config_it_serves(make_client: MakeClient,
                                                                             tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    shutil.copytree(MACHINES, cluster)
    store = MemoryStore()
    render_cluster(cluster, store=store)
    old = store.get_pool("worker").current
    base = cluster / "manifests/10-worker-base.yaml"
    base.write_text(base.read_text().replace("welcome%0A", "welcome%20back%0A"))
    render_cluster(cluster, store=store)
    record = store.get_pool("worker")
    assert record.current != old
    store.put_node_status(NodeStatus("node-x", "worker", old, record.current, "Working"))  # mid-rollout at old
    client = await make_client(store)
    response = await client.get(f"/config/worker?mac={MAC_A}&hostname=node-a", headers={"Accept": ACCEPT_33})
    assert response.status == 200
    node_a = next(m for m in record.machines if m.name == "node-a")
    assert response.headers["X-Rendered-Config"] == machine_config_name(old, node_a.overlay_hash)
    body = json.loads(await response.read())
    files = {f["path"]: decode_data_url(f["contents"]["source"]) for f in body["storage"]["files"]}
    assert files["/etc/motd"] == b"welcome\n" and files["/etc/hostname"] == b"node-a\n"


async def test_day_two_the_node_is_handed_its_machines_config(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=AccessPolicy(node_secret=SECRET))
    record = store.get_pool("worker")
    node_a = next(m for m in record.machines if m.name == "node-a")

    def bearer(node: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {node_token(SECRET, node)}"}

    answer = await client.post("/nodes/node-a/desired?pool=worker", headers=bearer("node-a"))
    assert (await answer.json())["desiredConfig"] == node_a.rendered
    assert store.get_node_status("node-a").labels == node_a.labels  # registered with its document's labels
    assert node_a.labels["topology.kubernetes.io/zone"] == "rack-1"
    other = await client.post("/nodes/node-c/desired?pool=worker", headers=bearer("node-c"))
    assert (await other.json())["desiredConfig"] == record.current  # a node with no machine document
    assert pool_config_of(node_a.rendered) == record.current
    mine = await client.get(f"/rendered/{node_a.rendered}", headers=bearer("node-a"))
    assert mine.status == 200 and json.loads(await mine.read())["metadata"]["name"] == node_a.rendered
    for headers in (bearer("node-b"), bearer("node-c"), {}):  # another node's credential, or none: refused
        refused = await client.get(f"/rendered/{node_a.rendered}", headers=headers)
        assert refused.status == 403 and b"storage" not in await refused.read()
    assert (await client.get(f"/rendered/{record.current}")).status == 200  # the pool's config as before


async def test_the_pool_shows_each_machine_with_its_pool_config_and_overlay(make_client: MakeClient,
                                                                             store: MemoryStore) -> None:
    record = store.get_pool("worker")
    client = await make_client(store, policy=AccessPolicy(tokens={"worker": ("t0ken",)}))
    shown = await (await client.get("/pools/worker", headers={"Authorization": "Bearer t0ken"})).json()
    machines = {m["name"]: m for m in shown["status"]["machines"]}
    for entry in record.machines:
        assert machines[entry.name] == {"name": entry.name, "node": entry.node, "source": entry.source,
                                        "config": entry.rendered, "poolConfig": record.current,
                                        "overlay": entry.overlay_hash}
    listed = await (await client.get("/pools")).json()  # without the pool's token: no machines
    assert all("machines" not in item["status"] for item in listed["items"])


async def test_the_node_listing_shows_the_pool_config_and_overlay(make_client: MakeClient, store: MemoryStore) -> None:
    record = store.get_pool("worker")
    node_a = next(m for m in record.machines if m.name == "node-a")
    store.put_node_status(NodeStatus("node-a", "worker", node_a.rendered, node_a.rendered, "Done"))
    store.put_node_status(NodeStatus("node-c", "worker", record.current or "", record.current or "", "Done"))
    admin = {"Authorization": "Bearer admin-token"}
    client = await make_client(store, policy=AccessPolicy(admin_tokens=("admin-token",)))
    one = await (await client.get("/nodes/node-a", headers=admin)).json()
    assert (one["poolConfig"], one["overlay"]) == (record.current, node_a.overlay_hash)
    listed = {n["name"]: n for n in (await (await client.get("/nodes", headers=admin)).json())["items"]}
    assert (listed["node-a"]["poolConfig"], listed["node-a"]["overlay"]) == (record.current, node_a.overlay_hash)
    assert "poolConfig" not in listed["node-c"] and "overlay" not in listed["node-c"]


async def test_a_node_named_is_under_the_address_rules_and_without_node_auth_the_pools_token(
        make_client: MakeClient, store: MemoryStore) -> None:
    bearer = {"Authorization": f"Bearer {node_token(SECRET, 'node-a')}"}
    walled = AccessPolicy(allow=parse_networks(["10.9.9.0/24"], option="--allow"), node_secret=SECRET)
    client = await make_client(store, policy=walled)
    refused = await client.get("/config/worker?node=node-a", headers=bearer)
    assert refused.status == 403 and b"storage" not in await refused.read()
    client = await make_client(store, policy=AccessPolicy(tokens={"worker": ("t0ken",)}))
    assert (await client.get("/config/worker?node=node-a", headers=bearer)).status == 403
    ok = await client.get("/config/worker?node=node-a", headers={"Authorization": "Bearer t0ken"})
    assert ok.status == 200 and _hostname(await ok.read()) == b"node-a\n"


NODE_REFUSALS = [
    ("twice", "?node=node-a&node=node-a", 400),
    ("not a name", "?node=Node_A", 400),
    ("beside facts", "?node=node-a&uuid=6e5b1c2a-0000-4000-8000-00000000000b", 400),
]


@pytest.mark.parametrize(("query", "status"), [c[1:] for c in NODE_REFUSALS], ids=[c[0] for c in NODE_REFUSALS])
async def test_an_unreadable_node_is_a_400_naming_it(make_client: MakeClient, store: MemoryStore, query: str,
                                                     status: int) -> None:
    client = await make_client(store, policy=AccessPolicy(node_secret=SECRET))
    response = await client.get(f"/config/worker{query}",
                                headers={"Authorization": f"Bearer {node_token(SECRET, 'node-a')}"})
    assert response.status == status and (await response.json())["path"] == "query node"
