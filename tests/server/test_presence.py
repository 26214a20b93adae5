"""server/presence.py: a node held or heard at one server process is online for the others once they exchanged
their digests through the store (fleet/presence_digest.py), and only while it stays heard."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fleet.clock import ManualClock, timestamp
from fleet.directory_store import DirectoryStore
from fleet.image_pulls import PULL_LEASE
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.rollout_settings import MAX_OFFLINE_GRACE
from fleet.store import MemoryStore, Store
from server.presence import EXCHANGE_INTERVAL, Presence, exchange_once

START = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
GRACE = 120


def _status(name: str, config: str = "old") -> NodeStatus:
    return NodeStatus(name, "worker", config, config, "Done", "", timestamp(START))  # its last report: long ago


def _fleet(store: Store) -> Store:
    """A pool whose target moved to `new`: n1 waits for it, n2 is at it."""
    store.put_pool(PoolRecord("worker", current="new"))
    store.put_node_status(_status("n1"))
    store.put_node_status(_status("n2", "new"))
    return store


@pytest.mark.parametrize("kind", ["memory", "directory"])
def test_a_claim_held_elsewhere_is_online_here(kind: str, tmp_path: Path) -> None:
    store = _fleet(MemoryStore() if kind == "memory" else DirectoryStore(tmp_path / "store"))
    clock = ManualClock(START)
    here, there = Presence(clock), Presence(clock)
    clock.advance(GRACE + 60)  # both past their start-up grace: silence now means offline
    there.hold("n1")
    here_checker = here.checker(GRACE, clock())
    assert not here_checker(_status("n1"))  # before any exchange: known only to the other process

    async def swap() -> None:
        await exchange_once(there, store, "there")
        await exchange_once(here, store, "here")
    asyncio.run(swap())
    assert here.checker(GRACE, clock())(_status("n1"))
    there.release("n1")  # its claim answered: heard from until now
    clock.advance(GRACE + 1)
    asyncio.run(swap())
    assert not here.checker(GRACE, clock())(_status("n1"))  # silent for longer than the grace, everywhere


def test_a_process_that_stopped_publishing_counts_no_more(tmp_path: Path) -> None:
    store = _fleet(DirectoryStore(tmp_path / "store"))
    clock = ManualClock(START)
    here, there = Presence(clock), Presence(clock)
    clock.advance(GRACE + 60)
    there.hold("n1")
    asyncio.run(exchange_once(there, store, "there"))
    digest = tmp_path / "store/presence/there.json"
    then = digest.stat().st_mtime - 3 * EXCHANGE_INTERVAL - 1  # `there` died holding the claim: its digest ran out
    os.utime(digest, (then, then))
    asyncio.run(exchange_once(here, store, "here"))
    assert not here.checker(GRACE, clock())(_status("n1"))


def test_only_nodes_waiting_for_a_slot_are_published_and_only_when_they_change(tmp_path: Path) -> None:
    store = _fleet(DirectoryStore(tmp_path / "store"))
    clock = ManualClock(START)
    there = Presence(clock)
    there.saw("n2")  # at the target: the turn rule never asks about it
    asyncio.run(exchange_once(there, store, "there"))
    digest = tmp_path / "store/presence/there.json"
    assert store.read_presence() == frozenset()
    there.hold("n1")
    asyncio.run(exchange_once(there, store, "there"))
    assert store.read_presence() == {"n1"}
    written = digest.stat().st_ino
    clock.advance(60)
    asyncio.run(exchange_once(there, store, "there"))  # still held: the same names, renewed without a write
    assert digest.stat().st_ino == written and store.read_presence() == {"n1"}
    there.release("n1")
    store.put_node_status(_status("n1", "new"))  # it took its slot and reached the target
    asyncio.run(exchange_once(there, store, "there"))
    assert store.read_presence() == frozenset()


def test_nodes_unheard_for_longer_than_any_grace_are_forgotten() -> None:
    clock = ManualClock(START)
    presence = Presence(clock)
    for i in range(1000):  # a fleet's churn, or names a client made up: none of them asks again
        presence.saw(f"gone-{i}")
    clock.advance(MAX_OFFLINE_GRACE - 1)
    presence.saw("n1")
    presence.digest()
    assert presence.remembered() == 1001  # still within the longest grace a pool may set
    assert presence.checker(MAX_OFFLINE_GRACE, clock())(_status("gone-0"))
    clock.advance(2)
    presence.digest()  # the exchange's every round
    assert presence.remembered() == 1
    assert presence.checker(GRACE, clock())(_status("n1"))
    assert not presence.checker(MAX_OFFLINE_GRACE, clock())(_status("gone-0"))


def test_a_node_pulling_its_os_image_is_online_while_its_pull_lasts() -> None:
    """An agent is silent while it pulls the next OS image with the server's permission (fleet/image_pulls.py), and
    a pull may outlast the offline grace: the node stays online (not passed over, nor replaced as a canary) until the
    pull's lease has run out or it reported the image staged."""
    clock = ManualClock(START)
    presence = Presence(clock)
    clock.advance(GRACE + 60)  # past the start-up grace: nobody heard from since
    now = clock()
    pulling = NodeStatus("n1", "worker", "old", "old", "Done", "", timestamp(START), pull_config="new",
                         pull_at=timestamp(START))
    assert presence.checker(GRACE, now)(pulling)
    assert not presence.checker(GRACE, now)(_status("n2"))
    assert not presence.checker(GRACE, now)(replace(pulling, staged="new"))  # staged: silent for another reason
    clock.advance(PULL_LEASE)
    assert not presence.checker(GRACE, clock())(pulling)  # the lease has run out: a node that died mid-pull
