"""Real listeners: TLS 1.2+ with certificate reload, bounded request sizes, and SO_REUSEPORT workers."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fleet.store import MemoryStore
from server.certs import init_certs
from server.run import Running, start
from server.settings import ServerSettings
from tests.builders import rendered_config
from tests.server.helpers import SOURCES, ignition_config, publish


@pytest.fixture
async def tls_server(tmp_path: Path) -> AsyncIterator[tuple[Running, Path]]:
    certs = tmp_path / "certs"
    init_certs(certs, ips=["127.0.0.1"])
    store = MemoryStore()
    publish(store, rendered_config(pool="worker", sources=SOURCES, config=ignition_config()))
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), tls_listen=("127.0.0.1", 0),
                              cert_file=certs / "tls.crt", key_file=certs / "tls.key", access_log=None,
                              poll_interval=0.05)
    running = await start(settings, store=store, leader=False)
    yield running, certs
    await running.stop()


def _port(running: Running, scheme: str) -> int:
    return next(port for s, _, port in running.addresses if s == scheme)


def _handshake(port: int, ca: Path, *, version: ssl.TLSVersion | None = None) -> tuple[int, str]:
    ctx = ssl.create_default_context(cafile=str(ca))
    if version is not None:
        ctx.minimum_version = ctx.maximum_version = version
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        der = tls.getpeercert(binary_form=True)
        assert der is not None
        from cryptography import x509
        return x509.load_der_x509_certificate(der).serial_number, tls.version() or ""


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1_1 is deprecated:DeprecationWarning")
async def test_tls_versions(tls_server: tuple[Running, Path]) -> None:
    running, certs = tls_server
    port = _port(running, "https")
    _, version = await asyncio.to_thread(_handshake, port, certs / "ca.crt", version=ssl.TLSVersion.TLSv1_2)
    assert version == "TLSv1.2"
    with pytest.raises(ssl.SSLError):
        await asyncio.to_thread(_handshake, port, certs / "ca.crt", version=ssl.TLSVersion.TLSv1_1)


async def test_renewed_certificate_is_used_without_restart(tls_server: tuple[Running, Path]) -> None:
    running, certs = tls_server
    port = _port(running, "https")
    before, _ = await asyncio.to_thread(_handshake, port, certs / "ca.crt")
    result = init_certs(certs, ips=["127.0.0.1"])  # renew: same CA, new serving certificate
    assert not result.ca_created
    assert running.certs is not None
    for _ in range(100):
        if running.certs.reloads:
            break
        await asyncio.sleep(0.05)
    after, _ = await asyncio.to_thread(_handshake, port, certs / "ca.crt")
    assert after != before
    (certs / "tls.key").write_text("broken")  # a bad renewal keeps the last good certificate
    assert running.certs.check() is False
    still, _ = await asyncio.to_thread(_handshake, port, certs / "ca.crt")
    assert still == after


async def _raw(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(65536), 5)
    writer.close()
    return data


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GET /config/worker HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", b"200"),
    (b"GET /config/" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),
    (b"GET /config/worker HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n", b"400"),
    (b"GET /config/worker HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(100)) + b"\r\n",
     b"400"),
    (b"POST /nodes/n1/status HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"{" * 100000, b"413"),
    (b"DELETE /config/worker HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", b"405"),
], ids=["ok", "request-line-too-long", "header-too-long", "too-many-headers", "body-too-large", "method"])
async def test_request_size_bounds(tls_server: tuple[Running, Path], request_bytes: bytes, status: bytes) -> None:
    running, _ = tls_server
    answer = await _raw(_port(running, "http"), request_bytes)
    assert answer.split(b" ", 2)[1] == status, answer[:200]
    if status != b"200":
        assert b'"storage"' not in answer
