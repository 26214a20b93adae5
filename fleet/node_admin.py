"""The administrator's view and edits of node records, shared by `mco nodes --store` and the server's node
administration routes (server/admin_routes.py), so both answer alike.

A relabel is one claim on the store (`Store.claim_node`: atomic with every hand-out and report, on every
store): the node's labels change, its pool is computed again from them (fleet/membership.py), and nothing
else of its record moves. A render that changes the pools' selectors places every node again the same way
(`place_nodes`, called by renderer/render.py once it has published the pool records). The move itself is then the ordinary rollout: at its next claim the node is handed
its new pool's target when that pool's `maxUnavailable` leaves room (fleet/rollout.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from fleet.machines import config_parts
from fleet.membership import Membership, PoolSelectors
from fleet.node_labels import relabelled
from fleet.node_status import NodeStatus
from fleet.rollout import NodeStatuses
from fleet.store import NotFound, Store, check_name


def selectors_of(store: Store) -> PoolSelectors:
    """Membership against every pool record the store holds now."""
    return PoolSelectors(store.get_pool(name) for name in store.list_pools())


def _membership(status: NodeStatus, selectors: PoolSelectors) -> dict[str, Any]:
    membership = selectors.of(status.labels)
    return {"pools": list(membership.pools), "reason": membership.reason(status.name), "note": membership.note()}


def node_view(status: NodeStatus, selectors: PoolSelectors) -> dict[str, Any]:
    """A node record as `mco nodes get` and `GET /nodes/{name}` show it: the record, and its membership (the
    pools its labels select, the MCO's words when they select none or `master` won over a custom pool) and, for a
    machine's own config, the pool config and overlay it is made of (fleet/machines.py config_parts)."""
    return {**status.to_dict(), **config_parts(status.current_config), "membership": _membership(status, selectors)}


def node_list(statuses: Iterable[NodeStatus], selectors: PoolSelectors,
              seen: dict[str, tuple[NodeStatus, Any]] | None = None,
              encode: Callable[[dict[str, Any]], Any] | None = None) -> dict[str, Any]:
    """Every node, as `mco nodes list -o json` and `GET /nodes` show them: the record without its histories
    and timelines, with the phase it is in and since when. (The membership of a node in a pool depends on its
    labels only: one object per label set, shared; 10,000 nodes have a few dozen.) `seen` keeps each node's
    item by its record across calls with the same `selectors`: a record that is the very object it was last
    time gets its item again (the stores keep unchanged records), so a listing after one report builds one.
    `encode` turns each item built into what is listed and kept (the server: its JSON, encoded once)."""
    items = []
    shared: dict[Membership, dict[str, Any]] = {}
    known: dict[int, Membership] = {}  # by the labels object: records read from a store share them (rendered.py)
    for s in statuses:
        if seen is not None and (kept := seen.get(s.name)) is not None and kept[0] is s:
            items.append(kept[1])
            continue
        phase = s.phase
        membership = known.get(id(s.labels))
        if membership is None:
            membership = known[id(s.labels)] = selectors.of(s.labels)
        if membership.pools:
            view = shared.get(membership)
            if view is None:
                view = shared[membership] = {"pools": list(membership.pools), "reason": "",
                                                 "note": membership.note()}
        else:
            view = _membership(s, selectors)
        item = {"name": s.name, "pool": s.pool, "labels": s.labels, "state": s.state,
                "currentConfig": s.current_config, **config_parts(s.current_config),
                "desiredConfig": s.desired_config, "message": s.message, "reportedAt": s.reported_at,
                "membership": view,
                "phase": {"phase": phase.phase, "since": phase.at} if phase is not None else None}
        if encode is not None:
            item = encode(item)
        if seen is not None:
            seen[s.name] = (s, item)
        items.append(item)
    return {"kind": "NodeList", "items": items}


def relabel(store: Store, node: str, put: Mapping[str, str], remove: Iterable[str],
            selectors: PoolSelectors) -> NodeStatus:
    """Set `put` and remove `remove` on the node's labels, and its pool with them; NotFound for an unknown node."""
    check_name("nodes", node)
    removed = tuple(remove)

    def decide(statuses: NodeStatuses) -> NodeStatus:
        mine = statuses.get(node)
        if mine is None:
            raise NotFound(f"nodes/{node}", "no such node")
        labels = relabelled(mine.labels, put, removed)
        return replace(mine, labels=labels, pool=selectors.of(labels).pool)

    changed = store.claim_node(node, decide)
    assert changed is not None
    return changed


def place_nodes(store: Store, selectors: PoolSelectors) -> list[str]:
    """Put every node whose labels now select another pool than its record names in that pool (after the pool
    records' selectors changed: a new render published), each move one claim (atomic with the hand-outs and
    reports, as `relabel`); returns the nodes moved. The move itself is the ordinary rollout, as for a relabel."""
    moved = []
    for status in store.list_node_status():
        if selectors.of(status.labels).pool == status.pool:
            continue

        def decide(statuses: NodeStatuses, node: str = status.name) -> NodeStatus | None:
            mine = statuses.get(node)
            if mine is None:
                return None
            pool = selectors.of(mine.labels).pool
            return replace(mine, pool=pool) if pool != mine.pool else None

        if store.claim_node(status.name, decide) is not None:
            moved.append(status.name)
    return moved
