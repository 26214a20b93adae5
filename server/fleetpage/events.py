"""Live updates: `GET /ui/events` is a server-sent event stream that says "changed" when the fleet does.

One watcher task per process runs while at least one browser listens. It reads the store's pools and
node reports through the store seam every poll interval (or at once when this process stores a report)
and, when their fingerprint moved, tells every listener; the page's script then re-fetches the page it
shows. The event carries only a counter, no fleet data, so the stream needs no more access than the
address check. A comment line every `KEEPALIVE` seconds keeps proxies from closing an idle stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Callable

from aiohttp import web

from fleet.rendered import NodeStatus
from fleet.store import Store, StoreError
from server.fleetpage.history import ReportHistory

KEEPALIVE = 15.0


def fleet_fingerprint(store: Store, history: ReportHistory) -> str:
    """A digest of every pool record and node report (and the history learns what it had not seen)."""
    digest = hashlib.blake2b(digest_size=16)
    for pool in store.list_pools():
        digest.update(repr(store.get_pool(pool).to_dict()).encode())
    nodes: list[NodeStatus] = store.list_node_status()
    history.observe(nodes)
    for n in nodes:
        digest.update(f"{n.name}\0{n.pool}\0{n.state}\0{n.current_config}\0{n.desired_config}\0{n.reported_at}"
                      f"\0{n.message}\n".encode())
    return digest.hexdigest()


class Broadcaster:
    """Fans "changed" out to the open event streams."""

    def __init__(self, store: Store, history: ReportHistory, interval: float) -> None:
        self.store = store
        self.history = history
        self.interval = interval
        self.version = 0
        self._listeners: set[asyncio.Queue[int]] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def poke(self) -> Callable[[], None]:
        """A callback, safe from any thread, that makes the watcher look at the store now."""
        def wake() -> None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._wake.set)
        return wake

    async def _watch(self) -> None:
        last = ""
        while self._listeners:
            try:
                fingerprint = await asyncio.to_thread(fleet_fingerprint, self.store, self.history)
            except StoreError:
                fingerprint = last  # the store is unreadable for now; the pages say so themselves
            if fingerprint != last:
                if last:
                    self.version += 1
                    for queue in self._listeners:
                        queue.put_nowait(self.version)
                last = fingerprint
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
        self._task = None

    async def stream(self, request: web.Request) -> web.StreamResponse:
        """The event stream of one browser, until it goes away."""
        self._loop = asyncio.get_running_loop()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                                               "X-Content-Type-Options": "nosniff"})
        await response.prepare(request)
        queue: asyncio.Queue[int] = asyncio.Queue()
        self._listeners.add(queue)
        if self._task is None:
            self._task = asyncio.create_task(self._watch())
        try:
            await response.write(b"retry: 2000\n: connected\n\n")
            while True:
                try:
                    version = await asyncio.wait_for(queue.get(), KEEPALIVE)
                except TimeoutError:
                    await response.write(b": keepalive\n\n")
                    continue
                if version < 0:  # the server is stopping
                    break
                await response.write(f"event: change\ndata: {version}\n\n".encode())
        except ConnectionResetError:  # the browser went away (a cancellation propagates as it should)
            pass
        finally:
            self._listeners.discard(queue)
        return response

    async def close(self) -> None:
        """Stop the watcher (app shutdown)."""
        for queue in self._listeners:
            queue.put_nowait(-1)
        self._listeners.clear()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
