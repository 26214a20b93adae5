"""`POST /nodes/{name}/desired?wait=SECONDS`: a claim that would be told "stay" is held until a slot frees (then
handed the target), a pause is lifted or the target moves, or the wait ends (then told "stay"); the oldest held
claim goes first and only as many wake as slots freed; shutdown answers held claims at once. On the directory
store and on an etcd replica (a real 3-member cluster), each a real server on a loopback port."""

from __future__ import annotations

import asyncio
import itertools
import shutil
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from fleet.clock import Clock, ManualClock, system_clock
from fleet.directory_store import DirectoryStore
from fleet.etcd_url import parse_url
from fleet.rendered import RenderedConfig
from fleet.store import Store
from fleet.store_open import close_store, open_store
from server.handout_wait import TURN_WAIT, HandoutWaiters
from server.run import Running, start
from server.settings import ServerSettings
from tests.builders import rendered_config
from tests.server.helpers import SOURCES, ignition_config, publish
from tests.serving import mco_serve

OLD = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=1))
NEW = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=2))
_prefixes = itertools.count()


@dataclass
class Served:
    """A running server over `store` (written by the test), at `base`."""

    store: Store
    running: Running
    base: str

    @property
    def held(self) -> int:
        return self.running.state.handouts.held()


def _seed(store: Store, **record: Any) -> None:
    """Pool worker at NEW (OLD in its history) with maxUnavailable 1; nodes a, b, c, d Done at OLD."""
    store.put_rendered(OLD)
    publish(store, NEW, max_unavailable=1, **record)
    for node in "abcd":
        store.put_node_status(_status(node, OLD))


def _status(node: str, config: RenderedConfig, state: str = "Done") -> Any:
    from fleet.node_status import NodeStatus

    return NodeStatus(f"node-{node}", "worker", config.name, config.name, state, "", "2026-01-01T00:00:00Z")


@asynccontextmanager
async def _serving(kind: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock = system_clock,
                   **record: Any) -> AsyncIterator[Served]:
    """A real server on the `kind` store ("directory" or "etcd"), seeded (`_seed`), reading `clock`."""
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log="off", poll_interval=0.05)
    store: Any
    if kind == "directory":
        store = DirectoryStore(tmp_path / "store")
        settings = replace(settings, store_dir=tmp_path / "store")
    else:
        url = request.getfixturevalue("etcd_cluster").url(f"handout-{next(_prefixes)}")
        store = open_store(url)
        settings = replace(settings, etcd=parse_url(url))
    _seed(store, **record)
    running = await start(settings, clock=clock)
    _, host, port = running.addresses[0]
    try:
        yield Served(store, running, f"http://{host}:{port}")
    finally:
        await running.stop()
        if kind == "etcd":
            close_store(running.reloader.store)
            close_store(store)


@pytest.fixture(params=["directory", "etcd"])
async def served(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Served]:
    async with _serving(request.param, request, tmp_path) as serving:
        yield serving


async def _claim(session: aiohttp.ClientSession, base: str, node: str, wait: float | str | None = None) -> Any:
    params = {"pool": "worker"} if wait is None else {"pool": "worker", "wait": str(wait)}
    async with session.post(f"{base}/nodes/node-{node}/desired", params=params) as response:
        assert response.status == 200, await response.text()
        return (await response.json())["desiredConfig"]


async def _report(session: aiohttp.ClientSession, base: str, node: str, config: RenderedConfig) -> None:
    body = {"pool": "worker", "currentConfig": config.name, "desiredConfig": config.name, "state": "Done"}
    async with session.post(f"{base}/nodes/node-{node}/status", json=body) as response:
        assert response.status == 200, await response.text()


async def _until(check: Callable[[], bool]) -> None:
    async def poll() -> None:
        while not check():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), 60)


