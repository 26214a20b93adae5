"""The overview's "Machines in an update" table: each machine whose update is under way, the phase it is in
(fleet/phases.py) and how long it has been there, the longest first, so a node stuck in a drain stands out from
one writing files. Also the machines in no pool. Pure: no I/O, no HTML.

Cost: one pass over the node listing per distinct listing (`PhaseTable` keeps the last answer while the store
hands back the same list, as `Tallies` does), sorted by a heap of at most SHOWN rows.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from fleet.node_status import NodeStatus
from fleet.phases import FINAL
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


def in_update(nodes: Sequence[NodeStatus], pools: Collection[str]) -> list[NodeStatus]:
    """The machines of `pools` whose update is under way (a phase entered, not done or degraded), longest in
    their phase first (at most SHOWN)."""
    under_way = [(e.at, n.name, n) for n in nodes if (e := n.phase) is not None and e.phase not in FINAL
                 and n.pool in pools]
    return [n for _, _, n in heapq.nsmallest(SHOWN, under_way, key=lambda t: (t[0], t[1]))]


def phase_rows(nodes: Sequence[NodeStatus], now: datetime) -> list[PhaseRow]:
    """The rows of `in_update`'s answer."""
    rows = []
    for node in nodes:
        entry = node.phase
        if entry is not None:
            rows.append(PhaseRow(node.name, node.pool, entry.phase, entry.at, age(entry.at, now), entry.config))
    return rows


class PhaseTable:
    """`in_update` and the unpooled machines of one node listing, kept while the store hands back that list."""

    def __init__(self) -> None:
        self._held: tuple[Sequence[NodeStatus] | None, frozenset[str], list[NodeStatus], list[NodeStatus]] = (
            None, frozenset(), [], [])

    def of(self, nodes: Sequence[NodeStatus], pools: Collection[str]) -> tuple[list[NodeStatus], list[NodeStatus]]:
        """(machines in an update, longest first; machines in no pool)."""
        key = frozenset(pools)
        held, held_pools, updating, unpooled = self._held
        if held is not nodes or held_pools != key:
            updating, unpooled = in_update(nodes, key), [n for n in nodes if not n.pool]
            self._held = (nodes, key, updating, unpooled)
        return updating, unpooled
