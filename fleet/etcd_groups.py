"""Group commit for the etcd store: what a replica asks at the same moment is written in one transaction.

Why: each etcd transaction costs a gRPC call, a raft proposal on every member and a watch event batch on every
replica; during a rollout a replica stores hundreds of hand-outs and reports a second, each of which would wait
for its own round trip. As databases flush many commits with one log write, requests queue on the connection's
loop (fleet/etcd_client.py) and a leader task takes every request queued meanwhile (up to the group's size) and
runs them as one group (`_run`, the subclass's rule: fleet/etcd_claims.py for hand-outs, fleet/etcd_reports.py
for reports), then the next group, until the queue is empty. Where groups may overlap, a few lead at once
(`leaders`), so the queue drains at several transactions per round trip. Everything runs on that one loop: a
replica's request handlers await `submit` there directly, other threads through `Connection.call`. A failure of
the group reaches each member as its own exception instance (each is raised in its own coroutine).
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar

from fleet.store import StoreError

I = TypeVar("I")  # noqa: E741  (what a member asks)
R = TypeVar("R")  # what it is answered


class Member(Generic[I, R]):
    """One request of a group: what it asks, and the future its outcome is set on."""

    def __init__(self, item: I, outcome: asyncio.Future[R | None]) -> None:
        self.item = item
        self.outcome = outcome

    def finish(self, result: R | None = None, error: BaseException | None = None) -> None:
        """Answer the request (a request whose caller went away is answered nowhere)."""
        if self.outcome.done():
            return
        if error is not None:
            self.outcome.set_exception(error)
        else:
            self.outcome.set_result(result)


class Groups(Generic[I, R]):
    """The queue of one store's requests of one kind (rules in the module docstring), with at most `leaders` groups
    in flight at once: 1 where groups must not overlap (hand-outs compare their pool's fence), more where they may
    (records compare only their own key): then one group's round trip does not hold up the next."""

    def __init__(self, size: int, leaders: int = 1) -> None:
        self.size = size
        self.leaders = leaders
        self._queue: list[Member[I, R]] = []
        self._running = 0  # leaders running: counted down in the step their last look finds the queue empty
        self._leading: set[asyncio.Task[None]] = set()  # their tasks (the loop keeps only weak references)

    async def submit(self, item: I) -> R | None:
        """Run `item` as part of a group (on the connection's loop); its outcome, or its exception raised here."""
        return await self.enqueue(item)

    def enqueue(self, item: I) -> asyncio.Future[R | None]:
        """Queue `item` (on the connection's loop); the future its outcome is set on (cancelled by a caller that
        stops waiting: a group then skips what it can of it)."""
        loop = asyncio.get_running_loop()
        mine: Member[I, R] = Member(item, loop.create_future())
        self._queue.append(mine)
        if self._running < self.leaders:
            self._running += 1
            task = loop.create_task(self._lead())
            self._leading.add(task)
            task.add_done_callback(self._leading.discard)
        return mine.outcome

    async def _lead(self) -> None:
        """Run groups until the queue is empty; a request queued after that last look starts a leader of its own
        (the look and the count down are one step of the loop: no request is left without one)."""
        try:
            while self._queue:
                group, self._queue = self._queue[:self.size], self._queue[self.size:]
                try:
                    await self._run(group)
                except BaseException as exc:  # a failure of the group's transaction is every member's
                    for member in group:
                        member.finish(error=own_copy(exc))
                    if isinstance(exc, asyncio.CancelledError):  # the loop stops: no leader will take the rest
                        queued, self._queue = self._queue, []
                        for member in queued:
                            member.finish(error=own_copy(exc))
                        raise
        finally:
            self._running -= 1

    async def _run(self, group: list[Member[I, R]]) -> None:
        """Run and finish every member of `group` (the subclass's rule)."""
        raise NotImplementedError


def own_copy(exc: BaseException) -> BaseException:
    """`exc` as a new instance for one waiting coroutine to raise (raising one instance in many rewrites its
    traceback under each other); the original is its cause. Anything but a StoreError (a bug, or the loop
    stopping) becomes one, so every member of the group is answered alike."""
    copy = type(exc)(exc.path, exc.message) if isinstance(exc, StoreError) else \
        StoreError("etcd", f"the grouped write failed: {type(exc).__name__}")
    copy.__cause__ = exc
    return copy
