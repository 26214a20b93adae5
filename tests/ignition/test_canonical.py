"""Canonical JSON: equal configs give equal bytes, whatever order their keys were built in."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.canonical import CanonicalError, canonical_json, parse_json, pretty_json

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


_NUMBERS_AND_TEXT = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=8) | st.sampled_from(["null", "1e-7", ":null"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(deadline=None)
@given(_NUMBERS_AND_TEXT)
def test_bytes_are_the_json_module_definition(value: Any) -> None:
    """The fast route writes the very bytes of the definition (floats, nulls and big integers included)."""
    assert canonical_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"),
                                               ensure_ascii=False).encode()
    assert canonical_json(value, pretty=True) == (json.dumps(value, sort_keys=True, indent=2,
                                                             ensure_ascii=False) + "\n").encode()


@pytest.mark.parametrize("bad", [float("nan"), [float("inf")], {"x": [float("-inf")]}, {1: "a", "b": 2}],
                         ids=["nan", "inf", "nested-minus-inf", "mixed-keys"])
def test_refused_in_both_layouts(bad: Any) -> None:
    for pretty in (False, True):
        with pytest.raises(CanonicalError):
            canonical_json(bad, pretty=pretty)


_ANY_JSON_TEXT = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
    | st.text(max_size=8),  # lone surrogates included: json writes them escaped, and reads them back
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
).map(lambda v: json.dumps(v))


@settings(deadline=None)
@given(_ANY_JSON_TEXT)
def test_parse_json_reads_what_the_json_module_reads(text: str) -> None:
    """Floats, NaN, big integers and lone surrogates included (orjson refuses the last three: json reads them)."""
    expected, found = json.loads(text), parse_json(text.encode())
    assert json.dumps(found) == json.dumps(expected)  # (NaN != NaN: compared as the json module writes them)


@pytest.mark.parametrize("bad", [b"", b"{", b'{"a":1,}', b"[1] [2]", b"\xff", b"'a'"],
                         ids=["empty", "open", "trailing-comma", "two-values", "not-utf8", "single-quotes"])
def test_parse_json_refuses_what_the_json_module_refuses(bad: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(bad)
    with pytest.raises(ValueError):
        parse_json(bad)


def test_parse_json_refuses_deep_nesting_as_the_json_module_does() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(RecursionError):
        json.loads(deep)
    with pytest.raises(RecursionError):
        parse_json(deep)
