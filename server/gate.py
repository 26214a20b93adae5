"""Admission of connections, before any HTTP or TLS work: connection caps, CIDR rules, handshake deadline.

Each listener's protocol factory makes a `_Gate` first. When the kernel hands over a connection, the
gate counts it against the listener's cap (`max_connections`) and the client address's cap
(`max_per_client`), and on the TLS listener also checks the --allow/--deny rules; a connection over a
cap or refused is closed at once, before a TLS handshake (an idle TLS connection costs ~300 KB). An
admitted plain connection goes straight to the HTTP protocol; an admitted TLS connection first
completes its handshake (`loop.start_tls`) within `handshake_timeout`. The count is released when the
connection ends, however it ends.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from typing import Any

from server.auth import AccessPolicy, Refused

log = logging.getLogger("mco.server")
MakeProtocol = Callable[[Callable[[], None]], asyncio.Protocol]


class ConnectionGate:
    """The admission rules of one listener and its live connection counts."""

    def __init__(self, *, make_protocol: MakeProtocol, policy: AccessPolicy, max_connections: int,
                 max_per_client: int, tls: ssl.SSLContext | None = None, handshake_timeout: float = 10.0) -> None:
        self.make_protocol = make_protocol
        self.policy = policy
        self.max_connections = max_connections
        self.max_per_client = max_per_client
        self.tls = tls
        self.handshake_timeout = handshake_timeout
        self.open = 0
        self.per_client: dict[str, int] = {}
        self.refused = 0

    def __call__(self) -> asyncio.Protocol:
        """The protocol factory for loop.create_server."""
        return _Gate(self)

    def admit(self, client: str) -> str:
        """"" and the connection counted, or why it is refused."""
        if self.open >= self.max_connections:
            return f"listener at its {self.max_connections} connections"
        if self.per_client.get(client, 0) >= self.max_per_client:
            return f"client at its {self.max_per_client} connections"
        if self.tls is not None:
            try:
                self.policy.check_address(client)
            except Refused as exc:
                return exc.reason
        self.open += 1
        self.per_client[client] = self.per_client.get(client, 0) + 1
        return ""

    def releaser(self, client: str) -> Callable[[], None]:
        """A function that uncounts the connection once, however often it is called."""
        done = False

        def release() -> None:
            nonlocal done
            if done:
                return
            done = True
            self.open -= 1
            left = self.per_client.get(client, 1) - 1
            if left > 0:
                self.per_client[client] = left
            else:
                self.per_client.pop(client, None)
        return release

    async def handshake(self, transport: asyncio.Transport, protocol: asyncio.Protocol,
                        release: Callable[[], None]) -> None:
        """TLS on an admitted connection, then hand it to the HTTP protocol."""
        assert self.tls is not None
        loop = asyncio.get_running_loop()
        try:
            secure = await loop.start_tls(transport, protocol, self.tls, server_side=True,
                                          ssl_handshake_timeout=self.handshake_timeout)
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError, RuntimeError):
            transport.abort()
            release()
            return
        if secure is None:
            release()
            return
        protocol.connection_made(secure)


class _Gate(asyncio.Protocol):
    """The first protocol of every connection: admit or close, then hand over."""

    def __init__(self, gate: ConnectionGate) -> None:
        self.gate = gate
        self.handed = False
        self.release: Callable[[], None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        client = str(peer[0]) if isinstance(peer, tuple | list) and peer else "-"
        gate = self.gate
        reason = gate.admit(client)
        if reason:
            gate.refused += 1
            log.debug("connection from %s closed before any request: %s", client, reason)
            transport.abort()
            return
        release = self.release = gate.releaser(client)
        protocol = gate.make_protocol(release)
        self.handed = True
        if gate.tls is None:
            transport.set_protocol(protocol)
            protocol.connection_made(transport)
            return
        transport.pause_reading()  # not one byte of the ClientHello may reach this protocol
        task = asyncio.get_running_loop().create_task(gate.handshake(transport, protocol, release))
        _HANDSHAKES.add(task)
        task.add_done_callback(_HANDSHAKES.discard)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.release is not None and not self.handed:
            self.release()

    def data_received(self, data: bytes) -> None:  # pragma: no cover - reading is handed over or paused
        pass


_HANDSHAKES: set[asyncio.Task[Any]] = set()  # keep handshake tasks referenced until they finish
