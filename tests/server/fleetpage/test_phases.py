"""The overview lists the machines in an update with their phase and how long they have been in it, the
longest first; the machines in no pool; and a machine's page shows its update phases."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from fleet.clock import timestamp
from fleet.node_status import NodeStatus
from fleet.phases import PhaseEntry
from fleet.store import MemoryStore
from server.auth import AccessPolicy
from tests.server.conftest import MakeClient
from tests.server.fleetpage.fleet import mid_rollout

NOW = datetime(2026, 12, 3, 12, 0, 0, tzinfo=UTC)


def _at(minutes_ago: int) -> str:
    return timestamp(NOW.replace(minute=60 - minutes_ago) if minutes_ago else NOW)


async def test_overview_lists_machines_in_an_update_longest_first(make_client: MakeClient) -> None:
    store = MemoryStore()
    rollout = mid_rollout(store)
    target = rollout.new.name
    phases = {"worker-1": ("drained", 50), "worker-3": ("written", 5), "worker-4": ("reboot-requested", 20),
              "worker-5": ("done", 55)}
    for name, (phase, ago) in phases.items():
        node = store.get_node_status(name)
        store.put_node_status(replace(node, timeline=(PhaseEntry("prepared", _at(59), target),
                                                      PhaseEntry(phase, _at(ago), target, "boot-1"))))
    store.put_node_status(NodeStatus("stray", "", "", "", "Done", "", "t0", labels={"zone": "a"}))
    client = await make_client(store)
    html = await (await client.get("/")).text()
    table = html[html.index('id="updating"'):]
    order = [name for name in ("worker-1", "worker-4", "worker-3") if f'id="phase-{name}"' in table]
    assert order == ["worker-1", "worker-4", "worker-3"]
    assert table.index('id="phase-worker-1"') < table.index('id="phase-worker-4"') < table.index('id="phase-worker-3"')
    assert 'id="phase-worker-5"' not in table  # done: not in an update
    assert "drained" in table and 'id="unpooled"' in html and ">stray<" in html
    machine = await (await client.get("/ui/nodes/worker-4")).text()
    assert 'id="phases"' in machine and "reboot-requested" in machine and "boot-1" in machine


async def test_unpooled_names_need_every_pool(make_client: MakeClient) -> None:
    store = MemoryStore()
    mid_rollout(store)
    store.put_node_status(NodeStatus("stray", "", "", "", "Done", "", "t0", labels={}))
    client = await make_client(store, policy=AccessPolicy(tokens={"worker": ("t",)}))
    assert "stray" not in await (await client.get("/")).text()
