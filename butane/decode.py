"""Positioned YAML nodes + Butane schema -> plain Python values, Go-YAML type errors and unused-key warnings.

Second step of the pipeline. Values are plain dicts/lists/scalars keyed by the YAML (snake_case) names; a
field that is absent or YAML `null` is simply missing from its dict (Go's nil pointer / zero value).
Type mismatches are collected with go-yaml v3's wording (`line 5: cannot unmarshal !!str `abc` into int`),
unknown keys become `unused key <k>` warnings exactly as the Ignition library vendored by Butane 0.29 words them
(Ignition 2.14 and Butane releases before it capitalised `Unused key`; Butane's own tests for every spec expect
the lower-case text).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from butane.report import KeyStep, Problems, YPath
from butane.schema import BNode
from butane.yamlsrc import BOOL, FLOAT, INT, NULL, YNode
from ignition.report import path_str

_YES = {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON"}
_NO = {"n", "N", "no", "No", "NO", "off", "Off", "OFF"}


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass
class Positions:
    """Where every YAML node (and mapping key) of the source starts: the context tree Butane correlates with."""

    nodes: dict[YPath, tuple[int, int]] = field(default_factory=dict)

    def record(self, node: YNode | None, path: YPath = ()) -> None:
        """Record `node` and everything below it."""
        if node is None:
            return
        self.nodes[path] = (node.line, node.col)
        if node.alias is not None:  # vcontext sees an alias as a leaf
            return
        if node.kind == "map":
            for key, value in node.pairs:
                self.nodes[path + (KeyStep(key.text),)] = (key.line, key.col)
                self.record(value, path + (key.text,))
        elif node.kind == "seq":
            for i, item in enumerate(node.items):
                self.record(item, path + (i,))

    def locate(self, path: YPath) -> tuple[int, int] | None:
        """Position of the deepest recorded node on `path` (vcontext's getDeepestNode)."""
        p = tuple(path)
        while True:
            if p in self.nodes:
                return self.nodes[p]
            if not p:
                return None
            p = p[:-1]


def zero(node: BNode) -> Any:
    """Go's zero value of a node kind, as Butane sees a missing non-pointer field."""
    return {"object": {}, "list": [], "strmap": {}, "string": "", "integer": 0, "boolean": False}[node.kind]


def _short(node: YNode) -> str:
    if node.kind != "scalar":
        return ""
    text = node.text
    return f" `{text[:7]}...`" if len(text) > 10 else f" `{text}`"


class Decoder:
    """Decodes one document; `type_errors` hold go-yaml's lines, `problems` the unused-key warnings."""

    def __init__(self) -> None:
        self.type_errors: list[str] = []
        self.problems = Problems()

    def _terror(self, node: YNode, target: BNode) -> Any:
        self.type_errors.append(
            f"line {node.line}: cannot unmarshal {node.tag}{_short(node)} into {target.go}"
        )
        return MISSING

    def decode(self, node: YNode | None, target: BNode, path: YPath) -> Any:
        """The value of `node` read as `target` (MISSING when absent or null)."""
        if node is not None:
            node = node.target  # go-yaml decodes an alias as the anchored node
        if node is None or (node.kind == "scalar" and node.tag == NULL):
            return MISSING
        kind = target.kind
        if kind in ("object", "strmap"):
            if node.kind != "map":
                return self._terror(node, target)
            return self._mapping(node, target, path)
        if kind == "list":
            if node.kind != "seq":
                return self._terror(node, target)
            assert target.item is not None
            out = []
            for i, item in enumerate(node.items):
                value = self.decode(item, target.item, path + (i,))
                out.append(zero(target.item) if value is MISSING else value)
            return out
        if node.kind != "scalar":
            return self._terror(node, target)
        if kind == "string":
            return node.text
        if kind == "integer":
            if node.tag == INT and -(2**63) <= node.value < 2**63:
                return int(node.value)
            if node.tag == FLOAT and not math.isnan(node.value) and -(2**63) <= node.value < 2**63:
                return int(node.value)  # go-yaml truncates a float read into an int
            return self._terror(node, target)
        if kind == "boolean":
            if node.tag == BOOL:
                return bool(node.value)
            if isinstance(node.value, str) and node.value in _YES:
                return True
            if isinstance(node.value, str) and node.value in _NO:
                return False
            return self._terror(node, target)
        raise AssertionError(kind)

    def _mapping(self, node: YNode, target: BNode, path: YPath) -> dict[str, Any]:
        before = len(self.type_errors)
        for i, (key, _) in enumerate(node.pairs):
            for later, _ in node.pairs[i + 1 :]:
                if later.kind == key.kind and later.text == key.text:
                    self.type_errors.append(
                        f'line {later.line}: mapping key "{_go_escape(later.text)}" already defined at line {key.line}'
                    )
        out: dict[str, Any] = {}
        if len(self.type_errors) > before:  # go-yaml leaves a mapping with duplicate keys undecoded
            return out
        seen: set[str] = set()
        self._pairs(node, target, path, out, seen)
        return out

    def _pairs(self, node: YNode, target: BNode, path: YPath, out: dict[str, Any], seen: set[str]) -> None:
        """Decode a mapping's explicit keys, then its `<<` merges (explicit and earlier keys win)."""
        merges: list[YNode] = []
        for key, value in node.pairs:
            if key.is_merge_key():
                merges.append(value)
                continue
            if key.text in seen:
                continue
            seen.add(key.text)
            if target.kind == "strmap":
                assert target.item is not None
                decoded = self.decode(value, target.item, path + (key.text,))
                out[key.text] = "" if decoded is MISSING else decoded
                continue
            member = target.fields.get(key.text)
            if member is None:
                continue
            decoded = self.decode(value, member.node, path + (key.text,))
            if decoded is not MISSING:
                out[key.text] = decoded
        for merge in merges:
            sources = merge.target.items if merge.target.kind == "seq" else [merge]
            for source in sources:
                if source.target.kind != "map":
                    self.type_errors.append(
                        f"line {source.line}: map merge requires map or sequence of maps as the value"
                    )
                    continue
                self._pairs(source.target, target, path, out, seen)

    def check_unused(self, node: YNode | None, target: BNode, path: YPath = ()) -> None:
        """`unused key` warnings, a mapping's own keys before its children's, children in schema order."""
        if node is None:
            return
        if node.alias is not None and target.kind == "object":
            self.problems.warn(
                path,
                f"context tree does not match content tree at {path_str(path)}. Line and column reporting may be "
                "inconsistent. Unused keys may not be reported.",
            )
            return
        if node.alias is not None:
            return
        if target.kind == "list" and node.kind == "seq" and target.item is not None:
            for i, item in enumerate(node.items):
                self.check_unused(item, target.item, path + (i,))
            return
        if target.kind != "object" or node.kind != "map":
            return
        values: dict[str, YNode] = {}
        for key, value in node.pairs:
            if key.text not in target.fields:
                self.problems.warn(path + (KeyStep(key.text),), f"unused key {key.text}")
            else:
                values[key.text] = value
        for name, member in target.fields.items():
            if name in values:
                self.check_unused(values[name], member.node, path + (name,))


def _go_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
