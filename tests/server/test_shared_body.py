"""A machine's answer bytes as parts sharing its pool's (server/shared_body.py): the parts are exactly the body,
the shared parts are the pool's own memory, and a body with little in common stays whole."""

from __future__ import annotations

import random

from server.shared_body import MIN_SHARED, SharedBody, common_prefix, common_suffix, shared


def _naive_prefix(a: bytes, b: bytes) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_common_prefix_and_suffix_agree_with_a_byte_loop() -> None:
    rng = random.Random(7)
    for _ in range(200):
        base = bytes(rng.randrange(4) for _ in range(rng.randrange(0, 60)))
        cut = rng.randrange(0, len(base) + 1)
        other = base[:cut] + bytes(rng.randrange(4) for _ in range(rng.randrange(0, 5))) + base[cut:]
        assert common_prefix(other, base) == _naive_prefix(other, base)
        head = common_prefix(other, base)
        limit = min(len(other), len(base)) - head
        assert common_suffix(other, base, limit) == min(_naive_prefix(other[::-1], base[::-1]), limit)


def test_a_machine_body_shares_its_pools_bytes_and_is_exactly_itself() -> None:
    pool = b'{"files":[' + b"x" * (3 * MIN_SHARED) + b'],"tail":"' + b"y" * (MIN_SHARED // 2) + b'"}'
    cut = len(pool) // 2
    machine = pool[:cut] + b'"hostname":"node-a",' + pool[cut:]
    body = shared(machine, pool)
    assert isinstance(body, SharedBody)
    assert bytes(body) == machine and len(body) == len(machine)
    assert any(isinstance(p, memoryview) and p.obj is pool for p in body._parts)
    assert shared(b"a" * 100, b"b" * 100) == b"a" * 100  # nothing worth sharing: the body itself