BAD_WAITS = [
    ("negative", {"wait": "-1"}),
    ("word", {"wait": "soon"}),
    ("empty", {"wait": ""}),
    ("above-limit", {"wait": "301"}),
    ("exponent", {"wait": "1e2"}),
    ("nan", {"wait": "nan"}),
    ("infinity", {"wait": "inf"}),
    ("unit", {"wait": "5s"}),
    ("spaces", {"wait": " 5"}),
    ("too-many-digits", {"wait": "1.0000001"}),
    ("huge", {"wait": "9" * 400}),
]


@pytest.mark.parametrize(("params",), [(p,) for _, p in BAD_WAITS], ids=[i for i, _ in BAD_WAITS])
async def test_a_bad_wait_is_a_400_naming_it(served: Served, params: dict[str, str]) -> None:
    async with aiohttp.ClientSession() as session:
        for method in ("GET", "POST"):
            async with session.request(method, f"{served.base}/nodes/node-a/desired",
                                       params={"pool": "worker", **params}) as response:
                assert response.status == 400
                assert (await response.json())["path"] == "query wait"


@pytest.mark.parametrize(("query", "status"), [
    ("wait=1&wait=2", 400),
    ("wait=0", 200),
    ("wait=300", 200),
    ("wait=0.5", 200),
], ids=["twice", "zero", "limit", "fraction"])
async def test_wait_values(served: Served, query: str, status: int) -> None:
    async with aiohttp.ClientSession() as session:  # node-a: a slot is free, so even a long wait answers at once
        async with session.post(f"{served.base}/nodes/node-a/desired?pool=worker&{query}") as response:
            assert response.status == status, await response.text()
            if status == 200:
                assert (await response.json())["desiredConfig"] == NEW.name


async def test_only_the_claim_waits(served: Served) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{served.base}/nodes/node-a/desired", params={"pool": "worker", "wait": "5"}) as got:
            assert got.status == 400 and (await got.json())["path"] == "query wait"


async def test_a_held_claim_takes_the_slot_freed_and_only_the_oldest_wakes(served: Served) -> None:
    waiters = served.running.state.handouts
    async with aiohttp.ClientSession() as session:
        # node-a has the one slot (handed before: in this order it would not be first)
        served.store.put_node_status(replace(_status("a", OLD, "Working"), desired_config=NEW.name))
        b = asyncio.create_task(_claim(session, served.base, "b", wait=300))
        await _until(lambda: served.held == 1)
        c = asyncio.create_task(_claim(session, served.base, "c", wait=300))
        await _until(lambda: served.held == 2)
        d = asyncio.create_task(_claim(session, served.base, "d", wait=300))
        await _until(lambda: served.held == 3)
        await _report(session, served.base, "a", NEW)  # node-a is done: one slot frees
        assert await asyncio.wait_for(b, 60) == NEW.name  # the oldest held claim, long before its wait ends
        await _until(lambda: served.held == 2)  # c and d held again: no wake-up is still deciding
        # One slot freed, one wake-up won it. A count read while b's hand-out was being written (an etcd mirror
        # change, the directory store's periodic count) may also wake c: c then loses and waits again.
        assert waiters.woken - waiters.lost == 1
        await _report(session, served.base, "b", NEW)
        assert await asyncio.wait_for(c, 60) == NEW.name
        await _until(lambda: served.held == 1)
        assert waiters.woken - waiters.lost == 2
        assert not d.done()
        counted = waiters.woken, waiters.lost
        async with session.get(f"{served.base}/metrics") as metrics:
            text = await metrics.text()
        exported = dict(line.split(" ") for line in text.splitlines() if line.startswith("mco_held_claim_wakeups"))
        assert float(exported["mco_held_claim_wakeups_total"]) >= counted[0] >= 2  # counters: never below what
        assert float(exported["mco_held_claim_wakeups_lost_total"]) >= counted[1]  # was counted before the scrape
        d.cancel()


