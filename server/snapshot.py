"""An immutable view of what to serve, built from the store after each render and swapped in whole.

Requests read `state.snapshot` once and use only that object, so a request never sees half a render.
Payloads are cached by rendered name across snapshots: rendered configs are content-addressed and
immutable, so an unchanged pool costs nothing to rebuild.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from renderer.rendered import PoolRecord
from renderer.store import Store
from server.appended import AppendOptions
from server.payload import ConfigPayload, build_payload


@dataclass(frozen=True)
class PoolEntry:
    """One pool: its record (target, conditions) and the payload of its target (None: no target yet)."""

    record: PoolRecord
    payload: ConfigPayload | None


@dataclass(frozen=True)
class Snapshot:
    """Pools by name, with a generation number and the fingerprint the store had when it was built."""

    generation: int
    pools: Mapping[str, PoolEntry] = field(default_factory=dict)
    fingerprint: str = ""


class PayloadCache:
    """Payloads by rendered name, dropped once no snapshot uses them."""

    def __init__(self, *, options: AppendOptions | None = None, gzip_level: int = 6) -> None:
        self.options = options or AppendOptions()
        self.gzip_level = gzip_level
        self._payloads: dict[str, ConfigPayload] = {}
        self._lock = threading.Lock()

    def get(self, store: Store, name: str) -> ConfigPayload:
        """The payload for a rendered config, building it on first use."""
        with self._lock:
            found = self._payloads.get(name)
        if found is not None:
            return found
        payload = build_payload(store.get_rendered(name), options=self.options, gzip_level=self.gzip_level)
        with self._lock:
            self._payloads[name] = payload
        return payload

    def keep_only(self, names: set[str]) -> None:
        """Forget payloads of configs no pool serves any more."""
        with self._lock:
            for name in set(self._payloads) - names:
                del self._payloads[name]


def store_fingerprint(store: Store) -> str:
    """A string that changes whenever any pool record changes (what followers poll)."""
    records = [store.get_pool(p).to_dict() for p in store.list_pools()]
    return json.dumps(records, sort_keys=True)


def load_snapshot(store: Store, *, cache: PayloadCache, generation: int) -> Snapshot:
    """Read every pool record and build (or reuse) its target's payload. Raises StoreError on I/O failure."""
    records = [store.get_pool(p) for p in store.list_pools()]
    fingerprint = json.dumps([r.to_dict() for r in records], sort_keys=True)
    pools = {}
    for record in records:
        payload = cache.get(store, record.current) if record.current else None
        pools[record.name] = PoolEntry(record, payload)
    cache.keep_only({r.current for r in records if r.current})
    return Snapshot(generation, pools, fingerprint)
