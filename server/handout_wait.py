"""Held hand-outs: `POST /nodes/{name}/desired?wait=SECONDS` keeps a node that would be told "stay" until a
slot may have freed, instead of the node asking again and again.

Why: 10,000 nodes polling every 2 s ask ~4,000 times a second, and polling puts up to one interval between a
slot freeing and a node taking it (bench/README.md, scale_out_rollout_bench.py). A bounded long poll (the
pattern of Kubernetes watches and etcd's own) costs one request per node per wait and hands a freed slot out
as soon as this process sees it free.

Rules (one `HandoutWaiters` per server process, on its event loop):
- A claim whose answer is the node's own current config ("stay") is held in its pool's queue, keyed by the
  config the node runs, in the pool's rollout order (fleet/rollout.py `rollout_rank`: nodes going back from a
  reverted config first, then MCO's node order), then in order of first arrival.
- Whatever may free a slot, as this process sees it, wakes at most as many held requests as slots are free
  (`offer`: the free slots, minus requests woken and not yet decided) or were freed (`freed`), oldest first,
  skipping nodes already at the pool's target (a free slot changes nothing for them). So freed slots go to the
  waiting nodes in the rollout's order. An etcd replica's mirror
  applying any change calls `offer` with the pool's free slots from memory (server/handout_follow.py
  `follow_mirror`, wired by server/replica.py); on the directory store a report handled here that makes its node available calls
  `freed(1)` (server/node_routes.py); a pool record change (target, pause, maxUnavailable) counts the free
  slots once, and so does every poll interval while the process holds claims (`follow_snapshots`, in
  server/handout_follow.py, which wires the waiters to the server's state): a report
  handled by another worker process of `--workers N`, or a pause set and lifted between two polls, frees
  slots this process does not hear of.
- A count comes with the turn rule read with it (fleet/rollout.py `turn_rule`, with this process's presence): no
  request whose node's turn has not come is woken, nor any behind it, and the pool is counted again TURN_WAIT
  seconds later. So a node that left its hold (or is held by another replica) keeps its turn, and one gone for
  longer than its pool's offline-grace is passed over, by the rule a claim that does not wait is decided by.
- A woken request decides again (the store's compare-and-swap or lock); if it loses, it waits again in its
  first-arrival place, so it is first the next time, and (etcd) the free slots are counted again: while it
  decided, it was counted as taking one. At its deadline it decides once more and answers. A woken request whose
  client has gone decides nothing (its node is handed nothing it will never hear of) and gives its wake back.
- The OS image before the slot (`offer_pulls`): a count also wakes the held requests whose node needs the target's
  OS image (it runs another one and has not staged it: the route's images, `image_of`) and may pull it now
  (fleet/image_pulls.py `pull_rule`, read with the count: the pool's `max-concurrent-pulls` in the rollout order),
  each to decide again as a claim that arrives (server/node_routes.py `_pull`), whose answer then names the image as
  `prefetch`. Such a wake is not a slot (not in flight); a request not let pull waits again. The line of requests that
  may pull is built once per target and holds each request at most once per wait, so a target's move costs at most one decision and
  one answer per held request, and a node that pulls comes back only when it has staged the image.
  A request with `?prestage=1` whose turn for a slot has come but whose node still needs the image is not woken
  for the slot (its decision would only tell it to pull, or to stay): it holds its turn, and is woken to pull.
- Shutdown (`close`) answers every held request at once with its last decision.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fleet.rendered import PoolRecord
from fleet.rollout import MAX_HANDOUT_WAIT, NodeStatuses, RolloutError, max_unavailable_count
from fleet.rollout_gates import pool_hold
from fleet.rollout_turn import Present, waiting
from server.errors import ServerError

log = logging.getLogger("mco.server")
TURN_WAIT = 0.5  # seconds before a pool whose first held request's turn had not come is counted again
MAX_WAIT = MAX_HANDOUT_WAIT  # seconds (300): longer holds buy nothing, and every proxy would need its timeout above it
_WAIT_RE = re.compile(r"[0-9]{1,6}(?:\.[0-9]{1,6})?\Z")  # no nested quantifier: linear on any input


class WaitError(ServerError):
    """The `wait` query parameter is unusable; the message says why."""


class PrestageError(ServerError):
    """The `prestage` query parameter is unusable; the message says why."""


def parse_wait(values: list[str]) -> float:
    """The `wait` query parameter: absent -> 0; a decimal number of seconds 0..MAX_WAIT, given once."""
    if not values:
        return 0.0
    if len(values) > 1:
        raise WaitError("wait given more than once")
    text = values[0]
    if not _WAIT_RE.match(text):
        raise WaitError(f"wait must be a number of seconds from 0 to {MAX_WAIT}")
    seconds = float(text)
    if seconds > MAX_WAIT:
        raise WaitError(f"wait must be at most {MAX_WAIT} seconds")
    return seconds


def parse_prestage(values: list[str]) -> bool:
    """The `prestage` query parameter: whether the claiming node pulls a new OS image when told to (`prefetch`) and
    takes its slot only once it staged it (server/node_routes.py); absent -> no, as clients before it."""
    if not values:
        return False
    if len(values) > 1 or values[0] not in ("0", "1"):
        raise PrestageError("prestage must be given once, as 1 or 0")
    return values[0] == "1"


def free_slots(record: PoolRecord | None, statuses: NodeStatuses, now: datetime) -> tuple[str | None, int, datetime | None]:
    """(the pool's target, how many held claims a slot may go to now, when to count again though nothing changes: the
    next maintenance window's opening, None: at the next change). No slot while the pool is paused or has no
    target, nor while a gate holds it (fleet/rollout_gates.py `pool_hold`, the one order of the gates), but during
    the canary wave the canaries still to go (the first in the held queue's order): a claim woken then would only
    be told "stay" again, and waking it again and again burnt a replica's CPU while the canaries soaked."""
    if record is None or not record.current or record.paused:
        return (record.current if record is not None else None), 0, None
    counts = statuses.counts(record.name)
    try:
        limit = max_unavailable_count(record.max_unavailable, counts.members)
    except RolloutError:
        return record.current, 0, None
    free = max(limit - counts.unavailable, 0)
    hold = pool_hold(record, statuses, now) if free else None
    if hold is None:
        return record.current, free, None
    going = sum(1 for name in hold.canaries if waiting(statuses.get(name), record))
    return record.current, min(free, going), hold.opens


@dataclass(eq=False)
class Ticket:
    """One held request: its first-arrival number, and whether it was woken and has not decided since."""

    seq: int
    rank: tuple[Any, ...] = ()  # its place in the rollout order (set by the route before each wait)
    pool: str = ""
    node: str = ""  # whose request it is (set by the route): what a count's turn rule is asked about
    future: asyncio.Future[bool] | None = None
    woken: bool = False
    config: str = ""  # the config its node runs (set by `wait`)
    staged: str = ""  # the config whose OS image its node reported staged (set by the route before each wait)
    waits: int = 0    # its waits so far: a queue entry of an earlier wait is not this one (`_live`)
    prestage: bool = False  # its node takes its slot only once it staged the target's OS image (`?prestage=1`)


Entry = tuple[tuple[Any, ...], Ticket]  # ((rank, first arrival, wait), ticket): unique, so a heap never compares tickets


def _live(entry: Entry) -> bool:
    """Whether a queue entry is its ticket's wait now (not one woken, timed out, cancelled or of an earlier wait)."""
    ticket = entry[1]
    return entry[0][-1] == ticket.waits and ticket.future is not None and not ticket.future.done()


@dataclass
class _PoolQueue:
    # Heaps by rollout order then first arrival, one per config the held nodes run. A heap is only ever changed in place: every
    # waiter holds a reference to its own, and a heap replaced by a new list would lose what others pushed since.
    by_config: dict[str, list[Entry]] = field(default_factory=dict)
    held: int = 0        # tickets waiting now
    in_flight: int = 0   # tickets woken that have not decided again yet
    recount_due: bool = False  # a count found the first ticket's turn not come: another one is scheduled
    # the held tickets that may yet be let pull `pull_for`'s OS image (`offer_pulls`), in the same order; built again
    # when the target moves, then each one taken at most once per wait
    pull_for: str = ""
    pull_line: list[Entry] = field(default_factory=list)
    # the config each node is to run (PoolRecord.target_for: a machine document's own config; None: the pool's
    # target for every node), given with the count: what a node's pull is of
    target_for: Callable[[str], str | None] | None = None


class HandoutWaiters:
    """The held hand-outs of one server process (rules in the module docstring). Event-loop thread only."""

    def __init__(self) -> None:
        self._pools: dict[str, _PoolQueue] = {}
        self._seq = itertools.count()
        self.closing = False
        self.on_lost: Callable[[], None] | None = None  # a woken claim lost the slot and waits again
        self.on_held: Callable[[], None] | None = None  # a request was put in a queue
        self.on_recount: Callable[[str], None] | None = None  # pool: count its free slots again, wake that many
        # the pool's offline-grace -> (this process's presence verdict, now): what a count's turn rule is read with
        self.presence: Callable[[int], tuple[Present, datetime]] | None = None
        # a rendered config's OS image ("": none; None: not read yet), and what reads those not read yet (blocking:
        # called on a thread) -- the route's (server/node_routes.py), so a count knows which held nodes need a pull
        self.image_of: Callable[[str], str | None] = lambda _config: None
        self.load_images: Callable[[list[str]], None] | None = None
        self.woken = 0  # held requests woken because a slot may have freed, since start (`mco_held_claim_wakeups`)
        self.lost = 0   # of those, woken requests that lost the slot and waited again (`..._lost`)
        self.pull_woken = 0  # held requests woken to pull the target's OS image, since start (`..._pull_wakeups`)

    def ticket(self) -> Ticket:
        """A place in line, kept across the waits of one request."""
        return Ticket(next(self._seq))

    def held(self) -> int:
        """Requests held now, in every pool."""
        return sum(q.held for q in self._pools.values())

    def pools(self) -> list[str]:
        """Pools with held requests."""
        return [name for name, q in self._pools.items() if q.held]

    async def wait(self, ticket: Ticket, pool: str, current: str, timeout: float) -> bool:
        """Hold `ticket` (a node of `pool` running `current`) until woken (True) or `timeout` (False)."""
        lost = ticket.woken
        self.settle(ticket)
        if self.closing:
            return False
        queue = self._pools.setdefault(pool, _PoolQueue())
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        ticket.pool, ticket.future, ticket.config = pool, future, current
        ticket.waits += 1
        entry = ((ticket.rank, ticket.seq, ticket.waits), ticket)
        heap = queue.by_config.setdefault(current, [])
        heapq.heappush(heap, entry)
        queue.held += 1
        if queue.pull_for:
            if self._needs_pull(ticket, queue.pull_for) is None:
                queue.pull_for = ""  # a config whose image is not read yet: the line is built again at the next count
            elif self._needs_pull(ticket, queue.pull_for):
                heapq.heappush(queue.pull_line, entry)
        if self.on_held is not None:
            self.on_held()
        if lost:
            self.lost += 1
        if lost and self.on_lost is not None:
            self.on_lost()  # while it decided, `offer` counted it as taking a slot: count again
        try:
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            return False
        finally:
            if not ticket.woken:  # timed out or cancelled: its heap entry is dropped when reached
                queue.held -= 1
                for line in (heap, queue.pull_line):
                    if len(line) > 2 * queue.held + 64:  # many dropped entries: sweep them, in place (see _PoolQueue)
                        line[:] = [e for e in line if _live(e)]
                        heapq.heapify(line)

    def give_back(self, ticket: Ticket) -> None:
        """The woken `ticket`'s client has gone: it takes no slot; the free slots are counted again."""
        woken = ticket.woken
        self.settle(ticket)
        if woken and self.on_recount is not None:
            self.on_recount(ticket.pool)

    def settle(self, ticket: Ticket) -> None:
        """The woken `ticket` has decided again: it no longer counts as taking a slot."""
        if ticket.woken:
            ticket.woken = False
            queue = self._pools.get(ticket.pool)
            if queue is not None:
                queue.in_flight -= 1

    def head(self, pool: str, target: str | None) -> str:
        """The node of the request `offer` would wake first ("" : none). Event-loop thread only."""
        queue = self._pools.get(pool)
        best = self._best([h for c, h in queue.by_config.items() if c != target]) if queue and queue.held else None
        return best[0][1].node if best else ""

    def in_flight(self, pool: str) -> int:
        """The pool's requests woken that have not decided yet."""
        queue = self._pools.get(pool)
        return queue.in_flight if queue is not None else 0

    def offer(self, pool: str, target: str | None, free: int, turn: Callable[[str], bool] | None = None,
              target_for: Callable[[str], str | None] | None = None) -> int:
        """`free` slots are open in `pool` now: wake that many held requests, less those woken and undecided, none
        whose node's turn has not come (`turn`, read with the count). `target_for`: as for `offer_pulls`."""
        queue = self._pools.get(pool)
        if queue is not None:
            queue.target_for = target_for
        woken = self._wake(queue, target, free - queue.in_flight, turn) if queue is not None else 0
        self.woken += woken
        return woken

    def _needs_pull(self, ticket: Ticket, target: str) -> bool | None:
        """Whether `ticket`'s node would pull `target`'s OS image: it runs another image and has not staged it (None:
        an image not read yet). `target`: the pool's; a node a machine document names is to run its own config (the
        count's `target_for`), so one that runs or staged that config has nothing to pull. (A machine's config has
        its pool's OS image, renderer/machine_render.py: the pool target's image is the one compared.)"""
        queue = self._pools.get(ticket.pool)
        own = queue.target_for(ticket.node) if queue is not None and queue.target_for and ticket.node else None
        if (own or target) in (ticket.config, ticket.staged):
            return False
        image, current = self.image_of(target), self.image_of(ticket.config)
        if image is None or current is None:
            return None
        return bool(image) and image != current

    def unknown_images(self, pool: str, target: str | None) -> list[str]:
        """The configs (the target, those the pool's held nodes run) whose OS image `offer_pulls` needs and
        `image_of` has not read (`load_images` reads them, on a thread)."""
        queue = self._pools.get(pool)
        if queue is None or not queue.held or not target or queue.pull_for == target:
            return []
        configs = [target, *(c for c, heap in queue.by_config.items() if heap and c != target)]
        return [c for c in configs if self.image_of(c) is None]

    def wants_pulls(self, pool: str, target: str | None) -> bool:
        """Whether some held request of `pool` may yet be woken to pull `target`'s OS image (what a count reads the
        pull rule for: fleet/image_pulls.py `pull_rule`)."""
        queue = self._pools.get(pool)
        if queue is None or not queue.held or not target:
            return False
        if queue.pull_for != target:
            return True
        while queue.pull_line and not _live(queue.pull_line[0]):
            heapq.heappop(queue.pull_line)
        return bool(queue.pull_line)

    def offer_pulls(self, pool: str, target: str | None, rule: Callable[[str], bool] | None,
                    target_for: Callable[[str], str | None] | None = None) -> int:
        """Wake the held requests of `pool` whose node needs `target`'s OS image and may pull it now (`rule`, read
        with the count: fleet/image_pulls.py `pull_rule`; None: none may), in the rollout order, each to decide again
        as a claim that arrives does (its answer then names the image as `prefetch`). A request woken so takes no
        slot (it is not counted in flight); one that is not let pull waits again, behind no one. `target_for`: the
        config each node is to run (the pool record's, read with the count; None: `target` for every node)."""
        queue = self._pools.get(pool)
        if queue is not None:
            queue.target_for = target_for
        if queue is None or not queue.held or not target or rule is None or self.closing:
            return 0
        if queue.pull_for != target:
            if self.unknown_images(pool, target):
                return 0  # read first (`load_images`), then counted again
            entries = [e for heap in queue.by_config.values() for e in heap if _live(e)]
            queue.pull_line[:] = [e for e in entries if self._needs_pull(e[1], target)]
            heapq.heapify(queue.pull_line)
            queue.pull_for = target
        woken = 0
        line = queue.pull_line
        while line:
            entry = line[0]
            ticket = entry[1]
            needs = self._needs_pull(ticket, target) if _live(entry) else False
            if needs is None:  # an image no longer known (the route's cache was cleared): read, then built again
                queue.pull_for = ""
                break
            if not needs:
                heapq.heappop(line)
                continue
            if ticket.node and not rule(ticket.node):
                if not queue.recount_due and self.on_recount is not None:  # an earlier node may be passed over later
                    queue.recount_due = True
                    asyncio.get_running_loop().call_later(TURN_WAIT, self._recount, pool)
                break  # not its turn, nor that of any request behind it
            heapq.heappop(line)
            assert ticket.future is not None
            ticket.future.set_result(False)  # not a slot: it decides again as a claim that arrives (its turn checked)
            woken += 1
        self.pull_woken += woken
        return woken

    def recount(self, pool: str) -> None:
        """Something this process handled may have freed a slot or a pull of `pool`: count again (`on_recount`)."""
        queue = self._pools.get(pool)
        if queue is not None and queue.held and self.on_recount is not None and not self.closing:
            self.on_recount(pool)

    def _recount(self, pool: str) -> None:
        queue = self._pools.get(pool)
        if queue is not None:
            queue.recount_due = False
            if queue.held and not self.closing and self.on_recount is not None:
                self.on_recount(pool)

    def freed(self, pool: str, target: str | None, count: int = 1) -> int:
        """`count` slots just freed in `pool`: the free slots are counted again by the one rule that says whose turn
        it is (`on_recount`, as for any change); with no recount wired, that many held requests are woken."""
        queue = self._pools.get(pool)
        if queue is not None and queue.held and self.on_recount is not None and not self.closing:
            self.on_recount(pool)
            return 0
        woken = self._wake(queue, target, count) if queue is not None else 0
        self.woken += woken
        return woken

    def close(self) -> None:
        """Answer every held request now (server shutdown); later claims are not held."""
        self.closing = True
        for queue in self._pools.values():
            self._wake(queue, None, queue.held)

    @staticmethod
    def _best(heaps: list[list[Entry]]) -> list[Entry] | None:
        """The heap whose first request comes first (requests timed out, cancelled or woken dropped on the way)."""
        best: list[Entry] | None = None
        for heap in heaps:
            while heap and not _live(heap[0]):
                heapq.heappop(heap)  # timed out, cancelled, or woken to pull
            if heap and (best is None or heap[0][0] < best[0][0]):
                best = heap
        return best

    def _wake(self, queue: _PoolQueue, target: str | None, count: int,
              turn: Callable[[str], bool] | None = None) -> int:
        heaps = [h for config, h in queue.by_config.items() if config != target or target is None]
        woken = 0
        aside: list[tuple[list[Entry], Entry]] = []  # in their turn, but their slot waits for their image
        while woken < count and queue.held > len(aside):
            best = self._best(heaps)
            if best is None:
                break
            if turn is not None and best[0][1].node and not turn(best[0][1].node):
                if not queue.recount_due and self.on_recount is not None:  # its turn may come as time passes
                    queue.recount_due = True
                    asyncio.get_running_loop().call_later(TURN_WAIT, self._recount, best[0][1].pool)
                break  # not its turn, nor that of any request behind it
            if target is not None and best[0][1].prestage and self._needs_pull(best[0][1], target):
                aside.append((best, heapq.heappop(best)))  # woken to pull it (`offer_pulls`), not here; the
                continue  # nodes behind it within the free slots' turns may take them (fleet/rollout_turn.py)
            _, ticket = heapq.heappop(best)
            assert ticket.future is not None
            ticket.woken = True
            ticket.future.set_result(True)
            queue.held -= 1
            queue.in_flight += 1
            woken += 1
        for heap, entry in aside:  # back in their places
            heapq.heappush(heap, entry)
        return woken
