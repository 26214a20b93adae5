"""Canonical JSON: equal configs give equal bytes, whatever order their keys were built in."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.canonical import CanonicalError, canonical_json, pretty_json

GOLDEN = [
    (
        "sorted-compact",
        {"storage": {"files": []}, "ignition": {"version": "3.6.0"}},
        b'{"ignition":{"version":"3.6.0"},"storage":{"files":[]}}',
    ),
    ("nested-sorted", {"b": [{"z": 1, "a": True}], "a": None}, b'{"a":null,"b":[{"a":true,"z":1}]}'),
    ("utf8-not-escaped", {"k": "café €"}, '{"k":"café €"}'.encode()),
    ("control-chars-escaped", {"k": 'a\nb"c'}, b'{"k":"a\\nb\\"c"}'),
    ("empty", {}, b"{}"),
]


@pytest.mark.parametrize(("config", "expected"), [g[1:] for g in GOLDEN], ids=[g[0] for g in GOLDEN])
def test_golden(config: dict[str, Any], expected: bytes) -> None:
    assert canonical_json(config) == expected


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(deadline=None)  # timing is bench/'s job; CI machines are loaded
@given(st.dictionaries(st.text(max_size=6), _json, max_size=5))
def test_key_order_does_not_matter_and_roundtrips(config: dict[str, Any]) -> None:
    shuffled = dict(reversed(list(config.items())))
    assert canonical_json(shuffled) == canonical_json(config)
    assert json.loads(canonical_json(config)) == config
    assert json.loads(pretty_json(config)) == config


@pytest.mark.parametrize(
    "bad", [{"x": float("nan")}, {"x": {1, 2}}, {"x": b"bytes"}], ids=["nan", "set", "bytes"]
)
def test_unrepresentable_values_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(CanonicalError):
        canonical_json(bad)