async def test_a_report_to_another_worker_wakes_a_held_claim(tmp_path: Path) -> None:
    """Two processes of `mco serve --workers 2` share one directory store (here two servers in one process, each
    with its own store instance and lock): a slot freed by a report to one wakes a claim held by the other within
    a poll interval, not at the claim's deadline."""
    servers = []
    try:
        for _ in range(2):
            store = DirectoryStore(tmp_path / "store")
            if not servers:
                _seed(store)
            settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log="off",
                                      poll_interval=0.05, store_dir=tmp_path / "store")
            running = await start(settings, store=store)
            _, host, port = running.addresses[0]
            servers.append(Served(store, running, f"http://{host}:{port}"))
        one, two = servers
        async with aiohttp.ClientSession() as session:
            assert await _claim(session, one.base, "a") == NEW.name  # node-a takes the one slot
            b = asyncio.create_task(_claim(session, two.base, "b", wait=300))
            await _until(lambda: two.held == 1)
            await _report(session, one.base, "a", NEW)  # worker one hears of it, worker two does not
            assert await asyncio.wait_for(b, 60) == NEW.name
    finally:
        for served in servers:
            await served.running.stop()


async def test_a_sweep_of_dropped_entries_keeps_every_held_request() -> None:
    """Regression: a held request that timed out swept its pool's dropped entries from the heap it had joined;
    once an earlier sweep had replaced that heap by a new list, the stale one was put back and the requests
    held since were lost (never woken, answered only at their deadline)."""
    waiters = HandoutWaiters()
    first = asyncio.create_task(waiters.wait(waiters.ticket(), "worker", "old", 300))
    await asyncio.sleep(0)
    assert not any(await asyncio.gather(*(waiters.wait(waiters.ticket(), "worker", "old", 0) for _ in range(70))))
    later = asyncio.create_task(waiters.wait(waiters.ticket(), "worker", "old", 300))
    await asyncio.sleep(0)
    assert not any(await asyncio.gather(*(waiters.wait(waiters.ticket(), "worker", "old", 0) for _ in range(70))))
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert waiters.held() == 1
    assert waiters.offer("worker", "new", 5) == 1
    assert await asyncio.wait_for(later, 60) is True


async def test_a_target_move_wakes_each_held_request_that_needs_the_image_once() -> None:
    """`offer_pulls`: of 1,000 held requests, those whose node runs another OS image and has not staged the target's
    are woken to pull it, each once, in order, up to where the pull rule stops; those not let pull that wait again
    are woken again only by a later count, those that staged it never, and a count with nothing new wakes none."""
    waiters = HandoutWaiters()
    images = {"old": "os:1", "same": "os:2", "new": "os:2"}
    waiters.image_of = images.get
    tickets = []
    for i in range(1000):
        ticket = waiters.ticket()
        ticket.node, ticket.rank = f"node-{i:04d}", (i,)
        ticket.staged = "new" if i % 10 == 1 else ""  # staged already: nothing to pull
        tickets.append((ticket, asyncio.create_task(waiters.wait(ticket, "worker", "same" if i % 10 == 2 else "old",
                                                                 300))))
    await asyncio.sleep(0)
    allowed = {f"node-{i:04d}" for i in range(500)}
    assert waiters.offer_pulls("worker", "new", lambda node: node in allowed) == 400  # first 500: 100 staged/same
    assert waiters.offer_pulls("worker", "new", lambda node: node in allowed) == 0  # nothing new: nobody again
    assert waiters.offer_pulls("worker", "new", None) == 0  # no pull free
    await asyncio.sleep(0.01)
    woken = [t for t, task in tickets if task.done()]
    assert [t.node for t in woken] == [f"node-{i:04d}" for i in range(500) if i % 10 not in (1, 2)]
    assert not any(task.result() for _, task in tickets if task.done())  # a pull is no slot: decided as it arrives
    assert waiters.held() == 600
    again = woken[0]  # not let pull (a race): it waits again, and a later count may wake it
    task = asyncio.create_task(waiters.wait(again, "worker", "old", 300))
    await asyncio.sleep(0)
    assert waiters.offer_pulls("worker", "new", lambda node: True) == 1 + 400  # it, and the rest that need the image
    await asyncio.sleep(0.01)
    assert task.done() and waiters.held() == 600 - 400
    for _, task in tickets:
        task.cancel()
    await asyncio.gather(*(task for _, task in tickets), return_exceptions=True)


