"""The overview's "Machines in an update" table: each machine whose update is under way, the phase it is in
(fleet/phases.py) and how long it has been there, the longest first, so a node stuck in a drain stands out from
one writing files. Also the machines in no pool. Pure: no I/O, no HTML.

Cost: the machines under way only (the store's index keeps them per pool as records change: server/fleet_view.py),
sorted by a heap of at most SHOWN rows.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from fleet.node_status import NodeStatus
from server.fleet_view import FleetView
from server.fleetpage.views import age

SHOWN = 50  # rows of the table (the longest in their phase)


@dataclass(frozen=True)
class PhaseRow:
    """A machine in an update: its phase, since when, for how long (in words)."""

    name: str
    pool: str
    phase: str
    since: str
    age: str
    config: str


def in_update(view: FleetView, pools: Collection[str]) -> list[NodeStatus]:
    """The machines of `pools` whose update is under way (a phase entered, not done or degraded), longest in
    their phase first (at most SHOWN)."""
    under_way = [(e.at, n.name, n) for pool in pools for n in view.under_way.get(pool, ())
                 if (e := n.phase) is not None]
    return [n for _, _, n in heapq.nsmallest(SHOWN, under_way, key=lambda t: (t[0], t[1]))]


def phase_rows(nodes: Sequence[NodeStatus], now: datetime) -> list[PhaseRow]:
    """The rows of `in_update`'s answer."""
    rows = []
    for node in nodes:
        entry = node.phase
        if entry is not None:
            rows.append(PhaseRow(node.name, node.pool, entry.phase, entry.at, age(entry.at, now), entry.config))
    return rows
