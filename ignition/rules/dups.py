"""Duplicate detection (Ignition `config/validate.ValidateDups`), driven by the schema's list keys.

Every list field of every object is checked unless its key is None (IgnoreDuplicates). Lists sharing a key
space (files/directories/links; shouldExist/shouldNotExist) share one set, filled in Go's struct-field order
(alphabetical), so the entry reported is the one met later in that order.
"""

from __future__ import annotations

from typing import Any

from ignition.report import Path
from ignition.rules.context import Ctx
from ignition.schema import KEY_PARTITION, KEY_VALUE, Node

DUPLICATE = "duplicate entry defined"


def _key(item: Any, key: str) -> str:
    if key == KEY_VALUE:
        return str(item)
    if key == KEY_PARTITION:
        number = item.get("number", 0)
        if number != 0:
            return f"number:{number}"
        label = item.get("label")
        return f"label:{label}" if label is not None else ""
    value = item.get(key)
    return "" if value is None else str(value)


def _plan(node: Node) -> tuple[list[tuple[str, Node]], list[tuple[str, Node]]]:
    """(list fields in Go order, object/list fields to descend into) of an object node, cached on the node."""
    cached = _PLANS.get(id(node))
    if cached is None:
        lists = [(n, f.node) for n, f in sorted(node.fields.items()) if f.node.kind == "list"]
        deeper = [
            (n, f.node)
            for n, f in sorted(node.fields.items())
            if f.node.kind == "object" or (f.node.kind == "list" and f.node.item is not None and f.node.item.kind == "object")
        ]
        cached = _PLANS[id(node)] = (lists, deeper)
    return cached


_PLANS: dict[int, tuple[list[tuple[str, Node]], list[tuple[str, Node]]]] = {}


def check_dups(obj: dict[str, Any], node: Node, path: Path, ctx: Ctx) -> None:
    """Report every duplicate in `obj` and below it."""
    lists, deeper = _plan(node)
    spaces: dict[str, set[str]] = {}
    for name, lnode in lists:
        items = obj.get(name)
        if not items or lnode.key is None:
            continue
        seen = spaces.setdefault(lnode.keyspace or name, set())
        key = lnode.key
        if key == KEY_VALUE:
            for i, item in enumerate(items):
                if item in seen:
                    ctx.error(path + (name, i), DUPLICATE)
                seen.add(item)
        else:
            for i, item in enumerate(items):
                k = _key(item, key)
                if k in seen:
                    ctx.error(path + (name, i), DUPLICATE)
                seen.add(k)
    for name, child in deeper:
        value = obj.get(name)
        if not value:
            continue
        if child.kind == "object":
            check_dups(value, child, path + (name,), ctx)
        else:
            item_node = child.item
            assert item_node is not None
            lists_below, deeper_below = _plan(item_node)
            if not lists_below and not deeper_below:
                continue
            for i, item in enumerate(value):
                check_dups(item, item_node, path + (name, i), ctx)
