"""The overview's "Recent drift" section: machines whose live state someone changed by hand, newest first
(docs/operations.md, *Drift*). The whole inventory is `mco drift list`; the page shows the last day's."""

from __future__ import annotations

import heapq
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from fleet.clock import parse_timestamp
from server.fleet_view import FleetView
from server.fleetpage.views import age

SHOWN = 50  # rows at most: the newest drifts first
RECENT = timedelta(hours=24)


@dataclass(frozen=True)
class DriftRow:
    """A machine's newest drift event, and how many of its kept events fall within RECENT."""

    name: str
    pool: str
    kind: str
    path: str
    at: str
    age: str
    repaired: bool
    count: int


def drift_rows(view: FleetView, pools: Collection[str], now: datetime) -> list[DriftRow]:
    """The machines of `pools` with a drift event in the last RECENT, newest drift first (at most SHOWN)."""
    since = now - RECENT
    found = []
    for node in view.drifted:
        if node.pool not in pools:
            continue
        recent = [e for e in node.drift if (at := parse_timestamp(e.at)) is not None and at >= since]
        if recent:
            newest = max(recent, key=lambda e: e.at)
            found.append(DriftRow(node.name, node.pool, newest.kind, newest.path, newest.at, age(newest.at, now),
                                  newest.repaired, len(recent)))
    return heapq.nlargest(SHOWN, found, key=lambda r: (r.at, r.name))
