"""What one server process currently serves, shared by the handlers and the reloader."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from server.handout_wait import HandoutWaiters
from server.snapshot import Snapshot


@dataclass
class ServerState:
    """Mutable holder of the current snapshot; replaced whole, never edited (the atomic swap).

    `ready` turns True after the first good render (leader) or the first snapshot with a servable pool
    (follower); `render_errors` are problems of the last render not tied to one pool (they leave the
    previous snapshot in place); `store_error` is set while the store cannot be read.
    """

    snapshot: Snapshot | None = None
    ready: bool = False
    render_errors: tuple[str, ...] = ()
    store_error: str | None = None
    generations: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # set: re-read the store now
    feed: Any = None  # an etcd replica's mirror: its health() says whether it is current (server/replica.py)
    handouts: HandoutWaiters = field(default_factory=HandoutWaiters)  # held claims (server/handout_wait.py)
    on_swap: list[Callable[[Snapshot], None]] = field(default_factory=list)

    def swap(self, snapshot: Snapshot) -> None:
        """Serve `snapshot` from the next request on."""
        self.snapshot = snapshot
        self.generations = snapshot.generation
        for listener in self.on_swap:
            listener(snapshot)
