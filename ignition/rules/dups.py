"""Duplicate detection (Ignition `config/validate.ValidateDups`), driven by the schema's list keys.

Every list field of every object is checked unless its key is None (IgnoreDuplicates). Lists sharing a key
space (files/directories/links; shouldExist/shouldNotExist) share one set, filled in Go's struct-field order
(alphabetical), so the entry reported is the one met later in that order.
"""

from __future__ import annotations

from itertools import chain, repeat
from typing import Any

from ignition.report import Path
from ignition.rules.context import Ctx
from ignition.schema_nodes import KEY_PARTITION, KEY_VALUE, Node

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
    cached = _RELEVANT.get(node)
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
        cached = _RELEVANT[node] = frozenset(keys)
    return cached


# a deeper field: (its node, the fields under which a deduplicated list can occur: of the object itself, or
# of each item for a list of objects, and then the item node)
_Deeper = tuple[Node, frozenset[str], "Node | None"]


def _plan(node: Node) -> tuple[dict[str, Node], dict[str, _Deeper], frozenset[str]]:
    """(deduplicated list fields, relevant object/list-of-object fields, the names of both) of an object node.

    The walk visits the fields an object has, in Go order (alphabetical): lists first, then the deeper ones."""
    cached = _PLANS.get(node)
    if cached is None:
        lists = {n: f.node for n, f in node.fields.items() if f.node.kind == "list" and f.node.key is not None}
        deeper: dict[str, _Deeper] = {}
        for n, f in node.fields.items():
            child = f.node
            if child.kind == "object" and _relevant(child):
                deeper[n] = (child, _relevant(child), None)
            elif child.kind == "list" and child.item is not None and child.item.kind == "object" and _relevant(child.item):
                deeper[n] = (child, _relevant(child.item), child.item)
        cached = _PLANS[node] = (lists, deeper, frozenset(lists) | frozenset(deeper))
    return cached


# per schema node (nodes compare by identity; there are a few hundred per spec version, built once)
_PLANS: dict[Node, tuple[dict[str, Node], dict[str, _Deeper], frozenset[str]]] = {}
_RELEVANT: dict[Node, frozenset[str]] = {}


def check_dups(obj: dict[str, Any], node: Node, path: Path, ctx: Ctx) -> None:
    """Report every duplicate in `obj` and below it."""
    lists, deeper, names = _plan(node)
    present = names.intersection(obj)
    if not present:
        return
    order = sorted(present) if len(present) > 1 else present
    spaces: dict[str, set[str]] = {}
    for name in order:
        lnode = lists.get(name)
        if lnode is None:
            continue
        items = obj[name]
        if not items:
            continue
        space = lnode.keyspace or name
        seen = spaces.get(space)
        key = lnode.key or ""
        if seen is None:
            if key != KEY_VALUE and key != KEY_PARTITION:
                # the first list of its key space (nearly always the only one): one set of its keys
                keys = list(map(dict.get, items, repeat(key), repeat("")))
                seen = spaces[space] = set(keys)
                if len(seen) == len(keys):
                    continue
                seen.clear()
                for i, k in enumerate(keys):
                    if k in seen:
                        ctx.error(path + (name, i), DUPLICATE)
                    seen.add(k)
                continue
            seen = spaces[space] = set()
        if key == KEY_VALUE:
            for i, item in enumerate(items):
                if item in seen:
                    ctx.error(path + (name, i), DUPLICATE)
                seen.add(item)
        elif key != KEY_PARTITION:
            # a normalized document: items are dicts, key fields strings; the loop runs only on a repeat
            keys = list(map(dict.get, items, repeat(key), repeat("")))
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
    for name in order:
        step = deeper.get(name)
        if step is None:
            continue
        value = obj[name]
        if not value:
            continue
        child, relevant, item_node = step
        if item_node is None:
            if not relevant.isdisjoint(value):
                check_dups(value, child, path + (name,), ctx)
        elif _may_repeat(value, item_node):
            for i, item in enumerate(value):
                if not relevant.isdisjoint(item):
                    check_dups(item, item_node, path + (name, i), ctx)


def _may_repeat(items: list[dict[str, Any]], node: Node) -> bool:
    """False when no object of `items` (all of `node`) holds a deduplicated list at any depth, so that
    check_dups would find nothing in any of them: decided a level at a time for all the objects together
    (the keys of them all in one set), not by a call per object (a list of 10,000 files whose contents hold
    no headers costs a few set operations)."""
    lists, deeper, names = _plan(node)
    for name in names.intersection(set().union(*items)):
        if name in lists:
            return True
        child, _relevant, item_node = deeper[name]
        values = list(filter(None, map(dict.get, items, repeat(name))))
        if not values:
            continue
        if _may_repeat(values if item_node is None else list(chain.from_iterable(values)), item_node or child):
            return True
    return False
