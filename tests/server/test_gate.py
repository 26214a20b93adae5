"""With real sockets: connections capped per listener and per client address, CIDR rules
applied before the TLS handshake, a handshake deadline, and the caps released when connections end."""

from __future__ import annotations

import socket
import ssl
import time
from pathlib import Path

import pytest

from server.auth import AccessPolicy, parse_networks
from server.certs import init_certs
from server.settings import Limits, ServerSettings
from tests.server.helpers import ACCEPT_33
from tests.server.live import LiveServer, exchange, status_of

REQUEST = f"GET /config/worker HTTP/1.1\r\nHost: x\r\nAccept: {ACCEPT_33}\r\n\r\n".encode()


def _served(sock: socket.socket) -> bool:
    """Whether the server answers a config request on this (admitted) connection."""
    try:
        sock.sendall(REQUEST)
        return sock.recv(65536).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def _closed_at_once(sock: socket.socket, wait: float = 5.0) -> bool:
    """Whether the server closes the connection without a word (EOF or reset before `wait` seconds)."""
    sock.settimeout(wait)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.parametrize("limit", ["per-client", "per-listener"])
def test_connections_are_capped_and_released(limit: str) -> None:
    limits = Limits(max_per_client=3) if limit == "per-client" else Limits(max_connections=3)
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log=None, limits=limits)
    with LiveServer(settings) as live:
        port = live.port()
        held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3)]
        try:
            assert all(_served(s) for s in held)
            with socket.create_connection(("127.0.0.1", port), timeout=10) as extra:
                assert _closed_at_once(extra)
            held.pop().close()
            deadline = time.monotonic() + 10
            admitted = False
            while not admitted and time.monotonic() < deadline:  # the server sees the close asynchronously
                with socket.create_connection(("127.0.0.1", port), timeout=10) as again:
                    admitted = _served(again)
            assert admitted
        finally:
            for s in held:
                s.close()


@pytest.fixture
def certs(tmp_path: Path) -> Path:
    init_certs(tmp_path, ips=["127.0.0.1"])
    return tmp_path


def _tls_settings(certs: Path, **kw: object) -> ServerSettings:
    return ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), tls_listen=("127.0.0.1", 0),
                          cert_file=certs / "tls.crt", key_file=certs / "tls.key", access_log=None, **kw)  # type: ignore[arg-type]


def test_denied_address_is_closed_before_the_tls_handshake(certs: Path) -> None:
    policy = AccessPolicy(deny=parse_networks(["127.0.0.0/8"], option="--deny"))
    with LiveServer(_tls_settings(certs, policy=policy)) as live:
        with socket.create_connection(("127.0.0.1", live.port("https")), timeout=10) as raw:
            assert _closed_at_once(raw)  # no ClientHello sent: refused without waiting for one
        assert live.running is not None
        plain = exchange(live.port("http"), b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert status_of(plain) == 403  # the plain listener answers the refusal in HTTP


def test_tls_handshake_has_a_deadline(certs: Path) -> None:
    with LiveServer(_tls_settings(certs, limits=Limits(handshake_timeout=0.5))) as live:
        with socket.create_connection(("127.0.0.1", live.port("https")), timeout=10) as raw:
            assert not _closed_at_once(raw, wait=0.1)  # admitted: the server waits for a ClientHello...
            assert _closed_at_once(raw, wait=8.0)  # ...but not for ever
        ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
        with socket.create_connection(("127.0.0.1", live.port("https")), timeout=10) as raw, \
                ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            assert _served(tls)
