"""The pool page's machine list: query parameters (every bad one named), filter, sort and pages."""

from __future__ import annotations

import pytest

from fleet.node_status import NodeStatus
from server.fleetpage.machines import PAGE_SIZE, MachineQuery, QueryError, parse_query, select
from server.status import PoolTally


@pytest.mark.parametrize(("query", "expected"), [
    ({}, MachineQuery()),
    ({"state": "Degraded"}, MachineQuery(state="Degraded")),
    ({"state": ""}, MachineQuery()),
    ({"sort": "reported", "order": "desc", "page": "3"}, MachineQuery(sort="reported", order="desc", page=3)),
], ids=["defaults", "state", "empty-state", "sort-order-page"])
def test_parse_query(query: dict[str, str], expected: MachineQuery) -> None:
    assert parse_query(query) == expected


@pytest.mark.parametrize(("query", "param"), [
    ({"state": "done"}, "state"),
    ({"sort": "message"}, "sort"),
    ({"order": "up"}, "order"),
    ({"page": "0"}, "page"),
    ({"page": "-1"}, "page"),
    ({"page": "١"}, "page"),
    ({"page": "9" * 40}, "page"),
    ({"pgae": "2"}, "pgae"),
], ids=["state-case", "sort-unknown", "order", "page-zero", "page-negative", "page-arabic-digit", "page-huge",
        "typo"])
def test_bad_query_names_the_parameter(query: dict[str, str], param: str) -> None:
    with pytest.raises(QueryError) as err:
        parse_query(query)
    assert err.value.param == param
    assert str(err.value).startswith(f"query {param}: ")


STATES = ["Done", "Working", "Degraded"]
NODES = [NodeStatus(f"n{i:04d}", "worker", f"rendered-worker-{i % 4}", "rendered-worker-3", STATES[i % 3], "",
                    f"2026-12-03T10:{i % 60:02d}:00Z") for i in range(250)]


def test_filter_sort_and_page() -> None:
    listing = select(PoolTally.of(NODES), MachineQuery(state="Degraded", sort="name", order="desc", page=1))
    degraded = sorted((n for n in NODES if n.state == "Degraded"), key=lambda n: n.name, reverse=True)
    assert listing.total == len(degraded)
    assert list(listing.rows) == degraded[:PAGE_SIZE]
    assert listing.counts == {s: sum(n.state == s for n in NODES) for s in STATES}


def test_default_sort_puts_degraded_first_then_working() -> None:
    rows = select(PoolTally.of(NODES), MachineQuery()).rows
    order = [n.state for n in rows]
    assert order == sorted(order, key=["Degraded", "Working", "Done"].index)
    assert rows[0].state == "Degraded"


def test_pages_cover_every_machine_once() -> None:
    first = select(PoolTally.of(NODES), MachineQuery(sort="reported"))
    seen = []
    for page in range(1, first.pages + 1):
        listing = select(PoolTally.of(NODES), MachineQuery(sort="reported", page=page))
        assert listing.first == (page - 1) * PAGE_SIZE + 1
        seen += listing.rows
    assert first.pages == -(-len(NODES) // PAGE_SIZE)
    assert sorted(n.name for n in seen) == sorted(n.name for n in NODES)
    assert [n.reported_at for n in seen] == sorted(n.reported_at for n in NODES)
    assert select(PoolTally.of(NODES), MachineQuery(page=first.pages + 1)).rows == []


def test_url_keeps_the_view_and_leaves_out_defaults() -> None:
    query = MachineQuery(state="Working", sort="name")
    assert query.url(page=2) == "?state=Working&sort=name&page=2"
    assert MachineQuery().url() == "?"


def test_state_sort_descending_keeps_names_ascending_within_a_state() -> None:
    rows = select(PoolTally.of(NODES), MachineQuery(order="desc")).rows
    assert [n.state for n in rows] == sorted((n.state for n in rows), key=["Done", "Working", "Degraded"].index)
    dones = [n.name for n in rows if n.state == "Done"]
    assert dones == sorted(dones)


def _reference(query: MachineQuery) -> list[NodeStatus]:
    """The listing by its definition: filter, then sort by the key with ties by name (state: names ascending)."""
    chosen = [n for n in NODES if not query.state or n.state == query.state]
    desc = query.order == "desc"
    if query.sort == "state":
        rank = ["Degraded", "Working", "Done"]
        ranked = sorted(chosen, key=lambda n: n.name)
        return sorted(ranked, key=lambda n: rank.index(n.state), reverse=desc)
    field = {"name": "name", "current": "current_config", "desired": "desired_config", "reported": "reported_at"}
    return sorted(chosen, key=lambda n: (getattr(n, field[query.sort]), n.name), reverse=desc)


@pytest.mark.parametrize("state", ["", "Working"], ids=["all", "working"])
@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("sort", ["state", "name", "current", "desired", "reported"])
def test_every_sort_matches_its_definition(sort: str, order: str, state: str) -> None:
    query = MachineQuery(state=state, sort=sort, order=order)
    rows = []
    for page in range(1, select(PoolTally.of(NODES), query).pages + 1):
        rows += select(PoolTally.of(NODES), MachineQuery(state=state, sort=sort, order=order, page=page)).rows
    assert rows == _reference(query)
