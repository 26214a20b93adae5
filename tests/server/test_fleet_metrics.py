"""The fleet's gauges on /metrics: the counts `GET /pools` shows, per pool; phases; unpooled nodes; the per-node
series only for Degraded nodes, capped."""

from __future__ import annotations

from dataclasses import replace

from prometheus_client.parser import text_string_to_metric_families

from fleet.node_status import NodeStatus
from fleet.phases import PhaseEntry
from fleet.store import MemoryStore
from server.fleet_metrics import DEGRADED_SERIES
from tests.server.conftest import MakeClient
from tests.server.fleetpage.fleet import mid_rollout


async def _samples(client: object) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = await (await client.get("/metrics")).text()  # type: ignore[attr-defined]
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


async def test_pool_gauges_match_the_pool_status(make_client: MakeClient) -> None:
    store = MemoryStore()
    rollout = mid_rollout(store)
    node = store.get_node_status("worker-1")
    store.put_node_status(replace(node, timeline=(PhaseEntry("drained", "2026-12-03T11:00:00Z", rollout.new.name),)))
    store.put_node_status(NodeStatus("stray", "", "", "", "Done", "", "t0", labels={}))
    client = await make_client(store)
    samples = await _samples(client)
    pools = {p["metadata"]["name"]: p["status"] for p in (await (await client.get("/pools")).json())["items"]}
    for name, key in (("mco_pool_machines", "machineCount"), ("mco_pool_updated_machines", "updatedMachineCount"),
                      ("mco_pool_unavailable_machines", "unavailableMachineCount"),
                      ("mco_pool_degraded_machines", "degradedMachineCount")):
        for pool, status in pools.items():
            assert samples[(name, (("pool", pool),))] == status[key], (name, pool)
    assert samples[("mco_pool_nodes_in_phase", (("phase", "drained"), ("pool", "worker")))] == 1
    assert samples[("mco_pool_nodes_in_phase", (("phase", "written"), ("pool", "worker")))] == 0
    assert samples[("mco_pool_longest_in_phase_seconds", (("phase", "drained"), ("pool", "worker")))] > 0
    assert samples[("mco_unpooled_nodes", ())] == 1
    assert samples[("mco_node_degraded", (("node", "worker-2"), ("pool", "worker")))] == 1
    assert not any(name == "mco_store_current" for name, _ in samples)  # a directory or memory store: no mirror


async def test_per_node_series_are_capped(make_client: MakeClient) -> None:
    store = MemoryStore()
    rollout = mid_rollout(store, done_old=0)
    for i in range(DEGRADED_SERIES + 20):
        store.put_node_status(NodeStatus(f"bad-{i:03d}", "worker", rollout.old.name, rollout.new.name, "Degraded",
                                         "x", "t0"))
    samples = await _samples(await make_client(store))
    assert sum(1 for name, _ in samples if name == "mco_node_degraded") == DEGRADED_SERIES
    assert samples[("mco_pool_degraded_machines", (("pool", "worker"),))] == DEGRADED_SERIES + 21
