"""A real server on free ports, running in a thread of its own, for tests that talk to it over raw sockets.

The server's event loop runs in its own thread so that the test's blocking socket clients (many at once, from
a thread pool) cannot stall it, and it cannot stall them.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

from fleet.store import MemoryStore, Store
from server.run import Running, start
from server.settings import ServerSettings
from tests.builders import rendered_config
from tests.server.helpers import SOURCES, ignition_config, publish


def demo_store() -> MemoryStore:
    """Three pools: a small worker config, a large one (~180 KB served, the MCS's copy of the MachineConfig
    included), and a master config."""
    store = MemoryStore()
    publish(store, rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=3)))
    publish(store, rendered_config(pool="big", sources=SOURCES, config=ignition_config("3.4.0", files=200)))
    publish(store, rendered_config(pool="master", sources=SOURCES, config=ignition_config("3.3.0")))
    return store


class LiveServer:
    """`with LiveServer(settings, store) as live:` starts the server; leaving the block stops it."""

    def __init__(self, settings: ServerSettings, store: Store | None = None) -> None:
        self.settings = settings
        self.store = store if store is not None else demo_store()
        self.running: Running | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="live-server", daemon=True)

    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            self.running = await start(self.settings, store=self.store, leader=False)
        except BaseException as exc:  # reported to the test thread
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await self.running.stop()

    def __enter__(self) -> LiveServer:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def port(self, scheme: str = "http") -> int:
        """The bound port of the plain (http) or TLS (https) listener."""
        assert self.running is not None
        return next(port for s, _, port in self.running.addresses if s == scheme)

    def call(self, fn: Any, *args: Any) -> Any:
        """Run `fn(*args)` in the server's loop thread and return its result."""
        assert self._loop is not None
        done: asyncio.Future[Any] = asyncio.run_coroutine_threadsafe(_call(fn, *args), self._loop)  # type: ignore[assignment]
        return done.result(30)


async def _call(fn: Any, *args: Any) -> Any:
    return fn(*args)


def exchange(port: int, data: bytes, *, timeout: float = 10.0, idle: float = 1.0, host: str = "127.0.0.1") -> bytes:
    """Send `data` on a fresh connection and read until the server closes it, or until it has said
    something and then stayed quiet for `idle` seconds (a keep-alive answer), or `timeout`."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass  # the server may answer and close before reading everything: read what it said
        out = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            sock.settimeout(idle if out else max(0.01, deadline - time.monotonic()))
            try:
                chunk = sock.recv(1 << 20)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            out += chunk
        return out


def status_of(answer: bytes) -> int:
    """The status code of the first response in `answer` (0 when there is none)."""
    parts = answer.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
        return 0
    return int(parts[1])
