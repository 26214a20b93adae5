"""The fleet as the status routes and the fleet page read it: each pool's machines, tally and updates under way.

`GET /pools`, `GET /pools/{pool}`, the fleet page's overview and pool page all need each pool's machines in name
order, their tally (server/status.py PoolTally) and the machines whose update is under way. Built per request
from every record, they cost a pass over 10,000 records (each one's phase, each failing one looked for among
all) and 10,000 JSON items encoded again, every request and after every report. Here:
- the tallies' counts, failing machines and machines under way come from the store's index (fleet/rollout.py
  NodeStatuses), kept current as each record changes, read under the store's lock: O(what they hold);
- the machines are grouped by pool once per node listing, kept while the store hands back that very listing
  (the stores keep it until the next change);
- each machine's item in its pool's `nodes` is encoded once per record (kept while the record is the same
  object: the stores keep unchanged records), and a pool's `nodes` array is joined once per listing.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.node_status import NodeStatus
from fleet.rollout import NodeStatuses
from fleet.store import Store
from server.respond import json_array, json_bytes
from server.status import PoolTally, node_item

_EMPTY = PoolTally((), {}, ())


@dataclass(frozen=True)
class FleetView:
    """One node listing (name order), each pool's tally of it ("" : the machines in no pool) and each pool's
    machines whose update is under way. Immutable: shared by the requests that read the same listing."""

    nodes: Sequence[NodeStatus]
    tallies: Mapping[str, PoolTally]
    under_way: Mapping[str, Sequence[NodeStatus]]
    drifted: Sequence[NodeStatus] = ()  # the machines whose record keeps drift events (the page's drift section)

    def tally(self, pool: str) -> PoolTally:
        """The pool's tally (empty for a pool no machine is in)."""
        return self.tallies.get(pool) or _EMPTY

    @property
    def unpooled(self) -> Sequence[NodeStatus]:
        """The machines whose labels select no pool (or two custom pools)."""
        return self.tally("").members


Indexes = dict[str, tuple[dict[tuple[str, str, str], int], list[NodeStatus], list[NodeStatus]]]


def _indexes(statuses: NodeStatuses) -> Indexes:
    """Each pool's (reports, failing machines by name, machines under way), copied out of the store's index."""
    found: Indexes = {}
    for pool in list(statuses.pools()):
        failing = sorted((s for n in statuses.failing(pool) if (s := statuses.get(n)) is not None),
                         key=lambda s: s.name)
        under_way = [s for n in statuses.under_way(pool) if (s := statuses.get(n)) is not None]
        found[pool] = (dict(statuses.reports(pool)), failing, under_way)
    return found


class FleetViews:
    """The store's `FleetView` now, and each pool's `nodes` JSON (rules in the module docstring). Any thread."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._held: FleetView | None = None
        self._lock = threading.Lock()
        self._items: dict[str, tuple[NodeStatus, bytes]] = {}  # each machine's encoded item, by its record
        self._arrays: tuple[FleetView | None, dict[str, Any]] = (None, {})

    def current(self) -> FleetView:
        """The view of the store's listing now (the last one built while the listing is the same)."""
        held = self._held

        def read(statuses: NodeStatuses) -> FleetView | tuple[Sequence[NodeStatus], Indexes]:
            nodes = statuses.ordered()
            if held is not None and held.nodes is nodes:
                return held
            return nodes, _indexes(statuses)

        found = self.store.read_statuses(read)
        if isinstance(found, FleetView):
            return found
        nodes, indexes = found
        groups: dict[str, list[NodeStatus]] = {pool: [] for pool in indexes}
        drifted = []
        for node in nodes:
            groups.setdefault(node.pool, []).append(node)
            if node.drift:
                drifted.append(node)
        tallies = {pool: PoolTally(members, indexes[pool][0] if pool in indexes else {},
                                   indexes[pool][1] if pool in indexes else ())
                   for pool, members in groups.items() if members}
        view = FleetView(nodes, tallies, {pool: found[2] for pool, found in indexes.items() if found[2]}, drifted)
        self._held = view
        return view

    def nodes_json(self, view: FleetView, pool: str) -> Any:
        """The JSON array of the pool's machines (server/status.py node_item) in `view`, ready for `json_bytes`."""
        with self._lock:
            held, arrays = self._arrays
            if held is not view:
                arrays = {}
                self._arrays = (view, arrays)
                if len(self._items) > len(view.nodes) + 1024:  # forget the items of records gone
                    self._items = {n.name: kept for n in view.nodes if (kept := self._items.get(n.name))}
            found = arrays.get(pool)
            if found is None:
                items = self._items
                parts = []
                for node in view.tally(pool).members:
                    kept = items.get(node.name)
                    if kept is None or kept[0] is not node:
                        kept = items[node.name] = (node, json_bytes(node_item(node)))
                    parts.append(kept[1])
                found = arrays[pool] = json_array(parts)
            return found
