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

    `leaves`: (id(object), field) -> the side and path of that scalar; `items`: id(list) -> per position the
    side and path of the entry and whether it was merged with a child's entry (else it was taken whole);
    `whole`: id(object) -> side and path of a 3.2 pointer struct taken whole. `alive` holds every tagged
    container so that no id is reused while the record lives.
    """

    def __init__(self, pointers: frozenset[schema_nodes.Node]) -> None:
        self.pointers = pointers
        self.leaves: dict[tuple[int, str], _Tag] = {}
        self.items: dict[int, list[tuple[str, Path, bool]]] = {}
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
            self.items[id(value)] = [(side, src + (i,), False) for i in range(len(value))]
            if node.item.kind not in SCALARS:
                for i, v in enumerate(value):
                    self.tag(v, node.item, side, src + (i,))

    def _positions(self, items: list[Any]) -> list[tuple[str, Path, bool]]:
        if id(items) not in self.items:
            self.alive.append(items)
        return self.items.setdefault(id(items), [])

    def appended(self, items: list[Any], entry: Any, item: schema_nodes.Node, src: Path) -> None:
        self._positions(items).append((CHILD, src, False))
        if item.kind not in SCALARS:
            self.tag(entry, item, CHILD, src)

    def joined(self, before: list[Any], joined: list[Any], added: list[Any], item: schema_nodes.Node,
               src: Path) -> None:
        self.alive.append(joined)
        self.items[id(joined)] = [*self.items.get(id(before), []),
                                  *((CHILD, src + (j,), False) for j in range(len(added)))]
        if item.kind not in SCALARS:
            for j, entry in enumerate(added):
                self.tag(entry, item, CHILD, src + (j,))

    def replaced_values(self, items: list[Any], value: Any, src: Path) -> None:
        positions = self._positions(items)
        for i, e in enumerate(items):
            if e == value:
                positions[i] = (CHILD, src, False)

    def merged(self, items: list[Any], entry: Any) -> None:
        positions = self._positions(items)
        i = next(i for i, e in enumerate(items) if e is entry)
        positions[i] = (*positions[i][:2], True)

    def removed(self, items: list[Any], entry: Any) -> None:
        del self._positions(items)[next(i for i, e in enumerate(items) if e is entry)]

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
                assert sub.item is not None
                for i, (entry, (side, src, merged)) in enumerate(zip(value, self.items[id(value)], strict=True)):
                    if merged:
                        self.walk(entry, sub.item, rp + (name, i), out)
                    else:
                        _transcribe(side, src, rp + (name, i), sub.item, entry, False, out)


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
