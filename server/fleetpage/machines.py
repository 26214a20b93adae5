"""The pool page's machine list: filter by state, sort and page, server-side from query parameters.

Done on the server so that the list works without JavaScript and a pool of 10,000 machines sends one page
of rows (`PAGE_SIZE`), not all of them. Every bad parameter is a `QueryError` naming it (a 400 page).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any
from urllib.parse import urlencode

from fleet.node_status import NODE_STATES, NodeStatus
from server.errors import ServerError
from server.fleetpage.views import STATE_ORDER
from server.status import PoolTally

PAGE_SIZE = 100
# Sort keys other than "state" and "name": one attribute each, so ties keep the name order the list had
# (attrgetter keeps 10,000 rows cheap). "state" orders by STATE_ORDER, machines of one state by name in
# either direction.
SORT_KEYS: Mapping[str, Callable[[NodeStatus], Any]] = {
    "current": attrgetter("current_config"),
    "desired": attrgetter("desired_config"),
    "reported": attrgetter("reported_at"),
}
SORTS = ("state", "name", *SORT_KEYS)
ORDERS = ("asc", "desc")
_RANK: defaultdict[str, int] = defaultdict(lambda: len(STATE_ORDER), STATE_ORDER)
_MAX_PAGE_DIGITS = 9


class QueryError(ServerError, ValueError):
    """A query parameter has a value the page does not take; `param` names it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"query {param}: {message}")
        self.param = param
        self.message = message


@dataclass(frozen=True)
class MachineQuery:
    """Which machines to list and how: `state` "" means every state."""

    state: str = ""
    sort: str = "state"
    order: str = "asc"
    page: int = 1

    def url(self, **changes: Any) -> str:
        """The query string for this view with `changes` applied (defaults left out)."""
        values = {"state": self.state, "sort": self.sort, "order": self.order, "page": self.page, **changes}
        default = MachineQuery()
        kept = {k: v for k, v in values.items() if v != getattr(default, k)}
        return "?" + urlencode(kept) if kept else "?"


def parse_query(query: Mapping[str, str]) -> MachineQuery:
    """Read `state`, `sort`, `order` and `page`; unknown parameters are refused too (a typo should show)."""
    for key in query:
        if key not in ("state", "sort", "order", "page"):
            raise QueryError(key, "unknown parameter (known: state, sort, order, page)")
    state = query.get("state", "")
    if state and state not in NODE_STATES:
        raise QueryError("state", f"must be one of {', '.join(NODE_STATES)} (or empty for all)")
    sort = query.get("sort", "state")
    if sort not in SORTS:
        raise QueryError("sort", f"must be one of {', '.join(SORTS)}")
    order = query.get("order", "asc")
    if order not in ORDERS:
        raise QueryError("order", "must be asc or desc")
    raw = query.get("page", "1")
    if not raw.isascii() or not raw.isdigit() or len(raw) > _MAX_PAGE_DIGITS or int(raw) < 1:
        raise QueryError("page", "must be a positive whole number")
    return MachineQuery(state=state, sort=sort, order=order, page=int(raw))


@dataclass(frozen=True)
class MachinePage:
    """One page of the filtered, sorted machines, and where it sits in the whole list."""

    rows: Sequence[NodeStatus]
    total: int
    first: int
    pages: int
    counts: Mapping[str, int]


def select(counted: PoolTally, query: MachineQuery) -> MachinePage:
    """Filter, sort and cut out the requested page (a page past the end is empty, not an error).

    The pool's machines come in name order (stores list reports sorted by node name), so sorting by name is
    at most a reversal, one state is already sorted, and any other sort is a stable sort on one attribute.
    """
    chosen = [n for n in counted.members if n.state == query.state] if query.state else list(counted.members)
    desc = query.order == "desc"
    if query.sort == "state":
        if not query.state:  # by the state's rank, stably: no Python call per machine
            ranks = list(map(_RANK.__getitem__, map(attrgetter("state"), chosen)))
            order = sorted(range(len(chosen)), key=ranks.__getitem__, reverse=desc)
            chosen = [chosen[i] for i in order]
    else:
        if desc:  # ties keep the name order, in the direction asked
            chosen.reverse()
        if query.sort != "name":
            chosen.sort(key=SORT_KEYS[query.sort], reverse=desc)
    pages = max(1, -(-len(chosen) // PAGE_SIZE))
    start = (query.page - 1) * PAGE_SIZE
    return MachinePage(rows=chosen[start:start + PAGE_SIZE], total=len(chosen), first=start + 1, pages=pages,
                       counts=counted.states())
