"""Every client mistake is a 4xx naming the field, with no server path in the
answer or the log; the smaller rules (protected /pools details, names ending in a newline, duplicate
Authorization headers, Accept-Encoding) hold on every route. Raw sockets against a real server."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest

from fleet.directory_store import DirectoryStore
from server.auth import AccessPolicy
from server.settings import ServerSettings
from tests.server.helpers import ACCEPT_33
from tests.server.live import LiveServer, demo_store, exchange, status_of


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    root = tmp_path_factory.mktemp("store")
    store = DirectoryStore(root)
    source = demo_store()
    for name in source.list_rendered():
        store.put_rendered(source.get_rendered(name))
    for pool in source.list_pools():
        store.put_pool(source.get_pool(pool))
    settings = ServerSettings(cluster_dir=None, store_dir=root, listen=("127.0.0.1", 0), access_log=None,
                              policy=AccessPolicy(tokens={"master": ("tok",)}))
    with LiveServer(settings, store) as server:
        server.root = root  # type: ignore[attr-defined]
        yield server


def _answer(live: LiveServer, data: bytes) -> tuple[int, dict[str, str], bytes]:
    raw = exchange(live.port(), data)
    head, _, body = raw.partition(b"\r\n\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in
               (line.partition(":") for line in head.decode("latin-1").split("\r\n")[1:])}
    return status_of(raw), headers, body


def _post(path: str, body: bytes, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: x", "Connection: close", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + body


def _get(path: str, *headers: str) -> bytes:
    return ("\r\n".join([f"GET {path} HTTP/1.1", "Host: x", "Connection: close", *headers]) + "\r\n\r\n").encode(
        "utf-8", "surrogateescape")


REPORT = json.dumps({"pool": "worker", "currentConfig": "", "desiredConfig": "", "state": "Done"}).encode()
LONG = "n" * 300

CASES = [
    ("deep-nesting", _post("/nodes/n1/status", b'{"pool":' + b"[" * 30_000 + b"]" * 30_000 + b"}"), 400, "$"),
    ("gzip-on-plain-body", _post("/nodes/n1/status", REPORT, "Content-Encoding: gzip"), 400,
     "header Content-Encoding"),
    ("deflate-on-plain-body", _post("/nodes/n1/status", REPORT, "Content-Encoding: deflate"), 400,
     "header Content-Encoding"),
    ("bad-pool-in-body", _post("/nodes/n1/status", REPORT.replace(b'"worker"', b'"Bad Pool"')), 400, "$.pool"),
    ("newline-pool-in-body", _post("/nodes/n1/status", REPORT.replace(b'"worker"', b'"worker\\n"')), 400, "$.pool"),
    ("long-pool-in-body", _post("/nodes/n1/status", REPORT.replace(b'"worker"', b'"' + b"p" * 300 + b'"')), 400,
     "$.pool"),
    ("long-node-report", _post(f"/nodes/{LONG}/status", REPORT), 400, "path name"),
    ("long-node-claim", _post(f"/nodes/{LONG}/desired?pool=worker", b""), 400, "path name"),
    ("long-node-ask", _get(f"/nodes/{LONG}/desired?pool=worker"), 400, "path name"),
    ("long-rendered", _get(f"/rendered/{LONG}"), 400, "path name"),
    ("long-pool", _get(f"/pools/{LONG}"), 400, "path pool"),
    ("newline-node", _post("/nodes/n1%0A/status", REPORT), 400, "path name"),
    ("non-ascii-auth-config", _get("/config/master", "Authorization: Bearer t\u00f6k"), 400, "header Authorization"),
    ("non-ascii-auth-rendered", _get("/rendered/x", "Authorization: Bearer t\u00f6k"), 400, "header Authorization"),
    ("non-ascii-auth-pool", _get("/pools/master", "Authorization: Bearer t\u00f6k"), 400, "header Authorization"),
    ("non-ascii-auth-report", _post("/nodes/n1/status", REPORT, "Authorization: Bearer t\u00f6k"), 400,
     "header Authorization"),
    ("non-ascii-auth-claim", _post("/nodes/n1/desired?pool=worker", b"", "Authorization: Bearer \udcff"), 400,
     "header Authorization"),
    ("two-auth-config", _get("/config/master", "Authorization: Bearer tok", "Authorization: Bearer tok"), 400,
     "header Authorization"),
    ("two-auth-pool", _get("/pools/master", "Authorization: Bearer tok", "Authorization: Bearer tok"), 400,
     "header Authorization"),
    ("two-auth-report", _post("/nodes/n1/status", REPORT, "Authorization: Bearer a", "Authorization: Bearer b"),
     400, "header Authorization"),
]


@pytest.mark.parametrize(("request_bytes", "status", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_client_mistakes_are_4xx_naming_the_field(live: LiveServer, caplog: pytest.LogCaptureFixture,
                                                  request_bytes: bytes, status: int, field: str | None) -> None:
    with caplog.at_level(logging.DEBUG):
        got, headers, body = _answer(live, request_bytes)
    assert got == status, body[:300]
    if field is not None:
        assert json.loads(body)["path"] == field
    root = str(live.root)  # type: ignore[attr-defined]
    assert root.encode() not in body
    assert all(root not in r.getMessage() and r.exc_info is None for r in caplog.records)
    assert not list(live.root.rglob("*\n*"))  # type: ignore[attr-defined]


def test_pools_hides_a_protected_pools_details_without_its_token(live: LiveServer) -> None:
    status, _, body = _answer(live, _post("/nodes/m1/status", REPORT.replace(b'"worker"', b'"master"'),
                                          "Authorization: Bearer tok"))
    assert status == 200
    _, _, listing = _answer(live, _get("/pools"))
    master = next(i for i in json.loads(listing)["items"] if i["metadata"]["name"] == "master")
    assert master["spec"]["configuration"]["source"] == [] and master["status"]["nodes"] == []
    assert master["status"]["machineCount"] == 1
    assert b"m1" not in listing and b"00-base" not in listing.split(b'"master"', 1)[1].split(b'"metadata"')[0]
    _, _, opened = _answer(live, _get("/pools", "Authorization: Bearer tok"))
    master = next(i for i in json.loads(opened)["items"] if i["metadata"]["name"] == "master")
    assert [n["name"] for n in master["status"]["nodes"]] == ["m1"]
    assert _answer(live, _get("/pools/master"))[0] == 403
    assert _answer(live, _get("/pools/master", "Authorization: Bearer tok"))[0] == 200


@pytest.mark.parametrize(("encoding", "gzipped"), [
    ("GZIP", True), ("Gzip;Q=0.5", True), ("gzip;q=0", False), ("gzip; q=0.000", False), ("*", True),
    ("*, gzip;q=0", False), ("identity", False), ("x-gzip", True), ("br;q=1, gzip;q=0.0", False),
], ids=["upper", "upper-q", "q0", "q0-spaced", "star", "star-but-gzip-refused", "identity", "x-gzip", "q0.0"])
def test_accept_encoding_is_case_insensitive_and_honours_q0(live: LiveServer, encoding: str, gzipped: bool) -> None:
    for close in ("Connection: close", "X-Keep: 1"):  # the aiohttp route, and the cached answers
        request = _get("/config/worker", f"Accept: {ACCEPT_33}", f"Accept-Encoding: {encoding}")
        if close != "Connection: close":
            request = request.replace(b"Connection: close", close.encode())
        status, headers, body = _answer(live, request)
        assert status == 200
        assert (headers.get("content-encoding") == "gzip") is gzipped
        if gzipped:
            assert json.loads(gzip.decompress(body))["ignition"]["version"] == "3.3.0"


def test_store_messages_name_no_path(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    from fleet.store import StoreError

    with pytest.raises(StoreError) as raised:
        store.get_node_status("missing")
    assert str(tmp_path) not in str(raised.value)
