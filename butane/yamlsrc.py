"""Butane source text -> positioned YAML nodes, read the way Butane's YAML library (go-yaml v3) reads them.

First step of the Butane pipeline. PyYAML resolves plain scalars by YAML 1.1 (`yes` is a boolean, `0644`
octal); go-yaml v3 does not treat `yes`/`on` as booleans, but still reads `0644` as octal. So the tree is
composed with no implicit resolution (libyaml via PyYAML's base loader, the same C parser go-yaml ports) and
plain scalars are resolved here by go-yaml v3's rules. Lines and columns are 1-based, as Butane prints them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from butane.errors import ButaneError

NULL, BOOL, INT, FLOAT, STR, MAP, SEQ = "!!null", "!!bool", "!!int", "!!float", "!!str", "!!map", "!!seq"
TIMESTAMP = "!!timestamp"

_LOADER: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
_STR_TAG = "tag:yaml.org,2002:str"
_FLOAT_RE = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_NULLS = {"", "~", "null", "Null", "NULL"}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
_INF = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}
_NEG_INF = {"-.inf", "-.Inf", "-.INF"}
_NAN = {".nan", ".NaN", ".NAN"}


class YamlSyntaxError(ButaneError):
    """The text is not YAML; the message is go-yaml's `yaml: line N: <problem>`."""


@dataclass(eq=False)
class YNode:
    """One YAML node: a scalar (`text`, resolved `tag` and `value`), a mapping (`pairs`) or a sequence (`items`)."""

    kind: str  # "scalar" | "map" | "seq"
    tag: str
    line: int
    col: int
    text: str = ""
    value: Any = None
    pairs: list[tuple[YNode, YNode]] = field(default_factory=list)
    items: list[YNode] = field(default_factory=list)
    plain: bool = False  # a plain (unquoted, untagged) scalar
    alias: YNode | None = None  # for an alias (`*name`): the anchored node it stands for

    @property
    def target(self) -> YNode:
        """The node holding the content: the anchored node for an alias, else this node."""
        return self.alias if self.alias is not None else self

    def is_merge_key(self) -> bool:
        """A plain `<<` key: go-yaml's merge key."""
        return self.kind == "scalar" and self.plain and self.text == "<<"


def go_parse_int(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 0, 64), then ParseUint(text, 0, 64) as go-yaml falls back to: prefixes 0x,
    0o, 0b (any case) and 0; a sign only within int64 (ParseUint takes none). Underscores are the caller's."""
    s = text
    sign = 1
    signed = s[:1] in ("+", "-")
    if signed:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if not s:
        return None
    base = 10
    body = s
    low = s[:2].lower()
    if len(s) >= 3 and low in ("0x", "0o", "0b"):
        base, body = {"0x": 16, "0o": 8, "0b": 2}[low], s[2:]
    elif s[0] == "0":
        base, body = 8, s[1:]
        if not body:
            return 0
    value = _digits(body, base)
    if value is None:
        return None
    value *= sign
    if value < -(2**63) or value > 2**64 - 1 or (signed and value > 2**63 - 1):
        return None
    return value


def _digits(body: str, base: int) -> int | None:
    """The value of `body`, digits of `base` only (no sign, no prefix), or None."""
    allowed = "0123456789abcdefABCDEF"[: base if base <= 10 else 22]
    if not body or not all(c in allowed for c in body):
        return None
    return int(body, base)


def _go_parse_int_base(text: str, base: int) -> int | None:
    """strconv.ParseInt(text, base, 64) for an explicit base: an optional sign, then digits of that base."""
    sign = -1 if text[:1] == "-" else 1
    value = _digits(text[1:] if text[:1] in ("+", "-") else text, base)
    if value is None or not -(2**63) <= sign * value <= 2**63 - 1:
        return None
    return sign * value


def _go_parse_uint_base(text: str, base: int) -> int | None:
    """strconv.ParseUint(text, base, 64) for an explicit base: digits of that base, no sign."""
    value = _digits(text, base)
    return value if value is not None and value <= 2**64 - 1 else None


