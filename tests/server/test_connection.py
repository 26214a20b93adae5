"""The connection: keep-alive and closing answers are equal, pipelined requests keep their order and obey
backpressure; HTTP versions other than 1.0/1.1 get 505; malformed heads are logged as one line; a slow head
is cut by the read deadline, an idle keep-alive connection is not."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from server.auth import AccessPolicy
from server.settings import Limits, ServerSettings
from tests.server.helpers import ACCEPT_33
from tests.server.live import LiveServer, exchange, status_of

IGN = "application/vnd.coreos.ignition+json"


@pytest.fixture(scope="module")
def live() -> LiveServer:
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log=None,
                              policy=AccessPolicy(tokens={"master": ("tok",)}))
    with LiveServer(settings) as server:
        yield server


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


def _request(method: str, path: str, headers: dict[str, str], *, close: bool = False, version: str = "1.1") -> bytes:
    lines = [f"{method} {path} HTTP/{version}", "Host: test"] + [f"{k}: {v}" for k, v in headers.items()]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


CASES = [
    ("ok", "GET", "/config/worker", {"Accept": ACCEPT_33}),
    ("large", "GET", "/config/big", {"Accept": ACCEPT_33}),
    ("large-head", "HEAD", "/config/big", {"Accept": ACCEPT_33}),
    ("head", "HEAD", "/config/worker", {"Accept": ACCEPT_33}),
    ("default", "GET", "/config/worker", {}),
    ("gzip", "GET", "/config/worker", {"Accept": ACCEPT_33, "Accept-Encoding": "GZIP"}),
    ("gzip-q0", "GET", "/config/worker", {"Accept": ACCEPT_33, "Accept-Encoding": "gzip;q=0, identity"}),
    ("unknown", "GET", "/config/nope", {}),
    ("malformed-accept", "GET", "/config/worker", {"Accept": f"{IGN};version=4.0.0"}),
    ("spec-2", "GET", "/config/worker", {"Accept": f"{IGN};version=2.2.0"}),
    ("two-accept-headers", "GET", "/config/worker", {"Accept": f"{IGN};version=3.1.0", "accept": "*/*"}),
    ("no-token", "GET", "/config/master", {"Accept": ACCEPT_33}),
    ("token", "GET", "/config/master", {"Accept": ACCEPT_33, "Authorization": "Bearer tok"}),
    ("two-authorizations", "GET", "/config/master", {"Authorization": "Bearer tok", "authorization": "Bearer x"}),
    ("inm", "GET", "/config/worker", {"Accept": ACCEPT_33, "If-None-Match": "*"}),
    ("bad-name", "GET", "/config/Worker", {}),
    ("query", "GET", "/config/worker?x=1", {"Accept": ACCEPT_33}),
    ("escape", "GET", "/config/w%6Frker", {"Accept": ACCEPT_33}),
]


@pytest.mark.parametrize(("method", "path", "headers"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_keep_alive_answers_equal_closing_ones(live: LiveServer, method: str, path: str,
                                              headers: dict[str, str]) -> None:
    """A keep-alive answer and a `Connection: close` one carry the same status, body and headers."""
    cached = _responses(exchange(live.port(), _request(method, path, headers)), head_only=method == "HEAD")
    routed = _responses(exchange(live.port(), _request(method, path, headers, close=True)),
                        head_only=method == "HEAD")
    assert cached[0][0] == routed[0][0]
    assert cached[0][2] == routed[0][2]
    for name in (b"etag", b"content-type", b"content-encoding", b"content-length", b"x-rendered-config", b"vary",
                 b"server"):
        assert cached[0][1].get(name) == routed[0][1].get(name), name


def test_many_pipelined_config_requests_on_one_connection(live: LiveServer) -> None:
    stream = b"".join(_request("GET", "/config/worker", {"Accept": ACCEPT_33}) for _ in range(20))
    answers = _responses(exchange(live.port(), stream))
    assert [a[0] for a in answers] == [b"200"] * 20
    assert len({a[2] for a in answers}) == 1


def test_pipelined_requests_keep_their_order(live: LiveServer) -> None:
    stream = (_request("GET", "/config/worker", {"Accept": ACCEPT_33})
              + _request("GET", "/config/nope", {})
              + _request("GET", "/healthz", {})  # aiohttp's loop answers this one
              + _request("GET", "/config/worker", {"Accept": ACCEPT_33})
              + _request("GET", "/config/worker", {"Accept": ACCEPT_33}, close=True))
    answers = _responses(exchange(live.port(), stream))
    assert [a[0] for a in answers] == [b"200", b"404", b"200", b"200", b"200"]
    assert answers[2][2] == b"ok\n"
    assert answers[0][2] == answers[3][2] == answers[4][2]


def test_head_split_across_packets(live: LiveServer) -> None:
    request = _request("GET", "/config/worker", {"Accept": ACCEPT_33}, close=True)
    with socket.create_connection(("127.0.0.1", live.port()), timeout=10) as sock:
        for i in range(0, len(request), 7):
            sock.sendall(request[i:i + 7])
            time.sleep(0.001)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    (status, headers, body), = _responses(raw)
    assert status == b"200" and body.startswith(b"{")


def test_pipelined_large_answers_to_a_slow_reader(live: LiveServer) -> None:
    expected = _responses(exchange(live.port(), _request("GET", "/config/big", {"Accept": ACCEPT_33}, close=True)))
    assert len(expected[0][2]) > 50_000
    count = 12
    stream = b"".join(_request("GET", "/config/big", {"Accept": ACCEPT_33}, close=i == count - 1) for i in range(count))
    with socket.create_connection(("127.0.0.1", live.port()), timeout=10) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(stream)
        raw = b""
        while chunk := sock.recv(4096):
            raw += chunk
            if len(raw) % 65536 < 4096:
                time.sleep(0.001)  # read slowly, so the server's writes back up
    answers = _responses(raw)
    assert len(answers) == count
    assert all(status == b"200" and body == expected[0][2] for status, _, body in answers)


@pytest.mark.parametrize("version", ["2.0", "1.2", "0.9", "3.0"])
def test_other_http_versions_get_505_never_echoed(live: LiveServer, version: str) -> None:
    answer = exchange(live.port(), _request("GET", "/config/worker", {"Accept": ACCEPT_33}, version=version))
    if answer:  # llhttp may refuse the request line outright (400), which is fine too
        assert answer.startswith(b"HTTP/1.")
        assert status_of(answer) in (400, 505)
        assert f"HTTP/{version}".encode() not in answer.split(b"\r\n", 1)[0]


def test_malformed_head_is_logged_as_one_line_without_the_token(live: LiveServer,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    secret = "s3cret-token-value"
    with caplog.at_level(logging.DEBUG):
        answers = [exchange(live.port(), f"GET /config/worker HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                                         f"{secret}\x01\r\n\r\n".encode()) for _ in range(20)]
    assert all(status_of(a) == 400 for a in answers)
    assert all(secret.encode() not in a for a in answers)
    records = [r for r in caplog.records if r.name.startswith(("mco", "aiohttp"))]
    text = "\n".join(r.getMessage() for r in records)
    assert secret not in text
    assert all(r.exc_info is None for r in records)
    assert sum("malformed request" in r.getMessage() for r in records) == 20
    assert len(text) < 20 * 200


def test_slow_head_is_cut_by_the_read_deadline() -> None:
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log=None,
                              limits=Limits(read_timeout=0.5))
    with LiveServer(settings) as live, socket.create_connection(("127.0.0.1", live.port()), timeout=10) as sock:
        head = b"GET /config/worker HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 200
        closed = False
        for byte in head:  # one byte every 50 ms: 12 s in all, far past the 0.5 s deadline
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            time.sleep(0.05)
            sock.setblocking(False)
            try:
                if sock.recv(1) == b"":
                    closed = True
                    break
            except BlockingIOError:
                pass
            finally:
                sock.setblocking(True)
        assert closed


def test_idle_keep_alive_connection_outlives_the_read_deadline() -> None:
    """The deadline times heads, not the quiet between requests (that is the keep-alive timeout's)."""
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log=None,
                              limits=Limits(read_timeout=0.3))
    request = _request("GET", "/config/worker", {"Accept": ACCEPT_33})
    with LiveServer(settings) as live, socket.create_connection(("127.0.0.1", live.port()), timeout=10) as sock:
        for _ in range(2):
            sock.sendall(request)
            raw = b""
            while not _complete(raw):
                chunk = sock.recv(65536)
                assert chunk, "connection closed"
                raw += chunk
            assert _responses(raw)[0][0] == b"200"
            time.sleep(1.0)


