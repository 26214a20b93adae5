"""Every route and status code of the server, over a real store (aiohttp test client, in process)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from fleet.directory_store import DirectoryStore
from fleet.rendered import PoolRecord
from fleet.store import MemoryStore
from server.auth import AccessPolicy, parse_networks
from tests.builders import rendered_config
from tests.server.conftest import RELOADER, MakeClient
from tests.server.helpers import ACCEPT_33, ACCEPT_36, SOURCES, ignition_config, publish

IGN = "application/vnd.coreos.ignition+json"
Client = TestClient


@pytest.fixture
def store() -> MemoryStore:
    s = MemoryStore()
    publish(s, rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=3)))
    publish(s, rendered_config(pool="master", sources=SOURCES, config=ignition_config("3.3.0",
                                                        extra={"kernelArguments": {"shouldNotExist": ["quiet"]}})))
    return s


# (id, method, path, headers, expected status)
STATUS_CASES = [
    ("ok-2.14", "GET", "/config/worker", {"Accept": ACCEPT_33}, 200),
    ("ok-head", "HEAD", "/config/worker", {"Accept": ACCEPT_33}, 200),
    ("ok-newest", "GET", "/config/worker", {"Accept": ACCEPT_36}, 200),
    ("ok-curl-default", "GET", "/config/worker", {"Accept": "*/*"}, 200),
    ("unknown-pool", "GET", "/config/nope", {"Accept": ACCEPT_33}, 404),
    ("unknown-pool-head", "HEAD", "/config/nope", {}, 404),
    ("nested-path", "GET", "/config/a/worker", {}, 404),
    ("bad-pool-name", "GET", "/config/Worker_1", {}, 400),
    ("dotdot", "GET", "/config/../etc/passwd", {}, 404),  # "/config/.." is "/", the fleet page
    ("malformed-accept", "GET", "/config/worker", {"Accept": f"{IGN};version=4.0.0"}, 400),
    ("spec-2", "GET", "/config/worker", {"Accept": f"{IGN};version=2.2.0"}, 406),
    ("cannot-express", "GET", "/config/master", {"Accept": f"{IGN};version=3.2.0"}, 406),
    ("can-express", "GET", "/config/master", {"Accept": ACCEPT_33}, 200),
    ("post-config", "POST", "/config/worker", {}, 405),
    ("put-healthz", "PUT", "/healthz", {}, 405),
    ("healthz", "GET", "/healthz", {}, 200),
    ("metrics", "GET", "/metrics", {}, 200),
    ("pools", "GET", "/pools", {}, 200),
    ("pool", "GET", "/pools/worker", {}, 200),
    ("pool-unknown", "GET", "/pools/nope", {}, 404),
    ("unknown-route", "GET", "/nothing", {}, 404),
    ("rendered-unknown", "GET", "/rendered/rendered-worker-0", {}, 404),
    ("rendered-bad-name", "GET", "/rendered/A..B", {}, 400),
]


@pytest.mark.parametrize(("method", "path", "headers", "status"), [c[1:] for c in STATUS_CASES],
                         ids=[c[0] for c in STATUS_CASES])
async def test_status_codes(make_client: MakeClient, store: MemoryStore, method: str, path: str,
                            headers: dict[str, str], status: int) -> None:
    client = await make_client(store)
    response = await client.request(method, path, headers=headers)
    assert response.status == status, await response.text()
    if status in (400, 406) and path.startswith("/config/"):
        assert (await response.json())["error"]


async def test_served_config_is_translated_and_has_the_appended_files(make_client: MakeClient,
                                                                       store: MemoryStore) -> None:
    client = await make_client(store)
    response = await client.get("/config/worker", headers={"Accept": ACCEPT_33, "Accept-Encoding": "identity"})
    body = await response.read()
    config = json.loads(body)
    assert config["ignition"]["version"] == "3.3.0"
    paths = [f["path"] for f in config["storage"]["files"]]
    assert paths[:3] == ["/etc/demo/file0.conf", "/etc/demo/file1.conf", "/etc/demo/file2.conf"]
    assert paths[3:] == ["/etc/machine-config-daemon/node-annotations.json", "/etc/mcs-machine-config-content.json",
                         "/etc/ignition-machine-config-encapsulated.json"]  # MCO server.go getAppenders
    assert response.headers["Content-Type"] == "application/json"
    assert int(response.headers["Content-Length"]) == len(body)
    assert response.headers["X-Rendered-Config"] == store.get_pool("worker").current
    default = json.loads(await (await client.get("/config/worker")).read())
    assert default["ignition"]["version"] == "3.4.0"  # no Ignition Accept entry: the render's own spec


async def test_default_version_setting(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, default_version="3.1.0")
    config = json.loads(await (await client.get("/config/worker", headers={"Accept": "*/*"})).read())
    assert config["ignition"]["version"] == "3.1.0"


async def test_head_matches_get(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store)
    get = await client.get("/config/worker", headers={"Accept": ACCEPT_33})
    head = await client.head("/config/worker", headers={"Accept": ACCEPT_33})
    assert await head.read() == b""
    for name in ("Content-Length", "ETag", "Content-Type"):
        assert head.headers[name] == get.headers[name]


async def test_etag_and_if_none_match(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store)
    first = await client.get("/config/worker", headers={"Accept": ACCEPT_33})
    etag = first.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"')
    for inm in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = await client.get("/config/worker", headers={"Accept": ACCEPT_33, "If-None-Match": inm})
        assert again.status == 304, inm
        assert await again.read() == b""
        assert again.headers["ETag"] == etag
    other = await client.get("/config/worker", headers={"Accept": ACCEPT_36, "If-None-Match": etag})
    assert other.status == 200  # another spec version is another representation
    assert other.headers["ETag"] != etag
    stale = await client.get("/config/worker", headers={"Accept": ACCEPT_33, "If-None-Match": '"stale"'})
    assert stale.status == 200


@pytest.mark.parametrize(("accept_encoding", "gzipped"), [
    ("gzip", True), ("gzip, deflate, br", True), ("br;q=1.0, gzip;q=0.5", True), ("gzip;q=0", False),
    ("identity", False), ("deflate", False), (None, False),
], ids=["gzip", "list", "q", "q0-refused", "identity-ignition", "deflate-only", "none"])
async def test_gzip(make_client: MakeClient, store: MemoryStore, accept_encoding: str | None, gzipped: bool) -> None:
    client = await make_client(store)
    plain = await (await client.get("/config/worker", headers={"Accept": ACCEPT_33,
                                                                "Accept-Encoding": "identity"})).read()
    headers = {"Accept": ACCEPT_33}
    if accept_encoding is not None:
        headers["Accept-Encoding"] = accept_encoding
    response = await client.get("/config/worker", headers=headers, auto_decompress=False,
                                skip_auto_headers=["Accept-Encoding"])
    raw = await response.read()
    assert int(response.headers["Content-Length"]) == len(raw)
    if gzipped:
        assert response.headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(raw) == plain
        assert response.headers["ETag"].endswith('-gzip"')
    else:
        assert "Content-Encoding" not in response.headers
        assert raw == plain


async def test_not_ready_is_503(make_client: MakeClient) -> None:
    store = MemoryStore()
    store.put_pool(PoolRecord(name="worker"))  # a pool whose first render failed: no target yet
    client = await make_client(store)
    assert (await client.get("/config/worker")).status == 503
    assert (await client.get("/healthz")).status == 503
    assert (await client.get("/config/other")).status == 404


async def test_store_failure_is_503(make_client: MakeClient, tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "store")
    publish(store, rendered_config(pool="worker", sources=SOURCES, config=ignition_config()))
    client = await make_client(store)
    shutil.rmtree(tmp_path / "store" / "pools")
    (tmp_path / "store" / "pools").write_text("not a directory")
    for path in ("/pools", "/pools/worker"):
        response = await client.get(path)
        assert response.status == 503, path
        assert (await response.json())["error"] == "store"
    assert (await client.get("/config/worker", headers={"Accept": ACCEPT_33})).status == 200  # snapshot kept
    await client.app[RELOADER].poll_once()
    assert (await client.get("/config/worker", headers={"Accept": ACCEPT_33})).status == 200
    shutil.rmtree(tmp_path / "store" / "rendered")
    (tmp_path / "store" / "rendered").write_text("x")
    response = await client.get("/rendered/rendered-worker-abc")
    assert response.status == 503


TOKENS = {"worker": ("s3cret", "n3xt")}


@pytest.mark.parametrize(("authorization", "status"), [
    (None, 403), ("Bearer wrong", 403), ("Basic s3cret", 403), ("Bearer", 403),
    ("Bearer s3cret", 200), ("bearer n3xt", 200),
], ids=["missing", "wrong", "not-bearer", "empty", "ok", "rotation-overlap"])
async def test_tokens(make_client: MakeClient, store: MemoryStore, authorization: str | None, status: int) -> None:
    client = await make_client(store, policy=AccessPolicy(tokens=TOKENS))
    headers = {"Accept": ACCEPT_33}
    if authorization is not None:
        headers["Authorization"] = authorization
    response = await client.get("/config/worker", headers=headers)
    assert response.status == status
    body = await response.read()
    if status == 403:
        assert b"storage" not in body and b"ignition" not in body
    assert (await client.get("/config/master", headers={"Accept": ACCEPT_33})).status == 200  # no token for master


async def test_token_for_every_pool(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=AccessPolicy(all_pools_tokens=("fleet",)))
    assert (await client.get("/config/master", headers={"Accept": ACCEPT_33})).status == 403
    ok = await client.get("/config/master", headers={"Accept": ACCEPT_33, "Authorization": "Bearer fleet"})
    assert ok.status == 200


@pytest.mark.parametrize(("allow", "deny", "status"), [
    ((), ("127.0.0.0/8",), 403),
    ((), ("10.0.0.0/8",), 200),
    (("10.0.0.0/8",), (), 403),
    (("127.0.0.1/32", "::1/128"), (), 200),
    (("127.0.0.0/8",), ("127.0.0.1",), 403),
], ids=["denied", "other-denied", "not-allowed", "allowed", "deny-beats-allow"])
async def test_cidr(make_client: MakeClient, store: MemoryStore, allow: tuple[str, ...], deny: tuple[str, ...],
                    status: int) -> None:
    policy = AccessPolicy(allow=parse_networks(allow, option="--allow"), deny=parse_networks(deny, option="--deny"))
    client = await make_client(store, policy=policy)
    for path in ("/config/worker", "/pools", f"/rendered/{store.get_pool('worker').current}", "/healthz",
                 "/metrics", "/pools/worker", "/nodes/n1/desired?pool=worker"):  # every route, not only /config
        response = await client.get(path, headers={"Accept": ACCEPT_33})
        assert response.status == status, path
        if status == 403:
            assert b"storage" not in await response.read()


async def test_rendered_endpoint(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=AccessPolicy(tokens=TOKENS))
    name = store.get_pool("worker").current
    assert (await client.get(f"/rendered/{name}")).status == 403
    response = await client.get(f"/rendered/{name}", headers={"Authorization": "Bearer s3cret"})
    assert response.status == 200
    assert await response.read() == store.get_rendered(name).to_json_bytes()


def _report(pool: str = "worker", state: str = "Done", **extra: Any) -> dict[str, Any]:
    return {"pool": pool, "currentConfig": "rendered-worker-a", "desiredConfig": "rendered-worker-a",
            "state": state, "message": "", **extra}


@pytest.mark.parametrize(("body", "status", "path"), [
    (_report(), 200, None),
    (_report(state="Rebooting"), 400, "$.state"),
    ({"pool": "worker"}, 400, "$.currentConfig"),
    (_report(message=5), 400, "$.message"),
    ([1, 2], 400, "$"),
    (b"{not json", 400, "$"),
    (_report(pool="nope"), 404, "$.pool"),
    (_report(pool=""), 400, "$.pool"),
], ids=["ok", "bad-state", "missing-field", "message-type", "not-object", "not-json", "unknown-pool", "empty-pool"])
async def test_status_report_validation(make_client: MakeClient, store: MemoryStore, body: Any, status: int,
                                        path: str | None) -> None:
    client = await make_client(store)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = await client.post("/nodes/node-1/status", data=data)
    assert response.status == status
    if path is not None:
        assert (await response.json())["path"] == path


async def test_status_report_needs_the_pool_token(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store, policy=AccessPolicy(tokens=TOKENS))
    assert (await client.post("/nodes/node-1/status", json=_report())).status == 403
    ok = await client.post("/nodes/node-1/status", json=_report(), headers={"Authorization": "Bearer s3cret"})
    assert ok.status == 200
    assert (await client.post("/nodes/node-2/status", json=_report("master"))).status == 200


async def test_status_body_is_bounded(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store)
    response = await client.post("/nodes/node-1/status", json=_report(message="x" * 100_000))
    assert response.status == 413


async def test_pool_status_and_persistence(make_client: MakeClient, tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "store")
    target = rendered_config(pool="worker", sources=SOURCES, config=ignition_config())
    publish(store, target)
    client = await make_client(store)
    reports = {
        "node-a": _report(currentConfig=target.name, desiredConfig=target.name),
        "node-b": _report(currentConfig="rendered-worker-old", desiredConfig=target.name, state="Working"),
        "node-c": _report(currentConfig="rendered-worker-old", desiredConfig=target.name, state="Degraded",
                          message="disk full"),
    }
    for node, body in reports.items():
        assert (await client.post(f"/nodes/{node}/status", json=body)).status == 200
    await client.close()

    restarted = await make_client(DirectoryStore(tmp_path / "store"))  # a new process over the same store
    pool = await (await restarted.get("/pools/worker")).json()
    status = pool["status"]
    assert (status["machineCount"], status["updatedMachineCount"], status["readyMachineCount"],
            status["degradedMachineCount"], status["unavailableMachineCount"]) == (3, 1, 1, 1, 2)
    assert pool["spec"]["configuration"]["name"] == target.name
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Updated"]["status"] == "False"
    # node-c failed on its way to the target: the automatic pause (on by default) stops the rollout, naming it
    assert (conditions["Updating"]["status"], conditions["Updating"]["reason"]) == ("False", "RolloutPaused")
    assert status["rolloutPause"]["node"] == "node-c" and "disk full" in status["rolloutPause"]["reason"]
    assert conditions["NodeDegraded"]["status"] == "True"
    assert 'Node node-c is reporting: "disk full"' in conditions["NodeDegraded"]["message"]
    assert conditions["Degraded"]["status"] == "True"
    assert conditions["RenderDegraded"]["status"] == "False"
    listing = await (await restarted.get("/pools")).json()
    assert [p["metadata"]["name"] for p in listing["items"]] == ["worker"]


async def test_render_degraded_is_visible(make_client: MakeClient) -> None:
    store = MemoryStore()
    publish(store, rendered_config(pool="worker", sources=SOURCES, config=ignition_config()), render_degraded="manifests/x.yaml:3:5: path not absolute")
    client = await make_client(store)
    assert (await client.get("/config/worker", headers={"Accept": ACCEPT_33})).status == 200  # last good render
    pool = await (await client.get("/pools/worker")).json()
    conditions = {c["type"]: c for c in pool["status"]["conditions"]}
    assert conditions["RenderDegraded"]["status"] == "True"
    assert "path not absolute" in conditions["RenderDegraded"]["message"]
    assert conditions["Degraded"]["status"] == "True"


async def test_desired_hands_out_within_max_unavailable(make_client: MakeClient) -> None:
    store = MemoryStore()
    old = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=1))
    new = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=2))
    publish(store, new, max_unavailable=1)
    client = await make_client(store)
    for node in ("node-a", "node-b"):
        body = _report(currentConfig=old.name, desiredConfig=old.name)
        assert (await client.post(f"/nodes/{node}/status", json=body)).status == 200
    for _ in range(3):  # asking (GET) claims nothing: node-a, first in the order, may still go; node-b waits its turn
        for node, answer in (("node-a", new.name), ("node-b", old.name)):
            asked = await (await client.get(f"/nodes/{node}/desired", params={"pool": "worker"})).json()
            assert asked == {"desiredConfig": answer, "pool": "worker"}
    first = await (await client.post("/nodes/node-a/desired", params={"pool": "worker"})).json()
    assert first == {"desiredConfig": new.name, "pool": "worker"}
    second = await (await client.post("/nodes/node-b/desired")).json()  # pool taken from its last report
    assert second == {"desiredConfig": old.name, "pool": "worker"}  # node-a is now busy: hold node-b back
    again = await (await client.post("/nodes/node-a/desired")).json()
    assert again["desiredConfig"] == new.name
    assert (await client.post("/nodes/node-z/desired")).status == 400
    assert (await client.post("/nodes/node-z/desired", params={"pool": "nope"})).status == 404


async def test_metrics_count_requests(make_client: MakeClient, store: MemoryStore) -> None:
    client = await make_client(store)
    await client.get("/config/worker", headers={"Accept": ACCEPT_33})
    await client.get("/config/nope")
    text = await (await client.get("/metrics")).text()
    assert 'mco_config_requests_total{pool="worker",status="200",version="3.3.0"} 1.0' in text
    assert 'mco_config_requests_total{pool="-",status="404",version="-"} 1.0' in text
    assert "mco_config_bytes_served_total" in text
    assert "mco_render_duration_seconds" in text


async def test_unreadable_store_at_start_is_503(make_client: MakeClient, tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "store")
    shutil.rmtree(tmp_path / "store" / "pools")
    (tmp_path / "store" / "pools").write_text("not a directory")
    client = await make_client(store)
    response = await client.get("/config/worker", headers={"Accept": ACCEPT_33})
    assert response.status == 503
    assert "pools" in (await response.json())["message"]
    assert (await client.get("/healthz")).status == 503
