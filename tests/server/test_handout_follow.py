"""server/handout_follow.py on an etcd replica: held claims counted again when a maintenance window opens, which no
change announces. The count and the moment it schedules the next count read one clock (the server's, which a test
sets): a real 3-member etcd cluster, the replica's mirror, and the waiters of a server process."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime

from fleet.clock import ManualClock
from fleet.maintenance_windows import parse_window
from fleet.node_status import NodeStatus
from fleet.rollout_settings import RolloutSettings
from fleet.store_open import close_store, open_store
from server.handout_follow import follow_mirror
from server.presence import Presence
from server.state import ServerState
from tests.builders import rendered_config
from tests.etcd_cluster import EtcdCluster
from tests.server.helpers import SOURCES, ignition_config, publish

OLD = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=1))
NEW = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=2))
WINDOW = parse_window({"days": ["Sat"], "start": "22:00", "duration": "4h", "timeZone": "UTC"})
# a second before a window opens, years from the machine's own time: only the server's clock says when it opens
BEFORE = datetime(2031, 12, 6, 21, 59, 59, tzinfo=UTC)  # a Saturday
_prefixes = itertools.count()


async def _until(check: object) -> None:
    async def poll() -> None:
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), 60)


async def test_a_window_opening_on_the_servers_clock_wakes_a_held_claim(etcd_cluster: EtcdCluster) -> None:
    url = etcd_cluster.url(f"follow-{next(_prefixes)}")
    writer = open_store(url)
    replica = open_store(url, follow=True)
    try:
        writer.put_rendered(OLD)
        publish(writer, NEW, max_unavailable=1, rollout=RolloutSettings(windows=(WINDOW,)))
        writer.put_node_status(NodeStatus("node-a", "worker", OLD.name, OLD.name, "Done", "", "2031-12-01T00:00:00Z"))
        mirror = replica.mirror  # type: ignore[attr-defined]
        await _until(lambda: mirror.pool("worker") is not None and mirror.pool("worker").current == NEW.name)

        clock = ManualClock(BEFORE)
        state = ServerState()
        waiters = state.handouts
        waiters.presence = Presence(clock).now_checker  # what server/node_routes.py wires: the server's clock
        follow_mirror(state, mirror, asyncio.get_running_loop())
        ticket = waiters.ticket()
        ticket.node = "node-a"
        held = asyncio.create_task(waiters.wait(ticket, "worker", OLD.name, 300))
        await _until(lambda: waiters.held() == 1)
        assert waiters.on_recount is not None
        waiters.on_recount("worker")  # a count: the window is closed, and opens a second later on the server's clock
        await asyncio.sleep(0.2)
        assert not held.done()  # nothing woke it while the window was closed
        clock.advance(2)  # the window has opened: no change to the store announces it
        assert await asyncio.wait_for(held, 60) is True  # woken by the count due at the opening, not at its deadline
        assert waiters.woken == 1
    finally:
        close_store(replica)
        close_store(writer)
