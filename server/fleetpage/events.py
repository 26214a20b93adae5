"""Live updates: `GET /ui/events` is a server-sent event stream that says "changed" when the fleet does.

One watcher task per process runs while at least one browser listens. Every poll interval it reads the
pool records and node reports through the store seam and compares them with what it read last time; when
they differ, it tells every listener, and the page's script re-fetches the page it shows. The comparison is
cheap because records are immutable and stores hand back the same objects while nothing changed (the
memory store and an etcd replica's mirror even the same list, until the next change; the directory store
re-reads only the files that changed): unchanged reports compare by identity, and only a changed one by
value, so no poll hashes or formats 10,000 reports. The event carries only a counter, no fleet data, so the
stream needs no more access than the address check. A comment line every `KEEPALIVE` seconds keeps proxies
from closing an idle stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from aiohttp import web

from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.store import Store, StoreError

KEEPALIVE = 15.0
Fleet = tuple[list[PoolRecord], Sequence[NodeStatus]]


def read_fleet(store: Store) -> Fleet:
    """Every pool record and node report, as the store has them now."""
    return [store.get_pool(p) for p in store.list_pools()], store.list_node_status()


def changed(before: Fleet | None, now: Fleet) -> bool:
    """Whether anything differs (records are frozen: equal objects are equal records, the same object at once)."""
    if before is None:
        return False
    return (before[1] is not now[1] and before[1] != now[1]) or before[0] != now[0]


class Broadcaster:
    """Fans "changed" out to the open event streams."""

    def __init__(self, store: Store, interval: float) -> None:
        self.store = store
        self.interval = interval
        self.version = 0
        self._listeners: set[asyncio.Queue[int]] = set()
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        last: Fleet | None = None
        while self._listeners:
            try:
                now = await asyncio.to_thread(read_fleet, self.store)
            except StoreError:
                now = None  # the store is unreadable for now; the pages say so themselves
            if now is not None:
                if changed(last, now):
                    self.version += 1
                    for queue in self._listeners:
                        queue.put_nowait(self.version)
                last = now
            await asyncio.sleep(self.interval)
        self._task = None

    async def stream(self, request: web.Request) -> web.StreamResponse:
        """The event stream of one browser, until it goes away."""
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
                try:  # asyncio.timeout: Python 3.11's wait_for can swallow a cancel (and drop a got item)
                    async with asyncio.timeout(KEEPALIVE):
                        version = await queue.get()
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