def _complete(raw: bytes) -> bool:
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    return len(body) >= length


def test_a_repeated_request_gets_the_same_answer_and_is_counted_each_time(live: LiveServer) -> None:
    request = _request("GET", "/config/worker", {"Accept": ACCEPT_33, "X-Repeat": "1"})
    before = _served(live)
    answers = _responses(exchange(live.port(), request * 3))
    assert [a[0] for a in answers] == [b"200"] * 3 and len({a[2] for a in answers}) == 1
    assert _served(live) == before + 3


def _served(live: LiveServer) -> float:
    """The worker pool's 200 answers for spec 3.3.0, as /metrics counts them."""
    raw = exchange(live.port(), _request("GET", "/metrics", {}, close=True))
    lines = [line for line in raw.decode().splitlines()
             if line.startswith("mco_config_requests_total{") and 'pool="worker"' in line
             and 'version="3.3.0"' in line and 'status="200"' in line]
    return float(lines[0].rsplit(" ", 1)[1]) if lines else 0.0


@pytest.mark.parametrize(("head", "said"), [
    (b"GET /config/worker HTTP/1.1\r\nHost: x\r\nX-Long: " + b"v" * 70_000 + b"\r\n\r\n",
     b"request line or header too long"),
    (b"GET /config/worker HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n", b"malformed request head"),
    (b"G(T /config/worker HTTP/1.1\r\nHost: x\r\n\r\n", b"malformed request method"),
])
def test_a_refused_head_is_told_by_the_parse_errors_class(live: LiveServer, head: bytes, said: bytes) -> None:
    """The 400 names what llhttp refused by its class (aiohttp's subclasses of the public HttpProcessingError,
    looked up by name), never by aiohttp's message, which quotes the line."""
    answer = exchange(live.port(), head)
    assert status_of(answer) == 400, answer[:200]
    assert said in answer, answer[-300:]
    assert b"a\x01b" not in answer and b"v" * 100 not in answer and b"G(T" not in answer
