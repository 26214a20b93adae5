"""An immutable view of what to serve, built from the store after each render and swapped in whole.

Requests read `state.snapshot` once and use only that object, so a request never sees half a render.
Payloads are cached by rendered name across snapshots: rendered configs are content-addressed and
immutable, so an unchanged pool costs nothing to rebuild, and a new target costs one read and parse (its
spec versions are built on first request, server/payload.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from multidict import MultiMapping

from fleet.errors import FleetError
from fleet.machine_entry import MachineEntry
from fleet.machines import FactError, MachineIndex, MachineTie, query_facts
from fleet.rendered import PoolRecord, RenderedConfig, machine_config_name, pool_config_of
from fleet.rollout import NodeStatuses
from fleet.store import Store
from ignition.canonical import canonical_json
from renderer.machine_render import machine_config
from server.added_files import AppendOptions
from server.payload import ConfigPayload


@dataclass(frozen=True)
class PoolEntry:
    """One pool: its record (target, conditions) and the payload it serves (None: no target yet).

    `held_back` is True while the pool serves an older config than its target (served_config's rule);
    `machines` chooses a booting machine's own config (None: the pool has no machine documents).
    """

    record: PoolRecord
    payload: ConfigPayload | None
    held_back: bool = False
    machines: MachinePayloads | None = None


@dataclass(frozen=True)
class Snapshot:
    """Pools by name, with a generation number and the fingerprint the store had when it was built."""

    generation: int
    pools: Mapping[str, PoolEntry] = field(default_factory=dict)
    fingerprint: str = ""

    @property
    def held_back(self) -> bool:
        """Whether some pool serves an older config than its target (node reports then matter)."""
        return any(e.held_back for e in self.pools.values())


CHOSEN_LIMIT = 4096  # distinct machine queries remembered per pool and snapshot


class MachinePayloads:
    """A pool's machines in one snapshot: which machine a request is (fleet/machines.py MachineIndex) and its
    config's payload, merged over the config the pool serves and cached by name across snapshots (a machine
    config's name changes with its pool config or its overlay, so a change is a new entry, never a stale one).

    A machine's config on the pool's target is read from the store (the render wrote it); while the pool
    holds its target back, the overlay is merged over the older config served (renderer/machine_render.py)."""

    def __init__(self, record: PoolRecord, served: str, *, cache: PayloadCache, store: Store) -> None:
        self.index = MachineIndex(record.machines)
        self._by_node = {m.node: m for m in record.machines if m.node}
        self._chosen: dict[tuple[tuple[str, str], ...], MachineEntry | FleetError | None] = {}
        self._served = served
        self._target = record.current
        self._cache = cache
        self._store = store

    def choose(self, query: MultiMapping[str] | None) -> MachineEntry | None:
        """The machine a request's query names (None: none matches); FactError or MachineTie as
        fleet/machines.py raises them. Remembered per distinct query for this snapshot (bounded): a fleet's
        machines ask again and again with the same few queries."""
        key = tuple(query.items()) if query else ()
        try:
            found = self._chosen[key]
        except KeyError:
            try:
                found = self.index.select(query_facts(key))
            except (FactError, MachineTie) as exc:
                found = exc
            if len(self._chosen) >= CHOSEN_LIMIT:
                self._chosen.clear()
            self._chosen[key] = found
        if isinstance(found, FleetError):
            raise found.with_traceback(None)  # (a remembered refusal, raised again without its old traceback)
        return found

    def of_node(self, node: str) -> MachineEntry | None:
        """The machine of node `node` on day 2 (fleet/machines.py `machine_of_node`'s rule: its `hostname`)."""
        return self._by_node.get(node)

    def name(self, machine: MachineEntry) -> str:
        """The name of `machine`'s config on the config the pool serves."""
        if self._served == self._target and machine.rendered:
            return machine.rendered
        return machine_config_name(self._served, machine.overlay_hash)

    def names(self) -> set[str]:
        """Every machine's config name (what the payload cache keeps)."""
        return {self.name(m) for entries in self.index.entries() for m in entries}

    def peek(self, machine: MachineEntry) -> ConfigPayload | None:
        """The payload if built (no I/O)."""
        return self._cache.peek(self.name(machine))

    def build(self, machine: MachineEntry) -> ConfigPayload:
        """The payload, read or merged on first use (store I/O: call it off the event loop)."""
        name = self.name(machine)
        found = self._cache.peek(name)
        if found is not None:
            return found
        if name == machine.rendered:
            return self._cache.get(self._store, name, machine=True)
        return self._cache.put(machine_config(self._store.get_rendered(self._served), machine), machine=True)


class PayloadCache:
    """Payloads by rendered name, dropped once no snapshot uses them.

    A pool's payload stays while its pool serves it. A machine's (`machine=True`) is a whole body per machine
    that fetched: only the `MACHINE_PAYLOADS` most recently used are kept, so a fleet of thousands of machines
    costs a bounded memory (~330 MB at a 270 KB config) and a machine asking again after being dropped costs one
    rebuild (a merge, translation and gzip, off the event loop).
    """

    MACHINE_PAYLOADS = 1024

    def __init__(self, *, options: AppendOptions | None = None, gzip_level: int = 6) -> None:
        self.options = options or AppendOptions()
        self.gzip_level = gzip_level
        self._payloads: dict[str, ConfigPayload] = {}
        self._machines: OrderedDict[str, None] = OrderedDict()  # machine payloads' names, least recently used first
        self._lock = threading.Lock()

    def get(self, store: Store, name: str, *, machine: bool = False) -> ConfigPayload:
        """The payload for a rendered config, building it on first use."""
        found = self.peek(name)
        if found is not None:
            return found
        payload = ConfigPayload(store.get_rendered(name), options=self.options, gzip_level=self.gzip_level)
        with self._lock:
            return self._keep(name, payload, machine)

    def peek(self, name: str) -> ConfigPayload | None:
        """The payload of `name` when it is built (no I/O); a machine's counts as used."""
        with self._lock:
            if name in self._machines:
                self._machines.move_to_end(name)
            return self._payloads.get(name)

    def put(self, rendered: RenderedConfig, *, machine: bool = False) -> ConfigPayload:
        """Keep the payload of a config built here (not read from the store)."""
        payload = ConfigPayload(rendered, options=self.options, gzip_level=self.gzip_level)
        with self._lock:
            return self._keep(rendered.name, payload, machine)

    def _keep(self, name: str, payload: ConfigPayload, machine: bool) -> ConfigPayload:
        """Keep `payload` unless another thread kept one first (held: the lock); drop the least recently used
        machine payloads beyond the bound."""
        kept = self._payloads.setdefault(name, payload)
        if machine:
            self._machines[name] = None
            self._machines.move_to_end(name)
            while len(self._machines) > self.MACHINE_PAYLOADS:
                dropped, _ = self._machines.popitem(last=False)
                self._payloads.pop(dropped, None)
        return kept

    def keep_only(self, names: set[str]) -> None:
        """Forget payloads of configs no pool serves any more."""
        with self._lock:
            for name in set(self._payloads) - names:
                del self._payloads[name]
                self._machines.pop(name, None)


def served_config(record: PoolRecord, statuses: NodeStatuses) -> str | None:
    """Which rendered config a booting node of the pool gets, as the MCS decides (MCO `pkg/server/cluster_server.go`: GetConfig).

    The MCS serves the pool's new target once at least one node is updated to it, and until then the
    config the pool's nodes are at, so a new machine never boots into a config no node has survived.
    Here: the target when no node of the pool has reported, or when one reports Done at the target;
    otherwise the newest earlier target (pool history) that some node of the pool currently runs;
    the target if none does. A pool `mco rollout revert` pinned serves its target at once (the revert chose a config
    every node of the pool reached, fleet/rollout_gates.py `revert_target`): a booting machine never gets the config
    the revert left. Read from the pool's report counts (`NodeStatuses.reports`): it costs the distinct
    reports of the pool, not a pass over its nodes (a replica decides it again on every change while held back).
    """
    target = record.current
    reports = statuses.reports(record.name)
    if not target or not reports or record.reverted_from:
        return target
    if any(state == "Done" and pool_config_of(current) == target for state, current, _ in reports):
        return target
    running = {pool_config_of(current) for _, current, _ in reports}
    for entry in reversed(record.history):
        if entry.name != target and entry.name in running:
            return entry.name
    return target


def _served(store: Store, records: Sequence[PoolRecord]) -> list[str | None]:
    """Each record's `served_config`, on the store's statuses as they are now (one read, no pass over the nodes)."""
    return store.read_statuses(lambda statuses: [served_config(r, statuses) for r in records])


def _fingerprint(records: Sequence[PoolRecord], served: Sequence[str | None] | None) -> str:
    """The pool records, and (while a pool holds its target back) what each pool serves: what a snapshot is built
    from, so the same fingerprint means the same snapshot."""
    return canonical_json([[r.to_dict() for r in records], list(served) if served is not None else None]).decode()


def store_fingerprint(store: Store, *, with_nodes: bool = False) -> str:
    """A string that changes whenever a pool record changes, or (with_nodes) the config some pool serves does
    (which node reports can move while a pool holds its target back)."""
    records = [store.get_pool(p) for p in store.list_pools()]
    return _fingerprint(records, _served(store, records) if with_nodes else None)


def load_snapshot(store: Store, *, cache: PayloadCache, generation: int) -> Snapshot:
    """Read every pool record and build (or reuse) the payload it serves. Raises StoreError on I/O failure."""
    records = [store.get_pool(p) for p in store.list_pools()]
    pools = {}
    keep: set[str] = set()
    served_by_pool = _served(store, records)
    for record, served in zip(records, served_by_pool, strict=True):
        payload = cache.get(store, served) if served else None
        machines = MachinePayloads(record, served, cache=cache, store=store) if record.machines and served else None
        if machines is not None:
            keep |= machines.names()
        pools[record.name] = PoolEntry(record, payload, held_back=served != record.current, machines=machines)
    held = any(e.held_back for e in pools.values())
    fingerprint = _fingerprint(records, served_by_pool if held else None)
    cache.keep_only(keep | {e.payload.name for e in pools.values() if e.payload is not None})
    return Snapshot(generation, pools, fingerprint)
