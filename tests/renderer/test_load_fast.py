"""JSON manifests through orjson (renderer/load.py `_fast_json`) and files read as bytes give exactly what
the json route and `read_text` gave.

The references are the same `load_text` with the fast path switched off, and load_file as it was (below):
documents, problems and their line:col must be equal for any text, duplicates at any depth, escapes, big
numbers, CR/CRLF line ends, non-UTF-8 bytes and non-JSON included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from renderer import load

KEYS = st.sampled_from(["a", "b", "a:b", "é", "\\", '"', "", "kind", "metadata", "u003a"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
                    st.text(st.sampled_from(list("ab:,{}[]\"\\é\u2028\x01 ")), max_size=6))
VALUES: st.SearchStrategy[Any] = st.recursive(
    SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.lists(st.tuples(KEYS, inner), max_size=4)),
    max_leaves=20)


def _write(value: Any, style: int) -> str:
    """JSON text of `value`, where a list of (key, value) pairs is an object (so keys may repeat)."""
    if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
        sep = [":", " : ", ":\n", ": "][style % 4]
        return "{" + ",".join(json.dumps(k, ensure_ascii=style % 3 == 0) + sep + _write(v, style) for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_write(v, style) for v in value) + "]"
    return json.dumps(value, ensure_ascii=style % 3 == 0)


def _seen(result: tuple[list[load.Document], list[Any]]) -> tuple[list[Any], list[Any]]:
    docs, problems = result
    return [(d.source, d.index, json.dumps(d.data, default=repr), type(d.data), d.text)
            for d in docs], problems


def _loaded(text: str, source: str = "manifests/x.json", *, fast: bool = True, encoded: bool = False) -> Any:
    """What load_text gives, with or without the fast path (the reference), given the UTF-8 or not."""
    saved = load._fast_json
    if not fast:
        load._fast_json = lambda _text, _encoded=None: load._SLOW  # type: ignore[assignment]
    try:
        return _seen(load.load_text(text, source, encoded=text.encode() if encoded else None))
    finally:
        load._fast_json = saved  # type: ignore[assignment]


@settings(max_examples=1500, deadline=None)
@given(pairs=st.lists(st.tuples(KEYS, VALUES), max_size=5), style=st.integers(0, 11))
def test_objects_load_as_the_json_route_loads_them(pairs: list[tuple[str, Any]], style: int) -> None:
    text = _write(pairs, style) if pairs else "{}"
    expected = _loaded(text, fast=False)
    assert _loaded(text) == expected
    assert _loaded(text, encoded=True) == expected
    saved, load._scan = load._scan, None  # the Python checks, where the C scan is not built
    try:
        assert _loaded(text, encoded=True) == expected
    finally:
        load._scan = saved


@pytest.mark.parametrize("text", [
    '{"a":1,"a":2}', '{"a":{"b":1,"b":1}}', '{"a":"x:y","b":[1,2]}', '{"a":NaN}', '{"a":Infinity}',
    '{"a":"\\u003a","a":1}', '{"a" : 1}', '{"a":1e400}', '{"a":18446744073709551616}', '{"a":-9223372036854775809}',
    '{"a":"\\ud800"}', '{"é":"ü"}', '{"a":1}x', '{"a":', '{"a":"\\u003A"}', '{"a\\u0022":1,"a\\"":2}',
    '{"a":12345678901234567890123}', '{"a":1.5e+3,"b":99999999999999999999}', '{a: 1}', '{"a":"\x01"}',
])
def test_table(text: str) -> None:
    for source in ("manifests/x.json", "manifests/x.yaml"):
        expected = _loaded(text, source, fast=False)
        assert _loaded(text, source) == expected
        assert _loaded(text, source, encoded=True) == expected


def test_the_fast_path_takes_ordinary_manifests() -> None:
    text = json.dumps({"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
                       "metadata": {"name": "50-x"}, "spec": {"config": {"ignition": {"version": "3.5.0"}}}},
                      indent=2)
    assert load._fast_json(text) is not load._SLOW


def _load_file_read_text(path: Path, source: str) -> tuple[list[load.Document], list[load.Problem]]:
    """The reference load_file: the text as `read_text` gives it (universal newlines, its UTF-8 errors)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return [], [load.Problem("encoding", f"not UTF-8 text: {exc.reason} at byte {exc.start}", source)]
    except OSError as exc:
        return [], [load.Problem("io", f"cannot read: {exc.strerror or exc}", source)]
    return load.load_text(text, source)


PIECES = st.sampled_from([b"{", b"}", b'"a"', b":", b"1", b",", b"\r\n", b"\r", b"\n", b" ", b"\xc3\xa9",
                          b"\xff", b"\xc3", b"a: 1", b"- x", b'"\\u003a"', b"\r\r\n"])


@settings(max_examples=400, deadline=None)
@given(chunks=st.lists(PIECES, max_size=25), suffix=st.sampled_from([".json", ".yaml"]))
def test_load_file_reads_as_read_text_did(tmp_path_factory: pytest.TempPathFactory, chunks: list[bytes],
                                          suffix: str) -> None:
    path = tmp_path_factory.mktemp("m") / f"x{suffix}"
    path.write_bytes(b"".join(chunks))
    source = f"manifests/x{suffix}"
    assert _seen(load.load_file(path, source)) == _seen(_load_file_read_text(path, source))


def test_load_file_missing_is_the_same_problem(tmp_path: Path) -> None:
    path = tmp_path / "gone.json"
    assert load.load_file(path, "manifests/gone.json") == _load_file_read_text(path, "manifests/gone.json")


@pytest.mark.parametrize("size", [0, 1, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, (1 << 20) + (1 << 16) + 7])
def test_load_file_reads_every_byte_across_read_sizes(tmp_path: Path, size: int) -> None:
    """_read_bytes reads in 64 KiB then 1 MiB chunks: files at and around those sizes come back whole."""
    body = json.dumps({"a": "x" * max(0, size - 10)})[:size] if size else ""
    path = tmp_path / "big.json"
    path.write_text(body, encoding="utf-8")
    assert load._read_bytes(path) == path.read_bytes()
    assert _seen(load.load_file(path, "manifests/big.json")) == _seen(_load_file_read_text(path, "manifests/big.json"))


def test_load_file_on_a_directory_is_the_same_problem(tmp_path: Path) -> None:
    (tmp_path / "d.json").mkdir()
    assert load.load_file(tmp_path / "d.json", "manifests/d.json") == \
        _load_file_read_text(tmp_path / "d.json", "manifests/d.json")
