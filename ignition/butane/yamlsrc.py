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

NULL, BOOL, INT, FLOAT, STR, MAP, SEQ = "!!null", "!!bool", "!!int", "!!float", "!!str", "!!map", "!!seq"

_LOADER: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
_STR_TAG = "tag:yaml.org,2002:str"
_FLOAT_RE = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_NULLS = {"", "~", "null", "Null", "NULL"}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
_INF = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}
_NEG_INF = {"-.inf", "-.Inf", "-.INF"}
_NAN = {".nan", ".NaN", ".NAN"}


class YamlSyntaxError(Exception):
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
    """Go's strconv.ParseInt(text, 0, 64) (and ParseUint as go-yaml falls back to): prefixes 0x, 0o, 0b, 0."""
    s = text
    sign = 1
    if s[:1] in "+-" and s:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if not s:
        return None
    base = 10
    body = s
    low = s.lower()
    if low.startswith("0x"):
        base, body = 16, s[2:]
    elif low.startswith("0o"):
        base, body = 8, s[2:]
    elif low.startswith("0b"):
        base, body = 2, s[2:]
    elif len(s) > 1 and s[0] == "0":
        base, body = 8, s[1:]
    if not body or not all(c in "0123456789abcdefABCDEF"[: base if base <= 10 else 22] for c in body):
        return None
    try:
        value = sign * int(body, base)
    except ValueError:
        return None
    if value < -(2**63) or value > 2**64 - 1 or (sign < 0 and value < -(2**63)):
        return None
    return value


def resolve_plain(text: str) -> tuple[str, Any]:
    """The tag and value go-yaml v3 gives a plain (unquoted) scalar."""
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
    if text[:1] in "+-.0123456789":
        plain = text.replace("_", "")
        number = go_parse_int(plain)
        if number is not None:
            return INT, number
        if _FLOAT_RE.match(plain):
            return FLOAT, float(plain)
    return STR, text


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
