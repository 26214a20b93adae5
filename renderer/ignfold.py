"""Folding many Ignition configs into one with Ignition's parent/child merge, in time linear in their size.

Used by `merge_mc.py`: a pool merges hundreds of MachineConfigs one after the other, and merging each
into a copy of the growing result (what a pairwise `merge(parent, child)` does) is quadratic. `Fold`
keeps one mutable result and an index per keyed list, so each child costs only its own size; the
outcome is the same as `ignition.merge.merge` applied left to right (tests check exactly that).

Rules (Ignition's `config/merge`, walked over `ignition.schema` of the target version):
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

Adoption: a caller that already holds its own normalized copy of a list entry (merge_mc.py copies the plain
files and directories that validation vouched for, ignition/rules/plain.py) passes its id() in `adopt`, and
the fold puts that object in the result instead of copying it again (or, when its key is taken, merges it
in field by field without walking the schema). `trusted()` then names the result entries that are still
such adopted objects, never merged into: they are exactly an input's plain entry. `keyed_result_list`,
`adopted` and `merged_into` let a caller merge a pool's later plain files in one loop of its own instead of
one child walk each, when nothing else in any child shares their key space (merge_mc.py decides;
tests/renderer/test_merge_fast.py compares both routes).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from itertools import chain, compress, repeat
from operator import not_
from typing import Any

from ignition import schema

_Key = Any
_get = dict.get


def _is_map(value: Any) -> bool:
    """isinstance(value, Mapping), fast for the dicts JSON gives."""
    return type(value) is dict or isinstance(value, Mapping)


def copy_known(value: Any, node: schema.Node, adopt: Collection[int] = ()) -> Any:
    """A deep copy of `value` keeping only what the schema knows (nulls and unknown keys dropped).

    List items whose id() is in `adopt` are taken as they are (see the module docstring)."""
    kind = node.kind
    if kind == "object":
        if not _is_map(value):
            return value
        out: dict[str, Any] = {}
        fields = node.fields
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
            copied = copy_known(item, f.node, adopt)
            if copied or not isinstance(copied, dict | list):
                out[key] = copied
        return out
    if kind == "list":
        if not isinstance(value, list):
            return value
        item_node = node.item
        assert item_node is not None
        if item_node.kind in ("string", "integer", "boolean"):
            return list(value)
        if adopt:
            return [v if id(v) in adopt else copy_known(v, item_node, adopt) for v in value]
        return [copy_known(v, item_node) for v in value]
    return value


def entry_key(entry: Any, node: schema.Node) -> _Key:
    """The merge key of one list entry."""
    key = node.key
    if key == schema.KEY_VALUE:
        return entry
    if key == schema.KEY_PARTITION:
        number = entry.get("number") or 0
        if number:
            return f"number:{number}"
        label = entry.get("label")
        return f"label:{label}" if label is not None else ""
    return entry.get(key) if _is_map(entry) else entry


class Fold:
    """An Ignition config being merged into, child after child (see the module docstring for the rules)."""

    def __init__(self, base: Mapping[str, Any], version: str, adopt: Collection[int] = ()) -> None:
        self.version = version
        self.root = schema.root(version)
        self.result: dict[str, Any] = copy_known(base, self.root, adopt)
        # The ids the callers offered for adoption, and the configs holding those objects: kept alive with
        # the fold, so that no other object can take one of those ids. `_touched`: entries merged into.
        self._adoptable: set[int] = set(adopt)
        self._holders: list[Mapping[str, Any]] = [base] if adopt else []
        self._touched: set[int] = set()
        self._adopt: Collection[int] = ()
        # id(list) -> (the list, {key: entry}) for keyed lists of objects in the result; holding the list
        # keeps its id from being reused by another list after it is dropped.
        self._index: dict[int, tuple[list[Any], dict[_Key, Any]]] = {}
        # True once an entry was removed (key-space drop, header removal): the result may hold an empty
        # list or object and needs `prune_empty`; copies never hold empties.
        self.may_have_empties = False

    def merge(self, child: Mapping[str, Any], adopt: Collection[int] = ()) -> None:
        """Merge one child config (already in this fold's spec version) into the result; the entries whose
        id() is in `adopt` are the caller's own copies, taken as they are (see the module docstring)."""
        if adopt:
            self._adoptable.update(adopt)
            self._holders.append(child)
        self._adopt = adopt
        self._merge_object(self.result, child, self.root)
        self._adopt = ()

    def keyed_result_list(self, section: str, name: str) -> tuple[list[Any], dict[_Key, Any]]:
        """The result's keyed list `section.name` and its index by key, for a caller that merges adopted
        entries in a loop of its own (merge_mc.py: a pool's later plain files, MCO rules and all, in one
        pass). The caller appends to the list and the index together, passes what it appended to
        `adopted` and every entry it merged into to `merged_into`; the list must already exist."""
        parent = self.result.get(section)
        field = self.root.fields[section].node.fields[name]
        if not isinstance(parent, dict) or not isinstance(parent.get(name), list) or field.node.key is None:
            raise ValueError(f"keyed_result_list: {section}.{name} is not a keyed list of the result")
        items: list[Any] = parent[name]
        return items, self._index_of(items, field.node)

    def adopted(self, entries: list[Any]) -> None:
        """Take `entries` (the caller's own normalized copies of plain entries, put into a result list) as
        adopted: `trusted()` names them until something merges into them."""
        self._adoptable.update(map(id, entries))
        self._holders.append({"adopted": entries})

    def merged_into(self, entry: Any) -> None:
        """Note that the caller merged something into the result entry `entry` (it is no longer trusted)."""
        self._touched.add(id(entry))

    def trusted(self) -> frozenset[int]:
        """id() of the result's files, directories and links that are adopted objects never merged into."""
        storage = self.result.get("storage")
        if not isinstance(storage, dict) or not self._adoptable:
            return frozenset()
        entries = chain.from_iterable(storage.get(name) or () for name in ("files", "directories", "links"))
        found = self._adoptable.intersection(map(id, entries))  # one lookup per entry, no set of them built
        found -= self._touched
        return frozenset(found)

    def _index_of(self, items: list[Any], node: schema.Node) -> dict[_Key, Any]:
        found = self._index.get(id(items))
        if found is None:
            found = (items, {entry_key(e, node): e for e in items})
            self._index[id(items)] = found
        return found[1]

    def _merge_object(self, parent: dict[str, Any], child: Mapping[str, Any], node: schema.Node) -> None:
        fields = node.fields
        keyspaces: dict[str, list[tuple[str, schema.Node, list[Any]]]] | None = None
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
                if fnode.keyspace is not None:
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
                    self._merge_list(parent, key, value, fnode, _siblings(node, key))

    def _merge_list(self, parent: dict[str, Any], key: str, child: list[Any], node: schema.Node,
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
        sibling_lists = [(s, parent[s]) for s in siblings if isinstance(parent.get(s), list) and parent[s]]
        is_header = item.go == "HTTPHeader"
        if not scalar and not sibling_lists and not is_header and node.key not in _COMPUTED_KEYS:
            self._merge_keyed(current, index, child, node.key, item)  # the common case, without the detours
            parent[key] = current
            self._index[id(current)] = (current, index)
            return
        for entry in child:
            k = entry_key(entry, node)
            for sname, slist in sibling_lists:
                self._drop(parent, sname, slist, k, node)
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
                    self._touched.add(id(existing))
                    self._merge_object(existing, entry, item)
                continue
            new = entry if self._adopt and id(entry) in self._adopt else copy_known(entry, item)
            current.append(new)
            index[k] = new
        parent[key] = current
        if not scalar:
            self._index[id(current)] = (current, index)

    def _merge_keyed(self, current: list[Any], index: dict[_Key, Any], child: list[Any], key: str,
                     item: schema.Node) -> None:
        """`_merge_list`'s loop for objects keyed by a field, with no sibling list holding entries.

        A child of adopted entries with distinct keys (the usual MachineConfig) goes in C-level passes: the
        entries with new keys are appended and indexed at once, the few whose key is taken are merged
        into the entry holding it; anything else goes entry by entry."""
        adopt, touched = self._adopt, self._touched
        if adopt and isinstance(adopt, (set, frozenset)) and adopt.issuperset(map(id, child)):
            keys = list(map(_get, child, repeat(key)))  # adopted entries are dicts (plain: they hold their key)
            if len(set(keys)) == len(keys):
                taken = index.keys() & keys
                if taken:
                    is_taken = list(map(taken.__contains__, keys))
                    for k, entry in compress(zip(keys, child, strict=True), is_taken):
                        existing = index[k]
                        touched.add(id(existing))
                        merge_adopted(existing, entry)
                    fresh = list(map(not_, is_taken))
                    child, keys = list(compress(child, fresh)), list(compress(keys, fresh))
                current += child
                index.update(zip(keys, child, strict=True))
                return
        for entry in child:
            k = entry.get(key) if _is_map(entry) else entry
            existing = index.get(k)
            if existing is not None:
                if _is_map(entry):
                    touched.add(id(existing))
                    if adopt and id(entry) in adopt:
                        merge_adopted(existing, entry)
                    else:
                        self._merge_object(existing, entry, item)
                continue
            new = entry if adopt and id(entry) in adopt else copy_known(entry, item)
            current.append(new)
            index[k] = new

    def _drop(self, parent: dict[str, Any], sname: str, slist: list[Any], k: _Key, node: schema.Node) -> None:
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


def merge_adopted(existing: dict[str, Any], entry: dict[str, Any]) -> None:
    """`_merge_object` for a child entry the caller handed over as its own normalized copy of a plain entry
    (scalars and objects of scalars, no null, known keys only): the same outcome, without the schema walk.
    The child's inner objects are taken over, as the child copy itself is not used again."""
    for key, value in entry.items():
        if type(value) is dict:
            current = existing.get(key)
            if type(current) is dict:
                current.update(value)
            elif value:
                existing[key] = value
        else:
            existing[key] = value


_COMPUTED_KEYS = (schema.KEY_VALUE, schema.KEY_PARTITION)
_SIBLINGS: dict[tuple[int, str], tuple[str, ...]] = {}


def _siblings(node: schema.Node, key: str) -> tuple[str, ...]:
    """The other list fields of `node` sharing `key`'s key space (files/directories/links)."""
    found = _SIBLINGS.get((id(node), key))
    if found is None:
        space = node.fields[key].node.keyspace
        found = _SIBLINGS[(id(node), key)] = tuple(
            k for k, f in node.fields.items() if f.node.kind == "list" and f.node.keyspace == space and k != key)
    return found


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