async def test_a_node_with_its_own_config_is_judged_against_it() -> None:
    """A machine document gives node-a and node-b their own config on the new target ("mine-a", "mine-b": the pool's
    OS image): node-a staged its own and is not woken to pull; node-b, which did not, is."""
    waiters = HandoutWaiters()
    waiters.image_of = {"old": "os:1", "new": "os:2"}.get  # (a machine's config: never read, its pool's image)
    tasks = {}
    for node, staged in (("node-a", "mine-a"), ("node-b", "")):
        ticket = waiters.ticket()
        ticket.node, ticket.staged = node, staged
        tasks[node] = asyncio.create_task(waiters.wait(ticket, "worker", "old", 300))
    await asyncio.sleep(0)
    own = {"node-a": "mine-a", "node-b": "mine-b"}
    assert waiters.offer_pulls("worker", "new", lambda node: True, own.get) == 1
    await asyncio.sleep(0)
    assert tasks["node-b"].done() and not tasks["node-a"].done()
    tasks["node-a"].cancel()
    await asyncio.gather(*tasks.values(), return_exceptions=True)


async def test_a_held_claim_is_told_stay_at_its_deadline(served: Served) -> None:
    async with aiohttp.ClientSession() as session:
        assert await _claim(session, served.base, "a") == NEW.name
        b = asyncio.create_task(_claim(session, served.base, "b", wait=1))
        await _until(lambda: served.held == 1)
        async with session.get(f"{served.base}/metrics") as metrics:
            assert "mco_held_claims 1.0" in await metrics.text()
        assert await b == OLD.name  # no slot freed: stay where it is
        assert served.held == 0


async def test_lifting_a_pause_wakes_a_held_claim(served: Served) -> None:
    paused = replace(served.store.get_pool("worker"), paused=True)
    served.store.put_pool(paused)
    await _until(lambda: served.running.state.snapshot.pools["worker"].record.paused)  # type: ignore[union-attr]
    async with aiohttp.ClientSession() as session:
        a = asyncio.create_task(_claim(session, served.base, "a", wait=300))
        await _until(lambda: served.held == 1)
        served.store.put_pool(replace(paused, paused=False))
        assert await asyncio.wait_for(a, 60) == NEW.name  # woken, not answered at its deadline


async def test_a_node_at_the_target_is_held_until_the_target_moves(served: Served) -> None:
    served.store.put_node_status(_status("a", NEW))
    async with aiohttp.ClientSession() as session:
        a = asyncio.create_task(_claim(session, served.base, "a", wait=300))
        await _until(lambda: served.held == 1)
        newer = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=3))
        served.store.put_rendered(newer)
        served.store.put_pool(replace(served.store.get_pool("worker"), current=newer.name))
        assert await asyncio.wait_for(a, 60) == newer.name  # woken, not answered at its deadline


async def test_shutdown_answers_held_claims(served: Served) -> None:
    async with aiohttp.ClientSession() as session:
        assert await _claim(session, served.base, "a") == NEW.name
        b = asyncio.create_task(_claim(session, served.base, "b", wait=300))
        await _until(lambda: served.held == 1)
        stopping = asyncio.create_task(served.running.stop())
        assert await asyncio.wait_for(b, 60) == OLD.name  # answered at once (stay), not after 300 s
        await stopping


