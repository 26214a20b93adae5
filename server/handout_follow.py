"""Waking held hand-outs when slots may have freed: the waiters of server/handout_wait.py wired to what this
process serves (its `ServerState`: snapshots swapped in) and to the store (directory) or the etcd mirror.

Where it sits: above both server/state.py (which holds the waiters) and server/handout_wait.py (the waiters
and their rules), so neither imports the other's user.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any

from fleet.clock import system_clock
from fleet.image_pulls import pull_rule
from fleet.rendered import PoolRecord
from fleet.rollout import NodeStatuses, turn_rule
from fleet.store import Store, StoreError
from server.handout_wait import HandoutWaiters, free_slots
from server.snapshot import Snapshot
from server.state import ServerState

if TYPE_CHECKING:
    from fleet.etcd_mirror import Mirror

log = logging.getLogger("mco.server")
LOST_RECHECK = 0.05  # seconds after a woken claim lost before the free slots are counted again
AT_MARGIN = 0.05     # seconds after a window's opening before the free slots are counted


# target, free slots, turn rule (`HandoutWaiters.offer`), in how many seconds to count again though nothing
# changes (`free_slots`: a window's opening, measured on the clock the count read; None: at the next change), and
# which held nodes may pull the target's OS image now (`HandoutWaiters.offer_pulls`; None: none)
Count = tuple[str | None, int, Callable[[str], bool] | None, float | None, Callable[[str], bool] | None]


def counted(waiters: HandoutWaiters, record: PoolRecord | None, head: str, statuses: NodeStatuses,
            pool: str, pulls: bool = False) -> Count:
    """What a count offers the pool's held claims: its target, its free slots and (with slots free for them) the
    turn rule read from the same statuses (fleet/rollout.py `turn_rule`, with this process's presence), so only
    requests whose turn it is are woken; with `pulls` (`HandoutWaiters.wants_pulls`, read on the event loop), the
    rule of the pool's free OS image pulls (fleet/image_pulls.py `pull_rule`), read the same way. `head`: the node
    of the first held request (`HandoutWaiters.head`, read on the event loop; "": none, so no rule is read). One
    clock, the one the presence verdict is read with (the server's), says both what is open now and how long until
    a window opens."""
    present, now = waiters.presence(record.rollout.offline_grace_seconds) \
        if waiters.presence is not None and record is not None else (None, system_clock())
    target, free, at = free_slots(record, statuses, now)
    later = (at - now).total_seconds() if at is not None else None
    pulling = pull_rule(record, statuses, now, present) if pulls and record and present is not None else None
    if record is None or not head or free <= waiters.in_flight(pool) or present is None:
        return target, free, None, later, pulling
    return target, free, turn_rule(record, statuses, free, present), later, pulling


def _targets(record: PoolRecord | None) -> Callable[[str], str | None] | None:
    """The config each node of the pool is to run, when machine documents give some their own (else None: the
    pool's target for all): what `HandoutWaiters.offer_pulls` asks whether a held node still needs a pull."""
    return record.target_for if record is not None and record.machines else None


def follow_snapshots(state: ServerState, store: Store, interval: float) -> Callable[[], Awaitable[None]]:
    """Directory (or memory) store: count the free slots of the pools with held claims (`Store.read_statuses`: the
    counts the store keeps, brought up to date, in a thread) and wake that many, when a new snapshot changes such a
    pool's target, pause or maxUnavailable, and every `interval` seconds while this process holds claims. Returns
    what stops the counting (at shutdown)."""
    waiters = state.handouts
    seen: dict[str, tuple[object, ...]] = {}
    tasks: set[asyncio.Task[None]] = set()  # the counts running, and the periodic one: cancelled by `stop`
    sweeping: list[asyncio.Task[None]] = []

    def rollout(record: PoolRecord) -> tuple[object, ...]:
        return record.current, record.paused, record.max_unavailable

    def spawn(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    async def offer_counted(pools: list[str]) -> None:
        snapshot = state.snapshot
        records = {pool: entry.record if snapshot is not None and (entry := snapshot.pools.get(pool)) else None
                   for pool in pools}
        targets = {pool: record.current if record else None for pool, record in records.items()}
        heads = {pool: waiters.head(pool, target) for pool, target in targets.items()}
        pulls = {pool: waiters.wants_pulls(pool, target) for pool, target in targets.items()}
        unknown = [c for pool, target in targets.items() for c in waiters.unknown_images(pool, target)]

        def count(statuses: NodeStatuses) -> dict[str, Count]:
            return {pool: counted(waiters, records[pool], heads[pool], statuses, pool, pulls[pool]) for pool in pools}

        def read() -> dict[str, Count]:
            if unknown and waiters.load_images is not None:
                waiters.load_images(unknown)  # the OS images `offer_pulls` compares, read before the count
            return store.read_statuses(count)

        try:
            offers = await asyncio.to_thread(read)
        except StoreError:
            return  # the held claims are answered at their deadline, or at the next count
        for pool, (target, free, turn, _, pulling) in offers.items():  # (a window's opening: the next sweep)
            waiters.offer(pool, target, free, turn, _targets(records[pool]))
            waiters.offer_pulls(pool, target, pulling, _targets(records[pool]))

    def swapped(snapshot: Snapshot) -> None:
        changed = []
        for name, entry in snapshot.pools.items():
            key = rollout(entry.record)
            if seen.get(name, key) != key and name in waiters.pools():
                changed.append(name)
            seen[name] = key
        if changed:
            spawn(offer_counted(changed))

    async def sweep() -> None:
        try:
            while not waiters.closing and waiters.pools():
                await asyncio.sleep(interval)
                if held := waiters.pools():
                    try:
                        await offer_counted(held)
                    except Exception:  # a bug must not end the counting: held claims would wait for their deadline
                        log.exception("counting free slots for held claims failed")
        finally:
            sweeping.clear()

    def held() -> None:
        if not sweeping and not waiters.closing:
            sweeping.append(spawn(sweep()))

    async def stop() -> None:
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def recount(pool: str) -> None:  # server/handout_wait.py `on_recount`
        if pool in waiters.pools() and not waiters.closing:
            spawn(offer_counted([pool]))

    if state.snapshot is not None:
        seen.update((name, rollout(entry.record)) for name, entry in state.snapshot.pools.items())
    state.on_swap.append(swapped)
    waiters.on_held = held
    waiters.on_recount = recount
    return stop


def follow_mirror(state: ServerState, mirror: Mirror, loop: asyncio.AbstractEventLoop) -> None:
    """etcd replica: after every change the mirror applies (on the etcd thread), offer each pool with held
    claims its free slots, read from the mirror's memory on the event loop (O(1) per pool, O(canaries) during a
    canary wave); and once more when a maintenance window opens, which no change announces."""
    waiters = state.handouts
    scheduled = [False]
    timer: list[asyncio.TimerHandle | None] = [None]
    loading: set[asyncio.Task[None]] = set()  # OS images being read (never under the mirror's lock)

    async def load(configs: list[str]) -> None:
        if waiters.load_images is None:
            return
        await asyncio.to_thread(waiters.load_images, configs)
        if all(waiters.image_of(c) is not None for c in configs):  # read: count again (not read: at the next change)
            recount("")

    def recheck() -> None:
        scheduled[0] = False  # before reading: a change applied from here on schedules another pass
        later: list[float] = []
        for pool in waiters.pools():
            record = mirror.pool(pool)
            current = record.current if record else None
            head, pulls = waiters.head(pool, current), waiters.wants_pulls(pool, current)
            if unknown := waiters.unknown_images(pool, current):
                if not loading:
                    task = loop.create_task(load(unknown))
                    loading.add(task)
                    task.add_done_callback(loading.discard)
                pulls = False
            _, (target, free, turn, wait, pulling) = mirror.decide(partial(counted, waiters, record, head, pool=pool,
                                                                           pulls=pulls))
            waiters.offer(pool, target, free, turn, _targets(record))
            waiters.offer_pulls(pool, target, pulling, _targets(record))
            if wait is not None:
                later.append(wait)
        if later:
            if timer[0] is not None:
                timer[0].cancel()
            timer[0] = loop.call_later(max(min(later), 0.0) + AT_MARGIN, counted_later)

    def counted_later() -> None:
        timer[0] = None
        if not scheduled[0]:
            scheduled[0] = True
            recheck()

    def changed() -> None:  # on the etcd thread
        if not scheduled[0]:
            scheduled[0] = True
            loop.call_soon_threadsafe(recheck)

    def lost() -> None:  # on the event loop: the slots offered while the loser decided may still be free
        # (a little later: a claim refused because another node's turn it is would be woken again at once, and
        # lose again, until that node asks)
        if not scheduled[0]:
            scheduled[0] = True
            loop.call_later(LOST_RECHECK, recheck)

    def recount(_pool: str) -> None:  # on the event loop: server/handout_wait.py `on_recount`
        if not scheduled[0]:
            scheduled[0] = True
            loop.call_soon(recheck)

    mirror.on_change(changed)
    waiters.on_lost = lost
    waiters.on_recount = recount
