"""Group commit for the etcd store: what a replica's threads ask at the same moment is written in one transaction.

Why: each etcd transaction costs a gRPC call, a raft proposal on every member and a watch event batch on every
replica; during a rollout a replica's threads store hundreds of hand-outs and reports a second, each of which
would wait for its own round trip. As databases flush many commits with one log write, the first thread to ask
leads: it takes every request queued meanwhile (up to the group's size) and runs them as one group (`_run`, the
subclass's rule: fleet/etcd_claims.py for hand-outs, fleet/etcd_reports.py for reports), then hands the lead to the
oldest request queued since, so no request waits on others' groups for long. Where groups may overlap, a few
lead at once (`leaders`), so the queue drains at several transactions per round trip. A failure of the group reaches each
member as its own exception instance, since each is raised in its own thread.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

from fleet.store import StoreError

I = TypeVar("I")  # noqa: E741  (what a member asks)
R = TypeVar("R")  # what it is answered


class Member(Generic[I, R]):
    """One request of a group: what it asks, and its outcome once finished."""

    def __init__(self, item: I) -> None:
        self.item = item
        self.wake = threading.Event()  # set when finished, or when asked to lead
        self.lead = False
        self.finished = False
        self.result: R | None = None
        self.error: BaseException | None = None

    def finish(self, result: R | None = None, error: BaseException | None = None) -> None:
        self.result, self.error, self.finished = result, error, True
        self.wake.set()

    def outcome(self) -> R | None:
        if self.error is not None:
            raise self.error
        return self.result


class Groups(Generic[I, R]):
    """The queue of one store's requests of one kind (rules in the module docstring), with at most `leaders` groups
    in flight at once: 1 where groups must not overlap (hand-outs compare their pool's fence), more where they may
    (records compare only their own key): then one group's round trip does not hold up the next."""

    def __init__(self, size: int, leaders: int = 1) -> None:
        self.size = size
        self.leaders = leaders
        self._lock = threading.Lock()
        self._queue: list[Member[I, R]] = []
        self._leading = 0

    def submit(self, item: I) -> R | None:
        """Run `item` as part of a group; its outcome (or its exception, raised here)."""
        mine: Member[I, R] = Member(item)
        with self._lock:
            self._queue.append(mine)
            if self._leading < self.leaders:
                self._leading += 1
                mine.lead = True
        while not mine.lead:
            mine.wake.wait()
            if mine.finished:
                if mine.lead:  # handed the lead while another leader's group finished it: pass the lead on
                    self._pass_lead()
                return mine.outcome()
        try:
            while not mine.finished:
                with self._lock:
                    group, self._queue = self._queue[:self.size], self._queue[self.size:]
                if not group:  # another leader took this request in its group: wait for that group's outcome
                    mine.wake.clear()
                    if not mine.finished:
                        mine.wake.wait()
                    continue
                try:
                    self._run(group)
                except BaseException as exc:  # a failure of the group's transaction is every member's
                    for member in group:
                        if not member.finished:
                            member.finish(error=own_copy(exc))
        finally:
            self._pass_lead()
        return mine.outcome()

    def _pass_lead(self) -> None:
        """A leader is done: the lead goes to the oldest request queued since that leads no group yet, if any. (A
        request's `lead` is only set while it is queued, and it is finished only once a group took it out of the
        queue: so a finished request's `lead` no longer changes.)"""
        with self._lock:
            waiting = next((m for m in self._queue if not m.lead), None)
            if waiting is not None:
                waiting.lead = True
                waiting.wake.set()
            else:
                self._leading -= 1

    def _run(self, group: list[Member[I, R]]) -> None:
        """Run and finish every member of `group` (the subclass's rule)."""
        raise NotImplementedError


def own_copy(exc: BaseException) -> BaseException:
    """`exc` as a new instance for one waiting thread to raise (raising one instance in many threads rewrites its
    traceback under each other); the original is its cause. Anything but a StoreError (a bug) becomes one, so
    every member of the group is answered alike."""
    copy = type(exc)(exc.path, exc.message) if isinstance(exc, StoreError) else \
        StoreError("etcd", f"the grouped write failed: {type(exc).__name__}")
    copy.__cause__ = exc
    return copy