def test_sigterm_answers_held_claims_and_exits(tmp_path: Path) -> None:
    """`mco serve` (a process) holding a claim: SIGTERM answers it and the process exits 0."""
    cluster = tmp_path / "cluster"
    shutil.copytree(Path(__file__).resolve().parent / "cluster", cluster)
    with mco_serve(str(cluster), "--store", str(tmp_path / "store")) as served:
        base, proc = served.url, served.proc

        async def hold_then_stop() -> Any:
            async with aiohttp.ClientSession() as session:
                async with session.get(f"{base}/pools/worker") as response:
                    target = (await response.json())["spec"]["configuration"]["name"]
                body = {"pool": "worker", "currentConfig": target, "desiredConfig": target, "state": "Done"}
                async with session.post(f"{base}/nodes/node-a/status", json=body) as response:
                    assert response.status == 200
                held = asyncio.create_task(_claim(session, base, "a", wait=300))  # at the target: held
                while "mco_held_claims 1.0" not in await (await session.get(f"{base}/metrics")).text():
                    await asyncio.sleep(0.02)
                proc.send_signal(signal.SIGTERM)
                return target, await asyncio.wait_for(held, 60)

        target, answer = asyncio.run(hold_then_stop())
        assert answer == target
        assert proc.wait(timeout=60) == 0


@pytest.mark.parametrize("order", ["oldest-first", "newest-first"])
async def test_freed_slots_go_in_the_rollout_order(served: Served, order: str) -> None:
    """Held claims wake in MCO's node order (oldest registration first, or newest first when the pool asks), not in
    the order they arrived: here node-d, the oldest, asks last."""
    from fleet.rollout_settings import RolloutSettings

    publish(served.store, NEW, max_unavailable=1, rollout=RolloutSettings(order=order))
    for node, registered in (("b", "2026-01-03T00:00:00Z"), ("c", "2026-01-02T00:00:00Z"), ("d", "2026-01-01T00:00:00Z")):
        served.store.put_node_status(replace(_status(node, OLD), registered_at=registered))
    async with aiohttp.ClientSession() as session:
        # node-a has the one slot (handed before: in this order it would not be first)
        served.store.put_node_status(replace(_status("a", OLD, "Working"), desired_config=NEW.name))
        held = {}
        for count, node in enumerate("bcd", start=1):
            held[node] = asyncio.create_task(_claim(session, served.base, node, wait=300))
            await _until(lambda n=count: served.held == n)  # type: ignore[misc]
        await _report(session, served.base, "a", NEW)
        first = "d" if order == "oldest-first" else "b"
        assert await asyncio.wait_for(held[first], 60) == NEW.name
        await _until(lambda: served.held == 2)
        assert not any(task.done() for node, task in held.items() if node != first)
        for task in held.values():
            task.cancel()


@pytest.mark.parametrize("kind", ["directory", "etcd"])
@pytest.mark.parametrize("leaves", ["connection-closed", "hold-ended"])
async def test_a_node_gone_mid_hold_keeps_its_turn_for_the_offline_grace(request: pytest.FixtureRequest,
                                                                         tmp_path: Path, kind: str,
                                                                         leaves: str) -> None:
    """The offline grace holds for held claims as for polling ones (one rule, fleet/rollout_turn.py with
    server/presence.py): node-b, first in the order, leaves its held claim; the slot node-a frees waits for node-b
    through the pool's offline-grace on the server's clock (node-c's held claim is not handed it meanwhile), then
    goes to node-c, and node-b is counted as passed over. node-b is never recorded as handed a config it did not
    hear of."""
    from fleet.rollout_settings import RolloutSettings

    grace = 30
    clock = ManualClock(datetime(2026, 6, 1, tzinfo=UTC))
    async with _serving(kind, request, tmp_path, clock,
                        rollout=RolloutSettings(offline_grace_seconds=grace)) as served, aiohttp.ClientSession() as session:
        clock.advance(grace + 1)  # a server that has just started passes nobody over before its grace ran out
        assert await _claim(session, served.base, "a") == NEW.name  # the one slot
        b = asyncio.create_task(_claim(session, served.base, "b", wait=60 if leaves == "connection-closed" else 1))
        await _until(lambda: served.held == 1)
        c = asyncio.create_task(_claim(session, served.base, "c", wait=60))
        await _until(lambda: served.held == 2)
        if leaves == "connection-closed":
            b.cancel()  # node-b goes away mid-hold (its connection closes)
            await asyncio.gather(b, return_exceptions=True)
        else:
            assert await b == OLD.name  # its wait ran out: answered "stay", and it does not ask again
            await _until(lambda: served.held == 1)
        await _report(session, served.base, "a", NEW)
        await asyncio.sleep(4 * TURN_WAIT)  # counts of the freed slot, each finding node-b's turn, on the server's clock
        assert not c.done()  # kept for node-b through its grace
        clock.advance(grace + 1)  # node-b's grace has run out: the next count passes it over
        assert await asyncio.wait_for(c, 60) == NEW.name
        assert served.store.get_node_status("node-b").desired_config == OLD.name
        async with session.get(f"{served.base}/pools/worker") as pools:
            status = (await pools.json())["status"]
        assert status["rolloutSkipped"] == {"count": 1, "nodes": ["node-b"]}
        async with session.get(f"{served.base}/metrics") as metrics:
            assert 'mco_pool_rollout_skipped_nodes{pool="worker"} 1.0' in await metrics.text()
        assert await _claim(session, served.base, "b") == OLD.name  # back; node-c holds the slot
        await _report(session, served.base, "c", NEW)
        assert await _claim(session, served.base, "b") == NEW.name  # it kept its place: before node-d