_POINT_FLOAT = re.compile(r"\.[0-9_]*[0-9][0-9_]*(?:[eE][-+]?[0-9][0-9_]*)?")  # a digit in the mantissa


def _underscores_ok(text: str) -> bool:
    """strconv's underscoreOK for a decimal number: each `_` between two digits."""
    saw = "^"
    for c in text:
        if c.isdigit():
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def _finite(text: str) -> float | None:
    """float(text) when it is finite: strconv.ParseFloat fails with ErrRange beyond float64 (underflow is 0)."""
    value = float(text)
    return value if math.isfinite(value) else None


def go_parse_point_float(text: str) -> float | None:
    """strconv.ParseFloat(text, 64) for a text starting with `.` (resolve.go's '.' case, on the raw text):
    digits after the point (underscores between digits allowed), an optional exponent, nothing else."""
    if not _POINT_FLOAT.fullmatch(text):
        return None
    if "_" in text and not _underscores_ok(text):
        return None
    return _finite(text.replace("_", ""))


_TS_DATE = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})")
_TS_CLOCK = re.compile(r"([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:[.,][0-9]+)?")
_TS_ZONE = re.compile(r"Z|[+-]([0-9]{2}):([0-9]{2})")
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_go_timestamp(text: str) -> bool:
    """resolve.go parseTimestamp: time.Parse with "2006-1-2T15:4:5.999999999Z07:00" (or a lower-case `t`),
    "2006-1-2 15:4:5.999999999" or "2006-1-2", with Go's range checks (month 1-12, a real day of that
    month, hour < 24, minute and second < 60, zone hour <= 24 and minute <= 60)."""
    date = _TS_DATE.match(text)
    if date is None:
        return False
    year, month, day = (int(g) for g in date.groups())
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= day <= _MONTH_DAYS[month - 1] + (1 if month == 2 and leap else 0):
        return False
    rest = text[date.end() :]
    if not rest:
        return True
    if rest[0] not in "Tt ":
        return False
    clock = _TS_CLOCK.match(rest, 1)
    if clock is None:
        return False
    hour, minute, second = (int(g) for g in clock.groups())
    if hour >= 24 or minute >= 60 or second >= 60:
        return False
    zone = rest[clock.end() :]
    if rest[0] == " ":
        return not zone
    match = _TS_ZONE.fullmatch(zone)
    if match is None:
        return False
    return match.group(1) is None or (int(match.group(1)) <= 24 and int(match.group(2)) <= 60)


def resolve_plain(text: str) -> tuple[str, Any]:
    """The tag and value go-yaml v3 (resolve.go `resolve` with no tag) gives a plain scalar.

    The first character picks the route, as resolve.go's table does: a sign or digit may be a timestamp,
    an integer (underscores dropped), a float matching yamlStyleFloat and within float64, or a `0b`/`0o`
    integer with its sign after the prefix; a `.` is whatever strconv.ParseFloat takes of the raw text;
    anything else is a string unless it is one of the fixed words (`true`, `null`, `.inf`, ...). `<<`
    is a string here: go-yaml v3's table gives `<` no route, so its map entry for `<<` is never read.
    A timestamp's value is its text (Go's is a time.Time; nothing here reads it)."""
    if text in _NULLS:
        return NULL, None
    if text in _TRUE:
        return BOOL, True
    if text in _FALSE:
        return BOOL, False
    if text in _INF:
        return FLOAT, math.inf
    if text in _NEG_INF:
        return FLOAT, -math.inf
    if text in _NAN:
        return FLOAT, math.nan
    first = text[:1]
    if first == ".":
        value = go_parse_point_float(text)
        return (FLOAT, value) if value is not None else (STR, text)
    if first and first in "+-0123456789":
        if is_go_timestamp(text):
            return TIMESTAMP, text
        plain = text.replace("_", "")
        number = go_parse_int(plain)
        if number is not None:
            return INT, number
        if _FLOAT_RE.match(plain):
            value = _finite(plain)
            if value is not None:
                return FLOAT, value
        number = _prefixed_int(plain)
        if number is not None:
            return INT, number
    return STR, text


