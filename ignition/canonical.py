"""Canonical JSON bytes: the one serialisation that is hashed, stored, served and written to disk.

Where it sits: the renderer names `rendered-<pool>-<hash>` from these bytes, the stores keep records in
them, the server adds files in them and image objects are addressed by them, so equal values must give
equal bytes whatever order their keys were built in. Keys are sorted by code point, text is UTF-8 (not
\\u-escaped), NaN/Infinity, which JSON cannot carry, are refused. Two layouts: compact (no whitespace,
what is hashed) and pretty (two-space indent and a trailing newline, for files people read).

The definition is the `json` module with those options; orjson writes the same bytes ~10-30x faster
for big configs and is used whenever its output provably equals the definition: a value holding only
strings, integers, booleans, lists and string-keyed objects. One holding None (orjson writes NaN as null
too), a float (formatted differently) or any other type falls back to the definition, as does anything
orjson refuses (integers beyond 64 bits, lone surrogates). The value is checked, not the output: walking a
rendered config costs a tenth of scanning its bytes with a regex.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from ignition.errors import IgnitionError

__all__ = ["CanonicalError", "canonical_json", "parse_json", "pretty_json"]

_ORJSON_COMPACT = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME \
    | orjson.OPT_PASSTHROUGH_SUBCLASS
_ORJSON_PRETTY = _ORJSON_COMPACT | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
_PLAIN_SCALARS = frozenset((str, int, bool))
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


class CanonicalError(IgnitionError):
    """The value holds something JSON cannot represent (NaN, a set, bytes, a non-string key...)."""


def canonical_json(value: Any, *, pretty: bool = False) -> bytes:
    """Stable UTF-8 JSON of `value`: sorted keys, compact (or indented with a trailing newline if `pretty`)."""
    try:
        plain = _plain(value)
    except RecursionError:
        plain = False
    if not plain:
        return _reference(value, pretty)
    try:
        return orjson.dumps(value, option=_ORJSON_PRETTY if pretty else _ORJSON_COMPACT)
    except (TypeError, orjson.JSONEncodeError):
        return _reference(value, pretty)


def _plain(value: Any) -> bool:
    """True when `value` holds only types whose orjson bytes are the json module's: str, int, bool, list, dict."""
    kind = type(value)
    if kind is dict:
        return all(map(_plain, value.values()))
    if kind is list:
        return all(map(_plain, value))
    return kind in _PLAIN_SCALARS


def parse_json(raw: bytes | str) -> Any:
    """The value of JSON text, as `json.loads` reads it (ValueError, or RecursionError, where it refuses it). orjson
    parses the stores' records several times faster (every replica decodes every record the fleet writes); text
    it may read otherwise goes through the json module: what orjson refuses and json accepts (NaN and Infinity,
    lone surrogates, nesting beyond 1,024) and any run of 19 digits (an integer beyond 64 bits, which orjson reads
    as a float; a plain scan, no backtracking)."""
    if _LONG_DIGITS.search(raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")) is None:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw)


def pretty_json(value: Any) -> str:
    """`canonical_json(value, pretty=True)` as text, for printing."""
    return canonical_json(value, pretty=True).decode("utf-8")


def _reference(value: Any, pretty: bool) -> bytes:
    """The definition, with the json module."""
    try:
        if pretty:
            text = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        else:
            text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return text.encode("utf-8")
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError (a lone surrogate) is a ValueError
        raise CanonicalError(f"not representable as JSON: {exc}") from exc
