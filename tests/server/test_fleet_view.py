"""The fleet view (server/fleet_view.py) against a recount of the whole listing, on real stores, as records
change: reports, failures, phases, moves between pools, nodes in no pool."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.node_status import NodeStatus
from fleet.phases import FINAL, PhaseEntry
from fleet.store import Store
from server.fleet_view import FleetViews
from server.respond import json_bytes
from server.status import node_item, tally
from tests.etcd_cluster import etcd_cluster  # noqa: F401 - pytest fixture
from tests.fleet.stores import STORE_KINDS, store_of_kind


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with store_of_kind(request.param, request, tmp_path) as opened:
        yield opened


def _node(i: int, pool: str = "worker", state: str = "Done", current: str = "rendered-a",
          desired: str = "rendered-a", phase: str = "") -> NodeStatus:
    timeline = (PhaseEntry(phase, f"2026-12-03T10:00:{i:02d}Z", desired, ""),) if phase else ()
    return NodeStatus(f"node-{i:02d}", pool, current, desired, state, f"message {i}", "2026-12-03T10:00:00Z",
                      timeline=timeline)


def _agrees(views: FleetViews, store: Store) -> None:
    view = views.current()
    nodes = store.list_node_status()
    assert list(view.nodes) == nodes
    for pool in ("worker", "gpu", ""):
        recount = tally(pool, nodes)
        shown = view.tally(pool)
        assert list(shown.members) == list(recount.members), pool
        assert dict(shown.reports) == dict(recount.reports), pool
        assert list(shown.failing) == list(recount.failing), pool
        assert json.loads(json_bytes(views.nodes_json(view, pool))) == [node_item(n) for n in recount.members]
        under_way = sorted(n.name for n in recount.members if n.phase is not None and n.phase.phase not in FINAL)
        assert sorted(n.name for n in view.under_way.get(pool, ())) == under_way, pool
    assert list(view.unpooled) == [n for n in nodes if not n.pool]


def test_the_view_follows_every_change_as_a_recount_would(store: Store) -> None:
    views = FleetViews(store)
    for i in range(12):
        store.put_node_status(_node(i))
    _agrees(views, store)
    changes = [
        _node(3, state="Working", desired="rendered-b", phase="drained"),
        _node(4, state="Degraded", desired="rendered-b", phase="degraded"),
        _node(5, state="Working", desired="rendered-b", phase="prepared"),
        _node(5, state="Done", current="rendered-b", desired="rendered-b", phase="done"),
        _node(6, pool="gpu", state="Working", desired="rendered-g", phase="written"),  # moved by its labels
        _node(7, pool=""),  # in no pool
        _node(8, state="Unreconcilable", desired="rendered-b"),
        _node(4, state="Done", current="rendered-b", desired="rendered-b", phase="done"),
        _node(6, pool="worker"),  # back
        _node(12, pool="gpu"),  # a new node
    ]
    for status in changes:
        store.put_node_status(status)
        _agrees(views, store)


def test_an_unchanged_listing_keeps_its_view_and_a_report_makes_a_new_one(store: Store) -> None:
    views = FleetViews(store)
    for i in range(3):
        store.put_node_status(_node(i))
    first = views.current()
    if store.list_node_status() is not store.list_node_status():
        pytest.skip("this store reads a new listing each time (no index to follow): every view is built anew")
    assert views.current() is first
    array = views.nodes_json(first, "worker")
    assert views.nodes_json(first, "worker") is array
    store.put_node_status(_node(1, state="Working", desired="rendered-b"))
    again = views.current()
    assert again is not first and again.tally("worker").reports[("Working", "rendered-a", "rendered-b")] == 1
    assert first.tally("worker").reports == {("Done", "rendered-a", "rendered-a"): 3}
