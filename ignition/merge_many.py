"""Merging many Ignition configs into one, left to right, in time linear in their size.

`merge.merge(parent, child)` builds a new result each time: folding hundreds of configs with it (a pool of
MachineConfigs) copies the growing result again for every child, which is quadratic. `MergedConfig` keeps
one mutable result and an index per keyed list, so each child costs only its own size; the outcome is
`merge.merge` applied left to right (tests/ignition/test_merge_many.py checks exactly that).

Rules (Ignition's `config/merge`, walked over `ignition.schema` of the target version; merge.py states
them in full):
- objects merge field by field; a child field that is absent or null keeps the parent's value; any
  other child value of a primitive field replaces the parent's;
- lists whose key is None (`append`, `options`, `mountOptions`) are concatenated, parent first;
- other lists are keyed (`path`, `name`, `device`, `source`, `url`, partitions by `number:N` or
  `label:L`, string lists by the string itself): a child entry with a parent's key is merged into it in
  the parent's position; new child entries are appended in child order;
- lists sharing a key space (files/directories/links by path; kernelArguments shouldExist /
  shouldNotExist): a child entry whose key is in a *sibling* list drops the parent's entry there, and
  is appended to its own list;
- an HTTP header in the child without a value removes the parent's header of that name (a new one is added);
- keys the schema does not know are dropped (as Go's JSON decoding drops them); empty objects and lists
  are left out of the result (Go's `omitempty`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ignition import schema, schema_nodes

_Key = Any
_SCALARS = frozenset(("string", "integer", "boolean"))


def _is_map(value: Any) -> bool:
    """isinstance(value, Mapping), fast for the dicts JSON gives."""
    return type(value) is dict or isinstance(value, Mapping)


def copy_known(value: Any, node: schema_nodes.Node) -> Any:
    """A deep copy of `value` keeping only what the schema knows (nulls, unknown keys and empty objects or
    lists dropped)."""
    kind = node.kind
    if kind == "object":
        if not _is_map(value):
            return value
        fields = node.fields
        if value.keys() <= fields.keys() and None not in value.values():
            # every key the schema's own name, no null (nearly every object): copied whole, then its objects
            # and lists copied in turn (dropped when that leaves them empty)
            out = dict(value)
            for key in (_CONTAINERS.get(node) or _containers(node)).intersection(out):
                copied = copy_known(out[key], fields[key].node)
                if copied or not isinstance(copied, dict | list):
                    out[key] = copied
                else:
                    del out[key]
            return out
        out = {}
        for key, item in value.items():
            if item is None:
                continue
            f = fields.get(key)
            if f is None:
                name = node.match(key)
                if name is None:
                    continue
                f = fields[name]
                key = name
            sub = f.node
            copied = item if sub.kind in _SCALARS else copy_known(item, sub)
            if copied or not isinstance(copied, dict | list):
                out[key] = copied
        return out
    if kind == "list":
        if not isinstance(value, list):
            return value
        item_node = node.item
        assert item_node is not None
        if item_node.kind in _SCALARS:
            return list(value)
        return [copy_known(v, item_node) for v in value]
    return value


def _containers(node: schema_nodes.Node) -> frozenset[str]:
    """The names of an object node's object and list fields (per node: the schema's nodes live as long as
    the module)."""
    found = _CONTAINERS.get(node)
    if found is None:
        found = _CONTAINERS[node] = frozenset(n for n, f in node.fields.items() if f.node.kind not in _SCALARS)
    return found


_CONTAINERS: dict[schema_nodes.Node, frozenset[str]] = {}


def _siblings(node: schema_nodes.Node) -> dict[str, tuple[str, ...]]:
    """For each list field of an object node that shares a key space: the other list fields of that key
    space (per node, as `_containers`)."""
    found = _SIBLINGS.get(node)
    if found is None:
        lists = {n: f.node.keyspace for n, f in node.fields.items() if f.node.kind == "list" and f.node.keyspace}
        found = _SIBLINGS[node] = {n: tuple(k for k, space in lists.items() if k != n and space == keyspace)
                                   for n, keyspace in lists.items()}
    return found


_SIBLINGS: dict[schema_nodes.Node, dict[str, tuple[str, ...]]] = {}


def entry_key(entry: Any, node: schema_nodes.Node) -> _Key:
    """The merge key of one entry of the keyed list `node`."""
    key = node.key
    if key == schema_nodes.KEY_VALUE:
        return entry
    if key == schema_nodes.KEY_PARTITION:
        number = entry.get("number") or 0
        if number:
            return f"number:{number}"
        label = entry.get("label")
        return f"label:{label}" if label is not None else ""
    return entry.get(key) if _is_map(entry) else entry


def merge_many(configs: Iterable[Mapping[str, Any]], version: str) -> dict[str, Any]:
    """`merge.merge` applied left to right over `configs` (all of spec `version`, at least one)."""
    merged: MergedConfig | None = None
    for config in configs:
        if merged is None:
            merged = MergedConfig(config, version)
        else:
            merged.merge(config)
    if merged is None:
        raise ValueError("merge_many: no configs")
    return prune_empty(merged.result) if merged.may_have_empties else merged.result


class MergedConfig:
    """An Ignition config being merged into, child after child (see the module docstring for the rules)."""

    def __init__(self, base: Mapping[str, Any], version: str) -> None:
        self.version = version
        self.root = schema.root(version)
        self.result: dict[str, Any] = copy_known(base, self.root)
        # id(list) -> (the list, {key: entry}) for keyed lists of objects in the result; holding the list
        # keeps its id from being reused by another list after it is dropped.
        self._index: dict[int, tuple[list[Any], dict[_Key, Any]]] = {}
        # True once an entry was removed (key-space drop, header removal): the result may hold an empty
        # list or object and needs `prune_empty`; copies never hold empties.
        self.may_have_empties = False

    def merge(self, child: Mapping[str, Any]) -> None:
        """Merge one child config (already in this config's spec version) into the result."""
        self._merge_object(self.result, child, self.root)

    def keys(self, *path: str) -> Collection[_Key]:
        """The keys of the keyed list of objects at `path` in the result (`keys("storage", "files")`: the file
        paths), which a child's entries are matched against; empty when the result has no such list."""
        node = self.root
        value_: Any = self.result
        for name in path:
            node = node.fields[name].node
            value_ = value_.get(name) if _is_map(value_) else None
        if not isinstance(value_, list) or not value_ or node.item is None or node.item.kind != "object":
            return ()
        return self._index_of(value_, node).keys()

    def _index_of(self, items: list[Any], node: schema_nodes.Node) -> dict[_Key, Any]:
        found = self._index.get(id(items))
        if found is None:
            found = (items, {entry_key(e, node): e for e in items})
            self._index[id(items)] = found
        return found[1]

    def _merge_object(self, parent: dict[str, Any], child: Mapping[str, Any], node: schema_nodes.Node) -> None:
        fields = node.fields
        keyspaces: dict[str, list[tuple[str, schema_nodes.Node, list[Any]]]] | None = None
        for key, value in child.items():
            if value is None:
                continue
            f = fields.get(key)
            if f is None:
                name = node.match(key)
                if name is None:
                    continue
                f, key = fields[name], name
            fnode = f.node
            if fnode.kind == "object":
                if not _is_map(value):
                    parent[key] = value
                    continue
                current = parent.get(key)
                if isinstance(current, dict):
                    self._merge_object(current, value, fnode)
                elif value:
                    copied = copy_known(value, fnode)
                    if copied:
                        parent[key] = copied
            elif fnode.kind == "list":
                if not isinstance(value, list):
                    parent[key] = value
                    continue
                if fnode.keyspace is not None:  # merged after the object's other fields, as Go does
                    if keyspaces is None:
                        keyspaces = {}
                    keyspaces.setdefault(fnode.keyspace, []).append((key, fnode, value))
                    continue
                self._merge_list(parent, key, value, fnode, ())
            else:
                parent[key] = value
        if keyspaces:
            for members in keyspaces.values():
                for key, fnode, value in members:
                    self._merge_list(parent, key, value, fnode, _siblings(node)[key])

    def _merge_list(self, parent: dict[str, Any], key: str, child: list[Any], node: schema_nodes.Node,
                    siblings: tuple[str, ...]) -> None:
        item = node.item
        assert item is not None
        current = parent.get(key)
        if not isinstance(current, list):
            current = []
        if node.key is None:
            copied = child if item.kind != "object" else [copy_known(c, item) for c in child]
            if current or copied:
                parent[key] = current + list(copied)
            return
        if not child:
            return
        scalar = item.kind != "object"
        if scalar:
            seen = set(current)
        else:
            index = self._index_of(current, node)
        sibling_lists = [parent[s] for s in siblings if isinstance(parent.get(s), list) and parent[s]]
        is_header = item.go == "HTTPHeader"
        named = node.key not in (schema_nodes.KEY_VALUE, schema_nodes.KEY_PARTITION) and node.key
        for entry in child:
            k = (entry.get(named) if type(entry) is dict else entry_key(entry, node)) if named \
                else entry_key(entry, node)
            for slist in sibling_lists:
                self._drop(slist, k, node)
            if scalar:
                if k not in seen:
                    seen.add(k)
                    current.append(entry)
                continue
            existing = index.get(k)
            if is_header and existing is not None and _is_map(entry) and entry.get("value") is None:
                current.remove(existing)
                del index[k]
                self.may_have_empties = True
                continue
            if existing is not None:
                if _is_map(entry):
                    self._merge_object(existing, entry, item)
                continue
            new = copy_known(entry, item)
            current.append(new)
            index[k] = new
        parent[key] = current
        if not scalar:
            self._index[id(current)] = (current, index)

    def _drop(self, slist: list[Any], k: _Key, node: schema_nodes.Node) -> None:
        """Remove the entry keyed `k` from a sibling list of the same key space (if it has one)."""
        item = node.item
        assert item is not None
        if item.kind != "object":
            if k in slist:
                slist[:] = [e for e in slist if e != k]
                self.may_have_empties = True
            return
        sindex = self._index_of(slist, node)
        victim = sindex.pop(k, None)
        if victim is not None:
            self.may_have_empties = True
            for i, e in enumerate(slist):
                if e is victim:
                    del slist[i]
                    break


def prune_empty(value: Any) -> Any:
    """Drop empty objects and lists, recursively (Go's omitempty on the merged struct)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = prune_empty(v)
            if v is None or (isinstance(v, dict | list) and not v):
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [prune_empty(v) for v in value]
    return value
