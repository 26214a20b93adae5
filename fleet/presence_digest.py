"""Which nodes each server process heard from, shared through the store, so that every process behind one address
judges the rollout's turn rule (fleet/rollout_turn.py) on what all of them heard: a node holding its claim at one
replica is online for the others too, and is not passed over by them.

Each process keeps one digest in the store (`Store.publish_presence`): the names of the nodes waiting for a slot
that it holds a claim of or heard from lately (server/presence.py `exchange`). Only names, so a digest is written
again only when that set changes (a claim held for hours writes nothing more), and kept alive in between without a
write: an etcd lease renewed, a file's time touched. A process that stops renewing (it died) stops counting once
its digest's time to live has run out. `Store.read_presence` gives back the union of the live ones; this module is
the stores' one encoding.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable

from fleet.store import StoreError, stored_object

log = logging.getLogger("mco.fleet")


def encode(nodes: Collection[str], ttl: float) -> bytes:
    """One process's digest: the nodes' names, and how long it counts after its last renewal (seconds)."""
    return json.dumps({"ttl": ttl, "nodes": sorted(nodes)}, separators=(",", ":")).encode()


def decode(blob: bytes) -> tuple[float, frozenset[str]] | None:
    """(time to live, names) of a digest; None for what is not one (logged, then ignored by the readers)."""
    try:
        data = stored_object(blob, "presence")  # the one reader of stored bytes: corrupt JSON of any kind refused
    except StoreError as exc:
        log.warning("presence digest ignored: %s", exc.message)
        return None
    ttl, nodes = data.get("ttl"), data.get("nodes")
    if not isinstance(ttl, int | float) or isinstance(ttl, bool) or not isinstance(nodes, list):
        log.warning("presence digest: no ttl or nodes, ignored")
        return None
    return float(ttl), frozenset(n for n in nodes if isinstance(n, str))


def union(digests: Iterable[frozenset[str]]) -> frozenset[str]:
    """Every name any live digest holds."""
    found: set[str] = set()
    for names in digests:
        found |= names
    return frozenset(found)
