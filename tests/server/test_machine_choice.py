"""Hostile and odd queries naming a machine on `/config/{pool}` (server/machine_choice.py): every unreadable
fact a 400 naming its field without echoing it, keys matched as matchbox matches labels (case-sensitive, other
parameters ignored), and a machine's facts never a credential when the pool has a token, whatever was answered
before to a request that carried one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fleet.store import MemoryStore
from renderer.render import render_cluster
from server.auth import AccessPolicy
from tests.server.conftest import MakeClient

MACHINES = Path(__file__).resolve().parents[1] / "renderer" / "machines_cluster"
MAC_A = "52:54:00:00:00:0a"
NODE_A = f"?mac={MAC_A}&hostname=node-a"
HUGE = "5" * 4000


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    cluster = tmp_path / "cluster"
    shutil.copytree(MACHINES, cluster)
    store = MemoryStore()
    assert render_cluster(cluster, store=store).ok
    return store


def _served(response_headers: object, store: MemoryStore) -> str:
    served = response_headers["X-Rendered-Config"]  # type: ignore[index]
    names = {m.rendered: m.name for m in store.get_pool("worker").machines}
    return names.get(served, "pool")


HOSTILE = [
    ("mac twice, different values", f"?mac={MAC_A}&mac=52:54:00:00:00:0b&hostname=node-a", "query mac"),
    ("hostname twice, same name in two cases", "?hostname=node-a&hostname=NODE-A", "query hostname"),
    ("serial twice, one empty", "?serial=SN-1&serial=", "query serial"),
    ("mac twice, the first empty", f"?mac=&mac={MAC_A}&hostname=node-a", "query mac"),
    ("huge mac", f"?mac={HUGE}", "query mac"),
    ("huge uuid", f"?uuid={HUGE}", "query uuid"),
    ("huge hostname", f"?hostname={HUGE}", "query hostname"),
    ("huge serial", f"?serial={HUGE}", "query serial"),
    ("non-ASCII hostname", "?hostname=n%C3%B6de-a", "query hostname"),
    ("fullwidth digits in a mac", "?mac=%EF%BC%95%EF%BC%92:54:00:00:00:0a", "query mac"),
    ("NUL in a serial", "?serial=SN%001", "query serial"),
    ("newline in a serial", "?serial=SN%0A1", "query serial"),
    ("invalid UTF-8", "?hostname=%FF%FE", "query hostname"),
    ("empty node", "?node=", "query node"),
    ("node beside a mac", f"?node=node-a&mac={MAC_A}", "query node"),
]


@pytest.mark.parametrize(("query", "path"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE])
async def test_a_hostile_fact_is_a_400_naming_it_and_not_echoed(make_client: MakeClient, store: MemoryStore,
                                                                query: str, path: str) -> None:
    client = await make_client(store)
    response = await client.get(f"/config/worker{query}")
    body = await response.read()
    assert response.status == 400, body
    assert (await response.json())["path"] == path
    assert HUGE.encode() not in body and b"storage" not in body and len(body) < 1024


# An empty value is a fact not given: matchbox's own iPXE chain URL sends `hostname=${hostname}&serial=${serial}`
# (matchbox/http/ipxe.go ipxeBootstrap), empty on a machine DHCP gave no name or without a serial, and matchbox
# reads an empty value as a label no selector matches (storagepb/group.go Matches compares with the missing
# label's ""), an empty `mac` as none (parse.go labelsFromRequest drops a MAC that does not parse).
EMPTY = [
    ("matchbox's iPXE URL, hostname and serial empty",
     "?uuid=&mac=52-54-00-00-00-0a&domain=&hostname=&serial=", "pool"),
    ("empty serial beside the facts of node-a", f"{NODE_A}&serial=", "node-a"),
    ("empty uuid beside the facts of node-a", f"{NODE_A}&uuid=", "node-a"),
    ("every fact empty", "?mac=&uuid=&serial=&hostname=", "pool"),
]


@pytest.mark.parametrize(("query", "machine"), [c[1:] for c in EMPTY], ids=[c[0] for c in EMPTY])
async def test_an_empty_fact_is_a_fact_not_given(make_client: MakeClient, store: MemoryStore, query: str,
                                                 machine: str) -> None:
    client = await make_client(store)
    response = await client.get(f"/config/worker{query}")
    assert response.status == 200, await response.read()
    assert _served(response.headers, store) == machine


# matchbox matches query parameters as labels: keys exactly as written (matchbox/http/parse.go labelsFromRequest
# keeps `MAC` as the key `MAC`, TestLabelsFromRequest "parse and set MAC regardless of query argument case", and
# a group's `mac` selector then does not match it, storagepb/group.go Matches), other parameters add labels no
# selector here names.
IGNORED = [
    ("capitalised keys", f"?MAC={MAC_A}&HOSTNAME=node-a", "pool"),
    ("unknown parameters beside the facts", f"{NODE_A}&arch=x86_64&os=installed&mac_=1", "node-a"),
    ("unknown parameter repeated", f"{NODE_A}&arch=a&arch=b", "node-a"),
    ("a fact in the fragment is not a fact", f"?hostname=node-a#mac={MAC_A}", "pool"),
]


@pytest.mark.parametrize(("query", "machine"), [c[1:] for c in IGNORED], ids=[c[0] for c in IGNORED])
async def test_only_the_selector_keys_name_a_machine(make_client: MakeClient, store: MemoryStore, query: str,
                                                     machine: str) -> None:
    client = await make_client(store)
    response = await client.get(f"/config/worker{query}")
    assert response.status == 200
    assert _served(response.headers, store) == machine


async def test_a_mac_is_never_a_credential(make_client: MakeClient, store: MemoryStore) -> None:
    """With a pool token set, the facts get nothing without it: not before, not after a request carrying the token
    was answered the same machine's config (whatever the server keeps of that answer), not with the facts sent as
    the token."""
    client = await make_client(store, policy=AccessPolicy(tokens={"worker": ("t0ken",)}))
    good = {"Authorization": "Bearer t0ken"}
    for headers in ({}, {"Authorization": f"Bearer {MAC_A}"}, {"Authorization": "Bearer node-a"}):
        refused = await client.get(f"/config/worker{NODE_A}", headers=headers)
        assert refused.status == 403 and b"storage" not in await refused.read()
    ok = await client.get(f"/config/worker{NODE_A}", headers=good)
    assert ok.status == 200 and _served(ok.headers, store) == "node-a"
    etag = ok.headers["ETag"]
    for headers in ({}, {"Authorization": "Bearer t0ken2"}, {"If-None-Match": etag},
                    {"Authorization": f"Bearer {MAC_A}", "If-None-Match": etag}):
        for method in (client.get, client.head):
            refused = await method(f"/config/worker{NODE_A}", headers=headers)
            assert refused.status == 403, (headers, refused.status)
            assert "X-Rendered-Config" not in refused.headers and "ETag" not in refused.headers
            assert b"storage" not in await refused.read()
    again = await client.get(f"/config/worker{NODE_A}", headers={**good, "If-None-Match": etag})
    assert again.status == 304


async def test_a_tie_names_both_documents_whichever_order_the_facts_come_in(make_client: MakeClient,
                                                                             tmp_path: Path) -> None:
    """matchbox picks one of two equally specific groups by its sort (storagepb/group.go ByReqs, server.go
    SelectGroup); here it is a 409 naming both, the same for every order of the query's parameters."""
    cluster = tmp_path / "cluster"
    shutil.copytree(MACHINES, cluster)
    path = cluster / "manifests/machines.yaml"
    path.write_text(path.read_text() + "\n---\napiVersion: machine-config.io/v1\nkind: Machine\nmetadata:\n"
                    "  name: by-serial\nspec:\n  selector:\n    serial: SN-7\n    hostname: node-z\n"
                    "  labels:\n    node-role.kubernetes.io/worker: \"\"\n  templates: [hostname]\n"
                    "---\napiVersion: machine-config.io/v1\nkind: Machine\nmetadata:\n"
                    "  name: by-mac\nspec:\n  selector:\n    mac: \"52:54:00:00:00:0c\"\n    serial: SN-7\n"
                    "  labels:\n    node-role.kubernetes.io/worker: \"\"\n  templates: [hostname]\n"
                    "  variables: {hostname: node-y}\n")
    store = MemoryStore()
    assert render_cluster(cluster, store=store).ok
    client = await make_client(store)
    for query in ("?serial=SN-7&hostname=node-z&mac=52:54:00:00:00:0c",
                  "?mac=52-54-00-00-00-0C&hostname=NODE-Z&serial=SN-7"):
        response = await client.get(f"/config/worker{query}")
        assert response.status == 409
        answer = await response.json()
        assert "by-mac" in answer["message"] and "by-serial" in answer["message"]
        assert b"storage" not in await response.read()
    one = await client.get("/config/worker?serial=SN-7&hostname=node-z")
    assert one.status == 200 and _served(one.headers, store) == "by-serial"