def _prefixed_int(plain: str) -> int | None:
    """resolve.go's retries after ParseInt/ParseFloat: `0b`/`0o` then digits of that base parsed with a sign
    allowed after the prefix (`0b-101` is -5), or `-0b`/`-0o` then digits; the prefixes in lower case."""
    for prefix, base in (("0b", 2), ("0o", 8)):
        if plain.startswith(prefix):
            rest = plain[2:]
            found = _go_parse_int_base(rest, base)
            return found if found is not None else _go_parse_uint_base(rest, base)
        if plain.startswith("-" + prefix):
            return _go_parse_int_base("-" + plain[3:], base)
    return None


def _position(event: yaml.Event) -> tuple[int, int]:
    """1-based line and column where an event starts."""
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


def _scalar(event: yaml.ScalarEvent) -> YNode:
    line, col = _position(event)
    text = event.value
    plain = not event.style and event.tag in (None, "!") and bool(event.implicit[0])
    if plain:
        tag, value = resolve_plain(text)
    elif event.tag in (None, "!", _STR_TAG) or event.style:
        tag, value = STR, text
    else:
        tag = "!!" + event.tag.rsplit(":", 1)[-1] if event.tag.startswith("tag:yaml.org,2002:") else event.tag
        _, value = resolve_plain(text)
    return YNode("scalar", tag, line, col, text=text, value=value, plain=plain)


def _compose(events: Any) -> YNode | None:
    """The first document's tree, built from libyaml's events (aliases kept as alias nodes, as go-yaml does)."""
    anchors: dict[str, YNode] = {}
    stack: list[YNode] = []
    pending_key: list[YNode | None] = []
    root: YNode | None = None

    def attach(node: YNode) -> None:
        nonlocal root
        if not stack:
            root = node
            return
        parent = stack[-1]
        if parent.kind == "seq":
            parent.items.append(node)
        elif pending_key[-1] is None:
            pending_key[-1] = node
        else:
            key = pending_key[-1]
            assert key is not None
            parent.pairs.append((key, node))
            pending_key[-1] = None

    for event in events:
        if isinstance(event, yaml.DocumentEndEvent):
            break
        if isinstance(event, yaml.ScalarEvent):
            node = _scalar(event)
            if event.anchor:
                anchors[event.anchor] = node
            attach(node)
        elif isinstance(event, yaml.AliasEvent):
            line, col = _position(event)
            anchored = anchors.get(event.anchor or "")
            if anchored is None:
                raise YamlSyntaxError(f"yaml: unknown anchor '{event.anchor}' referenced")
            kind = anchored.kind
            node = YNode(
                kind, anchored.tag, line, col, text=anchored.text, value=anchored.value, alias=anchored
            )
            attach(node)
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            line, col = _position(event)
            is_map = isinstance(event, yaml.MappingStartEvent)
            node = YNode("map" if is_map else "seq", MAP if is_map else SEQ, line, col)
            if event.anchor:
                anchors[event.anchor] = node
            attach(node)
            stack.append(node)
            pending_key.append(None)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            stack.pop()
            pending_key.pop()
    return root


def _syntax_message(exc: yaml.MarkedYAMLError) -> str:
    """go-yaml's wording: the line comes from the context mark (else the problem mark), as its parser does."""
    scanner = isinstance(exc, yaml.scanner.ScannerError)
    line = 0
    for mark in (exc.context_mark, exc.problem_mark):
        if mark is not None and mark.line != 0:
            line = mark.line + (1 if scanner else 0)
            break
    where = f"line {line}: " if line else ""
    return f"yaml: {where}{exc.problem or 'unknown problem parsing YAML content'}"


def load(text: str) -> YNode | None:
    """The document's root node (None for an empty document); raises YamlSyntaxError for broken YAML."""
    try:
        # go-yaml's Unmarshal reads the first document only (later ones are never parsed)
        root = _compose(yaml.parse(text, Loader=_LOADER))
    except yaml.MarkedYAMLError as exc:
        raise YamlSyntaxError(_syntax_message(exc)) from exc
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"yaml: {exc}") from exc
    return root
