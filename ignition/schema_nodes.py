"""The shapes the Ignition schema (ignition/schema.py) is built from: a `Node` per JSON value, a `Field` per
object member, and how lists are keyed.

``Node``
    ``kind``: ``"object" | "list" | "string" | "integer" | "boolean"``;
    ``fields``: name -> `Field` (objects); ``item``: the item `Node` (lists);
    ``key``: how a list is deduplicated and merged (see below); ``keyspace``: lists sharing one key space;
    ``go``: the Go type name, used in Go-style type errors; ``match(json_key)``: the field a JSON key sets,
    with Go's case-insensitive matching (exact name first).
``Field``
    ``name``, ``node``, ``pointer`` (scalars: a Go pointer, so null/absent means unset rather than the zero
    value; object fields are always True here -- Go's null on a struct value is a no-op, which decode.py applies).

List keys (``Node.key`` on a list node; Ignition's `Key()` and `IgnoreDuplicates()`):
    ``"<field>"``   items are objects keyed by that field (`path`, `device`, `name`, `source`, `url`);
    ``"$value"``    items are strings keyed by their own value;
    ``"$partition"``  `number:N` when number != 0, else `label:<label>`, else `""`;
    ``None``        not deduplicated, concatenated on merge (`append`, `options`, `mountOptions`).
Shared key spaces (``Node.keyspace``): ``"storage.nodes"`` (files, directories, links by path) and
``"kernelArguments"`` (shouldExist, shouldNotExist).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

KEY_VALUE = "$value"
KEY_PARTITION = "$partition"
KEYSPACE_NODES = "storage.nodes"
KEYSPACE_KARGS = "kernelArguments"


def _fold(name: str) -> str:
    """Go's simple case folding for JSON key matching (`ſ` folds to `s`, the Kelvin sign to `k`)."""
    return name.lower().replace("\u017f", "s").replace("\u212a", "k")


@dataclass(frozen=True, eq=False)
class Field:
    """One named member of an object node."""

    name: str
    node: Node
    pointer: bool = True


@dataclass(frozen=True, eq=False)
class Node:
    """A JSON value's expected shape in one spec version."""

    kind: str
    go: str
    fields: Mapping[str, Field] = field(default_factory=lambda: MappingProxyType({}))
    item: Node | None = None
    key: str | None = None
    keyspace: str | None = None
    _folded: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def match(self, json_key: str) -> str | None:
        """Field name a JSON object key sets (Go's `encoding/json`: exact match, else case-insensitive)."""
        if json_key in self.fields:
            return json_key
        return self._folded.get(_fold(json_key))

    @property
    def is_scalar(self) -> bool:
        """True for string, integer and boolean nodes."""
        return self.kind in ("string", "integer", "boolean")


STRING = Node("string", "string")
INTEGER = Node("integer", "int")
BOOLEAN = Node("boolean", "bool")


def obj(go: str, *members: Field | None) -> Node:
    present = {m.name: m for m in members if m is not None}
    return Node(
        "object",
        go,
        fields=MappingProxyType(present),
        _folded=MappingProxyType({_fold(n): n for n in present}),
    )


def list_of(item: Node, key: str | None, go: str, keyspace: str | None = None) -> Node:
    return Node("list", go, item=item, key=key, keyspace=keyspace)


def member(name: str, node: Node, pointer: bool = True) -> Field:
    return Field(name, node, pointer)


def strings(go: str, dedup: bool = True) -> Node:
    """A list of a named Go string type: Go's type errors name the item type (`of type types.Device`)."""
    return list_of(Node("string", f"types.{go}"), KEY_VALUE if dedup else None, f"[]types.{go}")


def walk(start: Node, prefix: str = "") -> Iterator[tuple[str, Node]]:
    """Every (field path, node) below `start`, depth first, in field-name order."""
    if start.kind == "object":
        for name in sorted(start.fields):
            child = start.fields[name].node
            here = f"{prefix}.{name}" if prefix else name
            yield here, child
            yield from walk(child, here)
    elif start.kind == "list" and start.item is not None:
        yield from walk(start.item, prefix + "[]")
