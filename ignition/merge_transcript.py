"""The transcript of a merge (Go's `transcribe` in Ignition `config/merge/merge.go`): for every leaf of the result,
which side (parent or child) and which path of that side's document supplied it. Butane maps its output paths
back to the YAML with it (butane/context.py).

merge.py's engine merges in place; with record=True it tells a `Record` what it copied, set, merged or removed,
and `Record.walk` reads the transcript off the result in Go's order (an object's fields by name, lists item by
item; an item taken whole from one side lists its leaves, then itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ignition import schema_nodes
from ignition.report import Path, path_str

__all__ = ["CHILD", "PARENT", "SCALARS", "ZERO", "Origin", "Record", "is_map"]

PARENT = "parent"
CHILD = "child"
SCALARS = frozenset(("string", "integer", "boolean"))
ZERO = {"string": "", "integer": 0, "boolean": False}
_Tag = tuple[str, Path]  # (side, path in that side's document)


def is_map(value: Any) -> bool:
    """isinstance(value, Mapping), fast for the dicts JSON gives."""
    return type(value) is dict or isinstance(value, Mapping)


@dataclass(frozen=True)
class Origin:
    """One transcript line: the result path `result` was taken from `side`'s document at `source`."""

    side: str
    source: Path
    result: Path

    def __str__(self) -> str:
        return f"{self.side}:{path_str(self.source)} -> {path_str(self.result)}"


class Record:
    """Where each part of the result came from, kept while merging (record=True), for the transcript.

    `leaves`: (id(object), field) -> the side and path of that scalar; `entries`: id(object) -> side, path and
    whether a list entry was merged with a child's entry (else it was taken whole); `values`: id(list) -> per
    position the side and path of a list of strings; `whole`: id(object) -> side and path of a 3.2 pointer
    struct taken whole. `alive` holds every tagged container so that no id is reused while the record lives.
    """

    def __init__(self, pointers: frozenset[schema_nodes.Node]) -> None:
        self.pointers = pointers
        self.leaves: dict[tuple[int, str], _Tag] = {}
        self.entries: dict[int, tuple[str, Path, bool]] = {}
        self.values: dict[int, list[_Tag]] = {}
        self.whole: dict[int, _Tag] = {}
        self.alive: list[Any] = []

    def tag(self, value: Any, node: schema_nodes.Node, side: str, src: Path) -> None:
        """Mark every part of `value` (a copy of `side`'s document at `src`) as coming from there."""
        if node.kind == "object" and is_map(value):
            self.alive.append(value)
            if node in self.pointers:
                self.whole[id(value)] = (side, src)
            for k, v in value.items():
                sub = node.fields[k].node
                if sub.kind in SCALARS:
                    self.leaves[(id(value), k)] = (side, src + (k,))
                else:
                    self.tag(v, sub, side, src + (k,))
        elif node.kind == "list" and isinstance(value, list):
            assert node.item is not None
            self.alive.append(value)
            if node.item.kind in SCALARS:
                self.values[id(value)] = [(side, src + (i,)) for i in range(len(value))]
            else:
                for i, v in enumerate(value):
                    self.entries[id(v)] = (side, src + (i,), False)
                    self.tag(v, node.item, side, src + (i,))

    def _positions(self, items: list[Any]) -> list[_Tag]:
        if id(items) not in self.values:
            self.alive.append(items)
        return self.values.setdefault(id(items), [])

    def appended(self, items: list[Any], entry: Any, item: schema_nodes.Node, src: Path) -> None:
        if item.kind in SCALARS:
            self._positions(items).append((CHILD, src))
        else:
            self.entries[id(entry)] = (CHILD, src, False)
            self.tag(entry, item, CHILD, src)

    def joined(self, before: list[Any], joined: list[Any], added: list[Any], item: schema_nodes.Node,
               src: Path) -> None:
        self.alive.append(joined)
        if item.kind in SCALARS:
            added_tags = [(CHILD, src + (j,)) for j in range(len(added))]
            self.values[id(joined)] = [*self.values.get(id(before), []), *added_tags]
        else:
            for j, entry in enumerate(added):
                self.entries[id(entry)] = (CHILD, src + (j,), False)
                self.tag(entry, item, CHILD, src + (j,))

    def replaced_values(self, items: list[Any], value: Any, src: Path) -> None:
        positions = self._positions(items)
        for i, e in enumerate(items):
            if e == value:
                positions[i] = (CHILD, src)

    def merged(self, entry: Any) -> None:
        side, src, _ = self.entries[id(entry)]
        self.entries[id(entry)] = (side, src, True)

    def filtered(self, items: list[Any], keep: list[bool]) -> None:
        positions = self._positions(items)
        positions[:] = [p for p, k in zip(positions, keep, strict=True) if k]

    def walk(self, obj: dict[str, Any], node: schema_nodes.Node, rp: Path, out: list[Origin]) -> None:
        """Go's transcript of one merged object: its fields in name order, lists item by item."""
        for name in sorted(node.fields.keys() & obj.keys()):
            f = node.fields[name]
            sub, value = f.node, obj[name]
            if sub.kind in SCALARS:
                tag = self.leaves.get((id(obj), name))
                if tag is not None and (f.pointer or value != ZERO[sub.kind]):
                    out.append(Origin(tag[0], tag[1], rp + (name,)))
            elif sub.kind == "object":
                whole = self.whole.get(id(value))
                if whole is not None:
                    _transcribe(whole[0], whole[1], rp + (name,), sub, value, True, out)
                else:
                    self.walk(value, sub, rp + (name,), out)
            else:
                item = sub.item
                assert item is not None
                if item.kind in SCALARS:
                    for i, (entry, (side, src)) in enumerate(zip(value, self.values[id(value)], strict=True)):
                        _transcribe(side, src, rp + (name, i), item, entry, False, out)
                    continue
                for i, entry in enumerate(value):
                    side, src, merged = self.entries[id(entry)]
                    if merged:
                        self.walk(entry, item, rp + (name, i), out)
                    else:
                        _transcribe(side, src, rp + (name, i), item, entry, False, out)


def _transcribe(side: str, source: Path, result: Path, node: schema_nodes.Node, value: Any, pointer: bool,
                out: list[Origin]) -> bool:
    """Record every populated leaf of a subtree taken whole from one side (Go's transcribe)."""
    if node.kind in SCALARS:
        if not pointer and value == ZERO[node.kind]:
            return False
        out.append(Origin(side, source, result))
        return True
    done = False
    if node.kind == "list":
        assert node.item is not None
        for i, item in enumerate(value):
            done = _transcribe(side, source + (i,), result + (i,), node.item, item, False, out) or done
        return done
    for name, sub in value.items():
        f = node.fields[name]
        done = _transcribe(side, source + (name,), result + (name,), f.node, sub, f.pointer, out) or done
    if done:
        out.append(Origin(side, source, result))
    return done
