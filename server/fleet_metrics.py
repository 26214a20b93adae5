"""The fleet's state as Prometheus gauges, built at each scrape of `/metrics` from the pool records and node
records (docs/alerts.yaml alerts on them; docs/operations.md lists them).

Label values stay bounded: `pool` takes the names of the pools the store holds, `phase` the fixed phases of
fleet/phases.py. The one per-node series is `mco_node_degraded`, for Degraded nodes only and at most
DEGRADED_SERIES of them (by name). The counts are `server.status.pool_summary`'s, the rules behind `GET /pools`
(membership: fleet/membership.py), so the API and the metrics never disagree.

    mco_pool_machines, _updated_machines, _ready_machines, _unavailable_machines, _degraded_machines {pool}
    mco_pool_paused {pool}                           1 while spec.paused
    mco_pool_rollout_skipped_nodes {pool}            nodes the rollout passed over while offline (fleet/rollout_turn.py)
    mco_pool_render_degraded {pool}                  1 while the pool's last render failed (RenderDegraded)
    mco_pool_target_age_seconds {pool}               since the pool's target last changed (its history)
    mco_pool_nodes_in_phase {pool, phase}            nodes whose update is in that phase (every phase listed)
    mco_pool_longest_in_phase_seconds {pool, phase}  the longest any node of the pool has been in that phase
    mco_unpooled_nodes                               nodes whose labels select no pool (or two custom pools)
    mco_node_degraded {pool, node}                   1 per Degraded node (at most DEGRADED_SERIES)
    mco_store_current, mco_store_revisions_behind, mco_store_seconds_since_contact   an etcd replica's mirror
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from prometheus_client.core import GaugeMetricFamily

from fleet.clock import parse_timestamp
from fleet.node_status import NodeStatus
from fleet.phases import FINAL, PHASES
from fleet.rendered import PoolRecord
from server.status import PoolTally, pool_summary

DEGRADED_SERIES = 50
_COUNTS = (("machines", "machineCount", "Machines in the pool (by their labels)."),
           ("updated_machines", "updatedMachineCount", "Machines Done at the pool's target."),
           ("ready_machines", "readyMachineCount", "Machines ready (updated)."),
           ("unavailable_machines", "unavailableMachineCount", "Machines updating or broken (maxUnavailable's)."),
           ("degraded_machines", "degradedMachineCount", "Machines reporting Degraded."))
UNDER_WAY = tuple(p for p in PHASES if p not in FINAL)


def _gauge(name: str, help_text: str, labels: Sequence[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, help_text, labels=list(labels))


def fleet_families(records: Sequence[PoolRecord], nodes: Sequence[NodeStatus], now: datetime,
                   health: Any = None) -> list[GaugeMetricFamily]:
    """Every family of the module docstring for these records and nodes (`health`: a replica's mirror health)."""
    by_pool: dict[str, list[NodeStatus]] = defaultdict(list)
    for node in nodes:
        by_pool[node.pool].append(node)
    counts = [_gauge(f"mco_pool_{name}", text, ["pool"]) for name, _, text in _COUNTS]
    paused = _gauge("mco_pool_paused", "1 while the pool is paused (spec.paused).", ["pool"])
    skipped = _gauge("mco_pool_rollout_skipped_nodes", "Nodes the rollout passed over while offline when their "
                     "turn came (they wait for the target, nodes after them have it).", ["pool"])
    render = _gauge("mco_pool_render_degraded", "1 while the pool's last render failed (RenderDegraded).", ["pool"])
    age = _gauge("mco_pool_target_age_seconds", "Seconds since the pool's target last changed.", ["pool"])
    in_phase = _gauge("mco_pool_nodes_in_phase", "Nodes whose update is in this phase.", ["pool", "phase"])
    longest = _gauge("mco_pool_longest_in_phase_seconds",
                     "The longest any node of the pool has been in this phase of an update.", ["pool", "phase"])
    degraded = _gauge("mco_node_degraded", f"1 per Degraded node (at most {DEGRADED_SERIES} series).",
                      ["pool", "node"])
    shown = 0
    for record in records:
        members = by_pool.get(record.name, [])
        status = pool_summary(record, PoolTally.of(members))["status"]
        for family, (_, key, _) in zip(counts, _COUNTS, strict=True):
            family.add_metric([record.name], status[key])
        paused.add_metric([record.name], 1 if record.paused else 0)
        skipped.add_metric([record.name], (status.get("rolloutSkipped") or {}).get("count", 0))
        flag = record.condition("RenderDegraded")
        render.add_metric([record.name], 1 if flag is not None and flag.status == "True" else 0)
        since = parse_timestamp(record.history[-1].time) if record.history else None
        age.add_metric([record.name], max(0.0, (now - since).total_seconds()) if since is not None else 0.0)
        phases, oldest = _phases(members, now)
        for phase in UNDER_WAY:
            in_phase.add_metric([record.name, phase], phases.get(phase, 0))
            longest.add_metric([record.name, phase], oldest.get(phase, 0.0))
        for node in members:
            if node.state == "Degraded" and shown < DEGRADED_SERIES:
                degraded.add_metric([record.name, node.name], 1)
                shown += 1
    unpooled = _gauge("mco_unpooled_nodes", "Nodes whose labels select no pool, or two custom pools.")
    unpooled.add_metric([], len(by_pool.get("", ())))
    return [*counts, paused, skipped, render, age, in_phase, longest, unpooled, degraded, *_store(health)]


def _phases(members: Iterable[NodeStatus], now: datetime) -> tuple[dict[str, int], dict[str, float]]:
    """(nodes per phase under way, the longest time in each)."""
    counts: dict[str, int] = defaultdict(int)
    oldest: dict[str, float] = {}
    for node in members:
        entry = node.phase
        if entry is None or entry.phase in FINAL:
            continue
        counts[entry.phase] += 1
        then = parse_timestamp(entry.at)
        if then is not None:
            oldest[entry.phase] = max(oldest.get(entry.phase, 0.0), (now - then).total_seconds())
    return counts, oldest


def _store(health: Any) -> list[GaugeMetricFamily]:
    """An etcd replica's mirror: current or not, revisions behind, seconds since etcd last answered."""
    if health is None:
        return []
    current = _gauge("mco_store_current", "1 while this replica's mirror of the store is current.")
    current.add_metric([], 1 if health.current else 0)
    behind = _gauge("mco_store_revisions_behind", "Store revisions this replica has not applied yet.")
    behind.add_metric([], health.behind)
    contact = _gauge("mco_store_seconds_since_contact", "Seconds since etcd last answered this replica.")
    contact.add_metric([], health.seconds_since_contact)
    return [current, behind, contact]