async def test_a_held_claim_whose_wait_runs_out_takes_a_free_slot_only_in_its_turn(served: Served) -> None:
    """node-b, first in the order, was heard from within the offline grace; node-c's held claim is not woken for
    the slot node-a frees, and when its wait runs out it decides by the same turn rule: it stays."""
    from fleet.rollout_settings import RolloutSettings

    publish(served.store, NEW, max_unavailable=1, rollout=RolloutSettings(offline_grace_seconds=60))
    async with aiohttp.ClientSession() as session:
        assert await _claim(session, served.base, "a") == NEW.name  # the one slot
        assert await _claim(session, served.base, "b", wait=0.5) == OLD.name  # heard from; does not ask again
        await _report(session, served.base, "a", NEW)  # the slot is free: node-b's, through its grace
        assert await _claim(session, served.base, "c", wait=1) == OLD.name
        assert served.store.get_node_status("node-c").desired_config == OLD.name


BEHIND = [  # (id, the second held request: prestage, staged) -- the first needs the new image and may not pull yet
    ("no-prestage", False, ""),     # a client that ignores `prefetch`: a slot is all it needs
    ("staged", True, "new"),        # it has the image: its slot may go to it
]


@pytest.mark.parametrize("prestage,staged", [c[1:] for c in BEHIND], ids=[c[0] for c in BEHIND])
async def test_a_held_request_behind_one_waiting_for_its_image_is_woken_in_its_turn(prestage: bool,
                                                                                    staged: str) -> None:
    """Two slots free, both nodes in their turn: the first (`prestage=1`, its new OS image not pulled) keeps its
    place and is not woken for a slot; the one behind it is woken, as its claim arriving now would be handed the
    slot (fleet/rollout_turn.py: the first `free` waiting nodes may take the free slots)."""
    waiters = HandoutWaiters()
    waiters.image_of = {"old": "os:1", "new": "os:2"}.get
    first, behind = waiters.ticket(), waiters.ticket()
    first.rank, first.node, first.prestage = (0,), "node-a", True
    behind.rank, behind.node, behind.prestage, behind.staged = (1,), "node-b", prestage, staged
    held = [asyncio.create_task(waiters.wait(t, "worker", "old", 5)) for t in (first, behind)]
    await asyncio.sleep(0.01)
    try:
        assert waiters.offer("worker", "new", 2, lambda node: True) == 1
        await asyncio.sleep(0.01)
        assert held[1].done() and not held[0].done()
        assert waiters.head("worker", "new") == "node-a"  # still first in line
    finally:
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
