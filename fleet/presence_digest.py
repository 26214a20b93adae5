"""Which nodes each server process heard from, shared through the store, so that every process behind one address
judges the rollout's turn rule (fleet/rollout_turn.py) on what all of them heard: a node holding its claim at one
replica is online for the others too, and is not passed over by them.

Each process publishes a digest every few seconds (server/presence.py `exchange`): the nodes it heard from lately
with when (a claim held there counts as now), and until when the digest holds, so a process that died stops
counting once its digest has run out. The stores keep one digest per process (`Store.publish_presence`) and give
back every live one merged (`Store.read_presence`); this module is their one encoding and merge.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping

log = logging.getLogger("mco.fleet")


def encode(nodes: Mapping[str, float], until: float) -> bytes:
    """One process's digest: node -> when it was last heard from (seconds since the epoch), valid until `until`."""
    return json.dumps({"until": until, "nodes": nodes}, separators=(",", ":")).encode()


def until_of(blob: bytes) -> float | None:
    """When the digest runs out (None: not a digest)."""
    decoded = _decode(blob)
    return decoded[0] if decoded is not None else None


def merge(blobs: Iterable[bytes], now: float) -> dict[str, float]:
    """The digests still valid at `now`, merged: node -> the latest time any process heard from it."""
    merged: dict[str, float] = {}
    for blob in blobs:
        decoded = _decode(blob)
        if decoded is None or decoded[0] < now:
            continue
        for node, at in decoded[1].items():
            if at > merged.get(node, 0.0):
                merged[node] = at
    return merged


def _decode(blob: bytes) -> tuple[float, dict[str, float]] | None:
    try:
        data = json.loads(blob)
    except ValueError:  # json.JSONDecodeError and bad UTF-8 alike
        log.warning("presence digest: not JSON, ignored")
        return None
    until = data.get("until") if isinstance(data, dict) else None
    nodes = data.get("nodes") if isinstance(data, dict) else None
    if not isinstance(until, int | float) or not isinstance(nodes, dict):
        log.warning("presence digest: no until or nodes, ignored")
        return None
    return float(until), {str(k): float(v) for k, v in nodes.items() if isinstance(v, int | float)}
