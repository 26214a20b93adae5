"""The payload cache: pools' payloads stay while served; machines' are bounded, least recently used dropped."""

from __future__ import annotations

from fleet.store import MemoryStore
from server.snapshot import PayloadCache
from tests.builders import rendered_config


def test_machine_payloads_are_bounded_least_recently_used_first() -> None:
    store = MemoryStore()
    pool = rendered_config("pool")
    store.put_rendered(pool)
    cache = PayloadCache()
    cache.MACHINE_PAYLOADS = 2
    served = cache.get(store, pool.name)
    machines = [rendered_config(f"m{i}") for i in range(3)]
    cache.put(machines[0], machine=True)
    cache.put(machines[1], machine=True)
    assert cache.peek(machines[0].name) is not None  # used: now the most recent
    cache.put(machines[2], machine=True)
    assert cache.peek(machines[1].name) is None  # the least recently used machine is dropped
    assert cache.peek(machines[0].name) is not None and cache.peek(machines[2].name) is not None
    assert cache.peek(pool.name) is served  # a pool's payload is never dropped for machines


def test_a_dropped_machine_payload_is_built_again_from_the_store() -> None:
    store = MemoryStore()
    machines = [rendered_config(f"m{i}") for i in range(2)]
    for rendered in machines:
        store.put_rendered(rendered)
    cache = PayloadCache()
    cache.MACHINE_PAYLOADS = 1
    first = cache.get(store, machines[0].name, machine=True)
    cache.get(store, machines[1].name, machine=True)
    assert cache.peek(machines[0].name) is None
    again = cache.get(store, machines[0].name, machine=True)
    assert again is not first and again.variant(None).body == first.variant(None).body


def test_keep_only_forgets_machines_no_pool_serves() -> None:
    cache = PayloadCache()
    cache.MACHINE_PAYLOADS = 2
    kept, forgotten, new = rendered_config("kept"), rendered_config("forgotten"), rendered_config("new")
    cache.put(kept, machine=True)
    cache.put(forgotten, machine=True)
    cache.keep_only({kept.name})
    assert cache.peek(forgotten.name) is None
    cache.put(new, machine=True)
    assert cache.peek(kept.name) is not None  # the forgotten one no longer counts against the bound
