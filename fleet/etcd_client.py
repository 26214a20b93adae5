"""The connection to an etcd v3 cluster (where it is: fleet/etcd_url.py): TLS client files, and the one asyncio
loop that owns the gRPC client (aetcd), so synchronous callers (the renderer, the server's worker threads) and
asyncio tasks (the watch, the election, a replica's node writes) share one channel.

The loop is a background thread of the connection's own, or, for a replica (`on_loop`), the server's own loop:
then the watch, the mirror and the group commits of node writes run beside the request handlers that await
them, with no thread between them (fleet/etcd_groups.py).

All members go into one gRPC channel (the multi-address `ipv4:` target), which fails over to the next
member when one dies.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, TypeVar

import aetcd
from aetcd import rpc, watcher

from fleet.etcd_url import EtcdSettings
from fleet.store import StoreError

RPC_TIMEOUT = 3.0           # seconds per etcd call: without quorum a write fails after this, answered 503
CALL_TIMEOUT = 4 * RPC_TIMEOUT  # seconds a store call may take in all (its queue, retries and round trips)
MAX_MESSAGE = 64 << 20      # gRPC's 4 MiB default is below one range over a few large rendered configs

log = logging.getLogger("mco.etcd")
T = TypeVar("T")


def _ip(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return str(socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)[0][4][0])


class _Client(aetcd.Client):
    """aetcd's client, with TLS credentials when given (aetcd itself opens only plaintext channels)."""

    def __init__(self, *, credentials: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._credentials = credentials

    async def connect(self) -> None:
        if self._credentials is None or self._connected.is_set():
            await super().connect()
            return
        self.channel = rpc.secure_channel(f"{self._host}:{self._port}", self._credentials,
                                          options=list(self._options.items()))
        self.kvstub = rpc.KVStub(self.channel)
        self.clusterstub = rpc.ClusterStub(self.channel)
        self.leasestub = rpc.LeaseStub(self.channel)
        self.maintenancestub = rpc.MaintenanceStub(self.channel)
        self._watcher = watcher.Watcher(rpc.WatchStub(self.channel), timeout=RPC_TIMEOUT, metadata=self.metadata)
        self._connected.set()


async def range_request(client: aetcd.Client, request: Any) -> Any:
    """One etcd Range with the options aetcd's `get_range` does not take (serializable, keys only, limit, sort),
    sent on the client's own KV stub (a public attribute of `aetcd.Client`) with this module's timeout; an RPC
    failure is a StoreError naming etcd's status code."""
    await client.connect()
    try:
        return await client.kvstub.Range(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
    except rpc.AioRpcError as exc:
        raise StoreError("etcd", f"{exc.code().name}: {exc.details()}") from exc


def make_client(settings: EtcdSettings) -> aetcd.Client:
    """One gRPC channel over every member (`ipv4:a:p,b:p,c` + port: aetcd joins host and port with ':')."""
    addresses = [f"{_ip(h)}:{p}" for h, p in settings.endpoints]
    last_host, _, last_port = addresses[-1].rpartition(":")
    host = "ipv4:" + ",".join([*addresses[:-1], last_host])
    options: dict[str, Any] = {"grpc.max_receive_message_length": MAX_MESSAGE,
                               "grpc.max_send_message_length": MAX_MESSAGE,
                               "grpc.initial_reconnect_backoff_ms": 100, "grpc.max_reconnect_backoff_ms": 1000}
    credentials = None
    if settings.cacert or settings.cert:
        import grpc

        def read(path: Path | None) -> bytes | None:
            return path.read_bytes() if path is not None else None

        try:
            credentials = grpc.ssl_channel_credentials(read(settings.cacert), read(settings.key), read(settings.cert))
        except OSError as exc:
            raise StoreError("etcd", f"cannot read a TLS file: {exc.strerror}") from exc
        options["grpc.ssl_target_name_override"] = settings.endpoints[0][0]
    return _Client(host=host, port=int(last_port), timeout=RPC_TIMEOUT, options=options, credentials=credentials)


class Connection:
    """The client and its event loop; `call` runs a coroutine there from any other thread."""

    def __init__(self, settings: EtcdSettings, *, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.settings = settings
        self.root = settings.root
        self._thread: threading.Thread | None = None
        if loop is None:  # a loop of its own, on a daemon thread
            self.loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self.loop.run_forever, name="etcd", daemon=True)
            self._thread.start()
        else:  # the caller's running loop (`on_loop`)
            self.loop = loop
        self.client = make_client(settings)

    @classmethod
    def on_loop(cls, settings: EtcdSettings) -> Connection:
        """A connection on the running loop of the calling coroutine (which must stay its only loop)."""
        return cls(settings, loop=asyncio.get_running_loop())

    def on_this_loop(self) -> bool:
        """Whether the caller runs on the connection's loop (then it awaits, never `call`s)."""
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:  # no loop running in this thread
            return False

    def key(self, *parts: str) -> bytes:
        """`/<prefix>/v1/<part>/<part>...`."""
        return self.root + "/".join(parts).encode()

    async def guarded(self, make: Callable[[], Awaitable[T]]) -> T:
        """Await `make()` on the connection's loop; etcd failures become StoreError (each RPC has its own
        timeout, RPC_TIMEOUT)."""
        try:
            return await make()
        except aetcd.ClientError as exc:
            raise StoreError("etcd", f"{type(exc).__name__}: {exc}") from exc

    def call(self, make: Callable[[], Awaitable[T]], *, timeout: float = CALL_TIMEOUT) -> T:
        """Run `make()` on the connection's loop from another thread and wait for it (`guarded`)."""
        if self.on_this_loop():
            raise RuntimeError("Connection.call on the connection's own loop would deadlock: await instead")
        if self.loop.is_closed():
            raise StoreError("etcd", "the connection's event loop has ended")
        future: Future[T] = asyncio.run_coroutine_threadsafe(self.guarded(make), self.loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise StoreError("etcd", "no answer from etcd in time") from None

    def spawn(self, coro: Awaitable[Any]) -> Future[Any]:
        """Start a long-running coroutine (watch, keepalive) on the connection's loop."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]

    def close(self) -> None:
        """Close the channel; stop the loop when it is the connection's own."""
        if self._thread is None and self.loop.is_closed():
            return  # (the caller's loop ended: the channel went with it)
        if self.on_this_loop():  # (a replica closing on its loop: the channel closes once the loop runs on)
            self.loop.create_task(self.client.close())
            return
        try:
            asyncio.run_coroutine_threadsafe(self.client.close(), self.loop).result(5)
        except Exception as exc:  # closing a channel to a dead cluster may fail; the loop stops regardless
            log.info("closing the etcd channel failed: %s", exc)
        if self._thread is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
