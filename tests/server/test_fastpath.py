"""The fast path answers exactly what the aiohttp route answers, and hands anything else to aiohttp intact."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from fleet.store import MemoryStore
from server.auth import AccessPolicy
from server.fastpath import parse_head
from server.run import Running, start
from server.settings import Limits, ServerSettings
from tests.server.helpers import ACCEPT_33, ignition_config, make_rendered, publish

IGN = "application/vnd.coreos.ignition+json"


async def _start(fast: bool) -> Running:
    store = MemoryStore()
    publish(store, make_rendered("worker", ignition_config("3.4.0", files=3)))
    publish(store, make_rendered("big", ignition_config("3.4.0", files=500)))
    publish(store, make_rendered("master", ignition_config("3.3.0",
                                                        extra={"kernelArguments": {"shouldNotExist": ["q"]}})))
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log=None, fast_path=fast,
                              policy=AccessPolicy(tokens={"master": ("tok",)}))
    return await start(settings, store=store, leader=False)


@pytest.fixture
async def both() -> AsyncIterator[tuple[int, int]]:
    fast, slow = await _start(True), await _start(False)
    yield fast.addresses[0][2], slow.addresses[0][2]
    await fast.stop()
    await slow.stop()


async def _exchange(port: int, data: bytes, *, reads: int = 1) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    out = b""
    try:
        while True:
            chunk = await asyncio.wait_for(reader.read(1 << 20), 1.0)
            if not chunk:
                break
            out += chunk
    except TimeoutError:
        pass
    writer.close()
    return out


def _responses(raw: bytes, *, head_only: bool = False) -> list[tuple[bytes, dict[bytes, bytes], bytes]]:
    """Split a byte stream of HTTP/1.1 responses (Content-Length framed) into (status, headers, body)."""
    out = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
        status = lines[0].split(b" ")[1]
        length = int(headers.get(b"content-length", b"0"))
        no_body = status == b"304" or head_only
        body, raw = (b"", rest) if no_body else (rest[:length], rest[length:])
        out.append((status, headers, body))
    return out


def _request(method: str, path: str, headers: dict[str, str], *, close: bool = True) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: test"] + [f"{k}: {v}" for k, v in headers.items()]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


CASES = [
    ("ok", "GET", "/config/worker", {"Accept": ACCEPT_33}),
    ("large", "GET", "/config/big", {"Accept": ACCEPT_33}),
    ("large-head", "HEAD", "/config/big", {"Accept": ACCEPT_33}),
    ("head", "HEAD", "/config/worker", {"Accept": ACCEPT_33}),
    ("default", "GET", "/config/worker", {}),
    ("gzip", "GET", "/config/worker", {"Accept": ACCEPT_33, "Accept-Encoding": "gzip"}),
    ("unknown", "GET", "/config/nope", {}),
    ("malformed-accept", "GET", "/config/worker", {"Accept": f"{IGN};version=4.0.0"}),
    ("spec-2", "GET", "/config/worker", {"Accept": f"{IGN};version=2.2.0"}),
    ("two-accept-headers", "GET", "/config/worker", {"Accept": f"{IGN};version=3.1.0", "accept": "*/*"}),
    ("cannot-express", "GET", "/config/master", {"Accept": f"{IGN};version=3.2.0", "Authorization": "Bearer tok"}),
    ("no-token", "GET", "/config/master", {"Accept": ACCEPT_33}),
    ("token", "GET", "/config/master", {"Accept": ACCEPT_33, "Authorization": "Bearer tok"}),
    ("inm", "GET", "/config/worker", {"Accept": ACCEPT_33, "If-None-Match": "*"}),
    ("bad-name-slow", "GET", "/config/Worker", {}),
    ("query-slow", "GET", "/config/worker?x=1", {"Accept": ACCEPT_33}),
    ("escape-slow", "GET", "/config/w%6Frker", {"Accept": ACCEPT_33}),
]


@pytest.mark.parametrize(("method", "path", "headers"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_fast_and_slow_paths_agree(both: tuple[int, int], method: str, path: str,
                                         headers: dict[str, str]) -> None:
    raw = [_responses(await _exchange(port, _request(method, path, headers)), head_only=method == "HEAD")
           for port in both]
    (fast,), (slow,) = raw
    assert fast[0] == slow[0]
    assert fast[2] == slow[2]
    for name in (b"etag", b"content-type", b"content-encoding", b"content-length", b"x-rendered-config", b"vary"):
        assert fast[1].get(name) == slow[1].get(name), name


async def test_pipelined_requests_and_fallback_keep_order(both: tuple[int, int]) -> None:
    fast_port, _ = both
    stream = (_request("GET", "/config/worker", {"Accept": ACCEPT_33}, close=False)
              + _request("GET", "/config/nope", {}, close=False)
              + _request("GET", "/healthz", {}, close=False)  # hands the connection to aiohttp
              + _request("GET", "/config/worker", {"Accept": ACCEPT_33}))
    answers = _responses(await _exchange(fast_port, stream))
    assert [a[0] for a in answers] == [b"200", b"404", b"200", b"200"]
    assert answers[2][2] == b"ok\n"
    assert answers[0][2] == answers[3][2]


async def test_head_split_across_packets(both: tuple[int, int]) -> None:
    fast_port, _ = both
    reader, writer = await asyncio.open_connection("127.0.0.1", fast_port)
    request = _request("GET", "/config/worker", {"Accept": ACCEPT_33})
    for i in range(0, len(request), 7):
        writer.write(request[i:i + 7])
        await writer.drain()
        await asyncio.sleep(0.001)
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    (status, headers, body), = _responses(raw)
    assert status == b"200" and headers[b"connection"] == b"close" and body.startswith(b"{")


async def test_keep_alive_serves_many(both: tuple[int, int]) -> None:
    fast_port, _ = both
    reader, writer = await asyncio.open_connection("127.0.0.1", fast_port)
    for _ in range(20):
        writer.write(_request("GET", "/config/worker", {"Accept": ACCEPT_33}, close=False))
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        body = await reader.readexactly(length)
        assert head.startswith(b"HTTP/1.1 200") and body.startswith(b"{")
    writer.close()


LIMITS = Limits()


@pytest.mark.parametrize(("head", "taken"), [
    (b"GET /config/worker HTTP/1.1\r\nHost: x", True),
    (b"HEAD /config/worker HTTP/1.1\r\nHost: x", True),
    (b"GET /config/worker HTTP/1.0\r\nHost: x", False),
    (b"POST /config/worker HTTP/1.1\r\nHost: x", False),
    (b"GET /config/worker HTTP/1.1\r\nContent-Length: 5", False),
    (b"GET /config/worker HTTP/1.1\r\nContent-Length: 0", True),
    (b"GET /config/worker HTTP/1.1\r\nTransfer-Encoding: chunked", False),
    (b"GET /config/worker HTTP/1.1\r\nUpgrade: websocket", False),
    (b"GET /config/worker HTTP/1.1\r\n folded: x", False),
    (b"GET /config/worker HTTP/1.1\r\nBad Name: x", False),
    (b"GET /config/worker HTTP/1.1\r\nX: a\x01b", False),
    (b"GET /config/a/b HTTP/1.1", False),
    (b"GET /config/ HTTP/1.1", False),
    (b"GET  /config/worker HTTP/1.1", False),
    (b"GET /config/" + b"a" * 5000 + b" HTTP/1.1", False),
    (b"GET /config/worker HTTP/1.1\r\n" + b"X: 1\r\n" * 100 + b"Y: 2", False),
], ids=["get", "head", "http10", "post", "body", "empty-body", "chunked", "upgrade", "folding", "bad-name",
        "control-char", "nested", "empty-pool", "double-space", "long-line", "many-headers"])
def test_parse_head_takes_only_plain_requests(head: bytes, taken: bool) -> None:
    assert (parse_head(head, LIMITS) is not None) is taken


async def test_pipelined_large_answers_to_a_slow_reader(both: tuple[int, int]) -> None:
    fast_port, slow_port = both
    expected = _responses(await _exchange(slow_port, _request("GET", "/config/big", {"Accept": ACCEPT_33})))[0][2]
    assert len(expected) > 50_000
    reader, writer = await asyncio.open_connection("127.0.0.1", fast_port, limit=1 << 16)
    count = 12
    writer.write(b"".join(_request("GET", "/config/big", {"Accept": ACCEPT_33}, close=i == count - 1)
                          for i in range(count)))
    await writer.drain()
    raw = b""
    while True:
        chunk = await asyncio.wait_for(reader.read(4096), 10)
        if not chunk:
            break
        raw += chunk
        if len(raw) % 65536 < 4096:
            await asyncio.sleep(0.001)  # read slowly, so the server's writes back up
    writer.close()
    answers = _responses(raw)
    assert len(answers) == count
    assert all(status == b"200" and body == expected for status, _, body in answers)
