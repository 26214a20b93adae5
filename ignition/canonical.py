"""Canonical JSON bytes of a config: the one serialisation that is hashed, stored and served.

Where it sits: the renderer names `rendered-<pool>-<hash>` from these bytes and the server sends them,
so equal configs must give equal bytes whatever order their keys were built in. Keys are sorted by
code point, separators carry no spaces, text is UTF-8 (not \\u-escaped), and NaN/Infinity, which
JSON cannot carry, are refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ignition.errors import IgnitionError

__all__ = ["CanonicalError", "canonical_json", "pretty_json"]


class CanonicalError(IgnitionError):
    """The value holds something JSON cannot represent (NaN, a set, bytes, a non-string key...)."""


def canonical_json(config: Mapping[str, Any]) -> bytes:
    """Stable, compact UTF-8 JSON: sorted keys, no whitespace."""
    try:
        text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise CanonicalError(f"not representable as JSON: {exc}") from exc
    return text.encode("utf-8")


def pretty_json(config: Mapping[str, Any]) -> str:
    """The same ordering, indented for people (two spaces, trailing newline)."""
    try:
        text = json.dumps(config, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise CanonicalError(f"not representable as JSON: {exc}") from exc
    return text + "\n"
