"""The composition root of `mco serve`: builds the store, state, reloader and app, opens the listeners.

With `workers > 1`, that many processes share the ports through SO_REUSEPORT (the kernel spreads
connections). Worker 0 is the leader: it renders and watches the cluster directory; the others follow
the store. A shared store is needed for that, so without `--store` a temporary directory is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import multiprocessing
import os
import signal
import socket
import ssl
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aiohttp import web

from fleet.clock import Clock, system_clock
from fleet.store import Store
from fleet.store_open import open_following, open_store
from server import accesslog
from server.app import config_first, create_app
from server.auth import AuthSettingsError
from server.connection import Connection, http_logger, request_factory
from server.gate import ConnectionGate
from server.loop_monitor import LoopMonitor
from server.metrics import ServerMetrics
from server.settings import ServerSettings
from server.snapshot import PayloadCache
from server.state import ServerState
from server.tls import CertReloader, server_context
from server.watch import Reloader, RenderFn, default_render

log = logging.getLogger("mco.server")


@dataclass
class Running:
    """A started server: what tests and the CLI need to talk to it and stop it."""

    runner: web.AppRunner
    state: ServerState
    reloader: Reloader
    tasks: list[asyncio.Task[None]]
    addresses: list[tuple[str, str, int]]  # (scheme, host, port) actually bound
    listeners: list[asyncio.AbstractServer]
    certs: CertReloader | None = None
    monitor: LoopMonitor | None = None
    access_log: accesslog.AccessLog | None = None

    async def stop(self) -> None:
        """Stop polling and close the listeners."""
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for listener in self.listeners:
            listener.close()
        await self.runner.cleanup()
        if self.access_log is not None:
            self.access_log.close()


async def start(settings: ServerSettings, *, store: Store | None = None, leader: bool = True,
                render: RenderFn = default_render, clock: Clock = system_clock) -> Running:
    """Render (leader) or load (follower), then listen; returns once the listeners are open. `clock`: the time
    the server's rules read (rollouts, presence, reports, the render's conditions), which a test sets."""
    if store is None:  # a replica of etcd follows its whole state; else the directory store, or one in memory
        store = await open_following(settings.etcd if settings.etcd is not None else settings.store_dir)
    state = ServerState()
    if settings.etcd is not None:
        from server.replica import attach

        attach(store, state, asyncio.get_running_loop())  # type: ignore[arg-type]
    metrics = ServerMetrics()
    cache = PayloadCache(options=settings.append, gzip_level=settings.gzip_level)
    reloader = Reloader(state=state, store=store, cache=cache, metrics=metrics, cluster_dir=settings.cluster_dir,
                        render=render, leader=leader, interval=settings.poll_interval, clock=clock)
    await reloader.start()
    check_token_pools(settings, state)
    app = create_app(state=state, store=store, settings=settings, metrics=metrics, clock=clock)
    logger = accesslog.configure(settings.access_log)
    limits = settings.limits
    handler_kwargs: dict[str, Any] = dict(
        access_log_class=accesslog.JsonAccessLogger, access_log=logger, logger=http_logger(),
        max_line_size=limits.max_line_size, max_field_size=limits.max_field_size, max_headers=limits.max_headers,
        keepalive_timeout=limits.keepalive_timeout)
    runner = web.AppRunner(app, handle_signals=False, **handler_kwargs)
    await runner.setup()
    loop = asyncio.get_running_loop()
    server = runner.server
    assert server is not None
    # web.Server's public `request_factory` and `request_handler` (its constructor's arguments, read by every new
    # connection): the read deadline's and version check's hook, and config answers that skip the routing
    server.request_factory = request_factory(server.request_factory)
    server.request_handler = config_first(app, server.request_handler)

    def protocol(release: Callable[[], None]) -> Connection:
        return Connection(server(), read_timeout=limits.read_timeout, on_lost=release)

    def gate(tls: ssl.SSLContext | None) -> ConnectionGate:
        return ConnectionGate(make_protocol=protocol, policy=settings.policy, max_connections=limits.max_connections,
                              max_per_client=limits.max_per_client, tls=tls, handshake_timeout=limits.handshake_timeout)
    reuse = settings.workers > 1
    addresses: list[tuple[str, str, int]] = []
    listeners: list[asyncio.AbstractServer] = []
    certs: CertReloader | None = None
    try:
        if settings.listen:
            srv: asyncio.AbstractServer = await loop.create_server(
                gate(None), settings.listen[0], settings.listen[1], reuse_port=reuse, backlog=1024)
            listeners.append(srv)
            addresses.append(("http", *_bound(srv)))
        if settings.tls_listen:
            assert settings.cert_file and settings.key_file
            ctx = server_context(settings.cert_file, settings.key_file)
            certs = CertReloader(ctx, settings.cert_file, settings.key_file, interval=max(settings.poll_interval, 1.0))
            srv = await loop.create_server(gate(ctx), settings.tls_listen[0], settings.tls_listen[1],
                                           reuse_port=reuse, backlog=1024)  # TLS after admission (gate.py)
            listeners.append(srv)
            addresses.append(("https", *_bound(srv)))
    except BaseException:
        for srv in listeners:
            srv.close()
        await runner.cleanup()
        if logger is not None:
            logger.close()
        raise
    monitor = metrics.monitor = LoopMonitor()
    tasks = [asyncio.create_task(reloader.run()), asyncio.create_task(monitor.run())]
    if certs is not None:
        tasks.append(asyncio.create_task(certs.run()))
    return Running(runner, state, reloader, tasks, addresses, listeners, certs, monitor, logger)


def check_token_pools(settings: ServerSettings, state: ServerState) -> None:
    """A --token for a pool the rendered cluster does not have would leave the intended pool open: refuse."""
    snapshot = state.snapshot
    if snapshot is None or not snapshot.pools:
        return  # nothing rendered yet: nothing to compare with
    for pool in sorted(settings.policy.tokens):
        if pool not in snapshot.pools:
            raise AuthSettingsError(f"--token {pool}", f"no pool {pool!r} in the rendered cluster "
                                    f"(pools: {', '.join(sorted(snapshot.pools)) or 'none'})")


def _bound(server: asyncio.AbstractServer) -> tuple[str, int]:
    for sock in getattr(server, "sockets", None) or []:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host, port = sock.getsockname()[:2]
            return host, port
    raise OSError("listener has no socket")


async def serve_forever(settings: ServerSettings, *, leader: bool = True,
                        announce: Callable[[Running], Awaitable[None] | None] | None = None) -> None:
    """Start, then run until SIGINT/SIGTERM."""
    running = await start(settings, leader=leader)
    gc.freeze()  # start-up objects (modules, first snapshot) leave the collector's generations: shorter pauses
    if announce is not None:
        maybe = announce(running)
        if maybe is not None:
            await maybe
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await running.stop()


def _follower_main(settings: ServerSettings) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us with SIGTERM
    asyncio.run(serve_forever(settings, leader=False))


def run(settings: ServerSettings, *, announce: Callable[[Running], None] | None = None) -> None:
    """Serve with `settings.workers` processes until interrupted."""
    if settings.workers <= 1:
        asyncio.run(serve_forever(settings, announce=announce))
        return
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if settings.store_dir is None and settings.etcd is None:
        tmp = tempfile.TemporaryDirectory(prefix="mco-store-")
        settings = replace(settings, store_dir=Path(tmp.name))
    if settings.etcd is None:
        open_store(settings.store_dir or Path("."))  # create the layout before anyone reads it
    ctx = multiprocessing.get_context("spawn")
    children: list[multiprocessing.process.BaseProcess] = []

    def spawn_followers(running: Running) -> None:
        bound = {scheme: (host, port) for scheme, host, port in running.addresses}
        follower = replace(settings, listen=bound.get("http"), tls_listen=bound.get("https"))
        for _ in range(settings.workers - 1):
            proc = ctx.Process(target=_follower_main, args=(follower,), daemon=True)
            proc.start()
            children.append(proc)
        if announce is not None:
            announce(running)

    try:
        asyncio.run(serve_forever(settings, announce=spawn_followers))
    finally:
        for proc in children:
            if proc.pid is not None and proc.is_alive():
                os.kill(proc.pid, signal.SIGTERM)
        for proc in children:
            proc.join(timeout=10)
        if tmp is not None:
            tmp.cleanup()
