"""(Reference copy, see __init__.py.) Duplicate detection (Ignition `config/validate.ValidateDups`), driven by the schema's list keys.

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


def _relevant(node: Node) -> frozenset[str]:
    """Fields of an object node under which some deduplicated list can occur (pruning for big configs)."""
    cached = _RELEVANT.get(id(node))
    if cached is None:
        keys = set()
        for n, f in node.fields.items():
            child = f.node
            if child.kind == "list":
                item = child.item
                if child.key is not None or (item is not None and item.kind == "object" and _relevant(item)):
                    keys.add(n)
            elif child.kind == "object" and _relevant(child):
                keys.add(n)
        cached = _RELEVANT[id(node)] = frozenset(keys)
    return cached


def _plan(node: Node) -> tuple[list[tuple[str, Node]], list[tuple[str, Node]]]:
    """(deduplicated list fields in Go order, relevant object/list-of-object fields) of an object node."""
    cached = _PLANS.get(id(node))
    if cached is None:
        lists = [(n, f.node) for n, f in sorted(node.fields.items()) if f.node.kind == "list" and f.node.key is not None]
        deeper = []
        for n, f in sorted(node.fields.items()):
            child = f.node
            if child.kind == "object" and _relevant(child):
                deeper.append((n, child))
            elif child.kind == "list" and child.item is not None and child.item.kind == "object" and _relevant(child.item):
                deeper.append((n, child))
        cached = _PLANS[id(node)] = (lists, deeper)
    return cached


_PLANS: dict[int, tuple[list[tuple[str, Node]], list[tuple[str, Node]]]] = {}
_RELEVANT: dict[int, frozenset[str]] = {}


def check_dups(obj: dict[str, Any], node: Node, path: Path, ctx: Ctx, plain: frozenset[int] | set[int] = frozenset()) -> None:
    """Report every duplicate in `obj` and below it.

    Items whose id() is in `plain` (ignition/rules/plain.py) hold no deduplicated list, so they are not
    walked into; their own keys are still counted."""
    lists, deeper = _plan(node)
    spaces: dict[str, set[str]] = {}
    for name, lnode in lists:
        items = obj.get(name)
        if not items:
            continue
        seen = spaces.setdefault(lnode.keyspace or name, set())
        key = lnode.key or ""
        if key == KEY_VALUE:
            for i, item in enumerate(items):
                if item in seen:
                    ctx.error(path + (name, i), DUPLICATE)
                seen.add(item)
        elif key != KEY_PARTITION:
            # a normalized document: items are dicts, key fields strings; the loop runs only on a repeat
            keys = [item.get(key, "") for item in items]
            if len(set(keys)) == len(keys) and seen.isdisjoint(keys):
                seen.update(keys)
                continue
            for i, k in enumerate(keys):
                if k in seen:
                    ctx.error(path + (name, i), DUPLICATE)
                seen.add(k)
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
            if not _relevant(child).isdisjoint(value):
                check_dups(value, child, path + (name,), ctx, plain)
        else:
            item_node = child.item
            assert item_node is not None
            if plain and plain.issuperset(map(id, value)):
                continue  # every item plain: nothing inside them to deduplicate
            relevant = _relevant(item_node)
            for i, item in enumerate(value):
                if plain and id(item) in plain:
                    continue
                if not relevant.isdisjoint(item):
                    check_dups(item, item_node, path + (name, i), ctx, plain)

