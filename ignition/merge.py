"""Ignition's parent/child merge (Ignition `config/merge/merge.go`): the one merge engine.

`mco ignition merge`, Butane and the renderer's fold of a pool's MachineConfigs (MCO `MergeMachineConfigs`) all
merge with it. `tests/ignition/test_merge_differential.py` checks it against the real Ignition binary.

Merge rules (parent P, child C; the one place they are written down):

0. Both configs are of one spec version (translate first); the result has the child's `ignition.version`.
   Merging is structural: it never validates, and two valid configs can merge into an invalid one.
   `merge` reads each side as Go's `encoding/json` does (ignition.decode: unknown keys ignored, keys matched
   case-insensitively, `null` means unset, a value of the wrong JSON type is a MergeError); `MergedConfig`
   takes configs already read, dropping unknown keys and nulls the same way.
1. Non-pointer scalars (`ignition.version`; spec 3.2's `clevis.custom` `config` and `pin`) take C's value,
   even when C leaves them out (then P's value becomes the zero value `""`, or is dropped if it was zero).
2. Pointer scalars (nearly every field: `mode`, `overwrite`, `source`, `compression`, `enabled`, ...) take
   C's value when C sets it, even to `""`, `false` or `0`; otherwise P's.
3. Objects merge recursively. Spec 3.2 only: `luks[].clevis` and `clevis.custom` are Go pointers, so when one
   side lacks them the other side's object is taken whole (it matters to the transcript only).
4. Lists that Ignition does not deduplicate (`files[].append`, `filesystems[].options`, `mountOptions`,
   `luks[].options`, `raid[].options`) are concatenated, P then C.
5. Every other list is keyed by `entry_key` (files/directories/links by `path`, disks and filesystems by
   `device`, partitions by `number:N` or else `label:L`, raid/luks/units/dropins/users/groups by `name`,
   tang by `url`, config.merge and CAs by `source`, httpHeaders by `name`, string lists by value).
   a. C's item whose key P's *same* list holds is merged into P's item, at P's position (C's value for
      strings); an `httpHeaders` item of C without a `value` removes P's header instead;
   b. C's item whose key is in *another list of the same key space* (files/directories/links share one by
      path; kernelArguments shouldExist/shouldNotExist share one) removes P's item there;
   c. P's other items stay; C's items with a new key are appended in C's order.
   When C repeats a key (an invalid config), as Ignition does: P's item merges with C's last item of that
   key, and every repeat of a new key is appended.
6. Lists and objects left empty are left out of the result (Go's `omitempty`).

`MergedConfig` keeps one mutable result and an index per keyed list, so merging a child costs only the
child's size: folding hundreds of configs is linear, not quadratic. With `record=True` it also keeps, for
every leaf, which side and path supplied it (merge_transcript.py), and `transcript()` gives Go's
transcript (Butane maps its output paths back to the YAML with it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ignition import schema, schema_nodes
from ignition.decode import decode, pointer_structs
from ignition.errors import IgnitionError
from ignition.merge_transcript import CHILD, PARENT, SCALARS, ZERO, Origin, Record, is_map
from ignition.report import Path
from ignition.versions import is_accepted

__all__ = ["CHILD", "PARENT", "MergeError", "MergedConfig", "Origin", "entry_key", "merge", "merge_with_transcript",
           "prune_empty"]



class MergeError(IgnitionError):
    """The two documents cannot be merged (different spec versions, or a value of the wrong JSON type)."""


def merge(parent: Mapping[str, Any], child: Mapping[str, Any]) -> dict[str, Any]:
    """Ignition's merge of `child` onto `parent` (same spec version); the result has the child's version."""
    return _merge(parent, child, record=False)[0]


def merge_with_transcript(parent: Mapping[str, Any], child: Mapping[str, Any]) -> tuple[dict[str, Any], list[Origin]]:
    """The merge result and, for each leaf of it, which side (and path) supplied it."""
    return _merge(parent, child, record=True)


def _merge(parent: Mapping[str, Any], child: Mapping[str, Any], *, record: bool) -> tuple[dict[str, Any], list[Origin]]:
    version = _common_version(parent, child)
    merged = MergedConfig(_decoded(parent, version), version, record=record)
    merged.merge(_decoded(child, version))
    return merged.config(), merged.transcript() if record else []


def _decoded(config: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The config as Go holds it after unmarshalling (ignition.decode): known fields, canonical names."""
    decoded = decode(dict(config), version)
    if decoded.mismatch is not None or decoded.doc is None:
        assert decoded.mismatch is not None
        raise MergeError(decoded.mismatch.message(), path=decoded.mismatch.path)
    return decoded.doc


def _version_of(config: Mapping[str, Any], side: str) -> str | None:
    if not isinstance(config, Mapping):
        raise MergeError(f"{side} config is not a JSON object", path=())
    ign = config.get("ignition")
    version = ign.get("version") if isinstance(ign, Mapping) else None
    return version if isinstance(version, str) and version else None


def _common_version(parent: Mapping[str, Any], child: Mapping[str, Any]) -> str:
    pv, cv = _version_of(parent, PARENT), _version_of(child, CHILD)
    if pv and cv and pv != cv:
        raise MergeError(f"cannot merge a {cv} child into a {pv} parent: translate both to one spec version first",
                         path=("ignition", "version"))
    version = cv or pv
    if version is None:
        raise MergeError("neither config has an ignition.version", path=("ignition", "version"))
    if not is_accepted(version):
        raise MergeError(f"unsupported config version {version!r}", path=("ignition", "version"))
    return version


def entry_key(entry: Any, node: schema_nodes.Node) -> Any:
    """Ignition's Key() of one entry of the keyed list `node` (rule 5)."""
    key = node.key
    if key == schema_nodes.KEY_VALUE:
        return entry
    if key == schema_nodes.KEY_PARTITION:
        number = entry.get("number") or 0
        if number:
            return f"number:{number}"
        label = entry.get("label")
        return f"label:{label}" if label is not None else ""
    value = entry.get(key) if is_map(entry) else entry
    return "" if value is None else value


def copy_known(value: Any, node: schema_nodes.Node) -> Any:
    """A deep copy of `value` keeping only what the schema knows (nulls, unknown keys and empty objects or
    lists dropped)."""
    kind = node.kind
    if kind == "object":
        if not is_map(value):
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
                f, key = fields[name], name
            sub = f.node
            copied = item if sub.kind in SCALARS else copy_known(item, sub)
            if copied or not isinstance(copied, dict | list):
                out[key] = copied
        return out
    if kind == "list":
        if not isinstance(value, list):
            return value
        item_node = node.item
        assert item_node is not None
        if item_node.kind in SCALARS:
            return list(value)
        return [copy_known(v, item_node) for v in value]
    return value


# Per schema node (the schema's nodes live as long as the module): its object and list fields, the other
# lists of each list field's key space, and its non-pointer scalar fields.
_CONTAINERS: dict[schema_nodes.Node, frozenset[str]] = {}
_SIBLINGS: dict[schema_nodes.Node, dict[str, tuple[str, ...]]] = {}
_NON_POINTERS: dict[schema_nodes.Node, tuple[str, ...]] = {}


def _containers(node: schema_nodes.Node) -> frozenset[str]:
    found = _CONTAINERS.get(node)
    if found is None:
        found = _CONTAINERS[node] = frozenset(n for n, f in node.fields.items() if f.node.kind not in SCALARS)
    return found


def _siblings(node: schema_nodes.Node) -> dict[str, tuple[str, ...]]:
    found = _SIBLINGS.get(node)
    if found is None:
        lists = {n: f.node.keyspace for n, f in node.fields.items() if f.node.kind == "list" and f.node.keyspace}
        found = _SIBLINGS[node] = {n: tuple(k for k, space in lists.items() if k != n and space == keyspace)
                                   for n, keyspace in lists.items()}
    return found


def _non_pointers(node: schema_nodes.Node) -> tuple[str, ...]:
    found = _NON_POINTERS.get(node)
    if found is None:
        found = _NON_POINTERS[node] = tuple(n for n, f in node.fields.items() if f.node.kind in SCALARS
                                            and not f.pointer)
    return found


def _set_by_other_case(child: Mapping[str, Any], node: schema_nodes.Node, name: str) -> bool:
    """True when `child` sets field `name` under another spelling Go's case-insensitive matching accepts."""
    return any(k != name and v is not None and node.match(k) == name for k, v in child.items())


class MergedConfig:
    """An Ignition config being merged into, child after child (the module docstring states the rules)."""

    def __init__(self, base: Mapping[str, Any], version: str, *, record: bool = False) -> None:
        self.version = version
        self.root = schema.root(version)
        self.result: dict[str, Any] = copy_known(base, self.root)
        # id(list) -> (the list, {key: entry}) for keyed lists of objects in the result; holding the list
        # keeps its id from being reused by another list after it is dropped.
        self._index: dict[int, tuple[list[Any], dict[Any, Any]]] = {}
        # True once an entry was removed (key-space drop, header removal): the result may hold an empty
        # list or object; copies never hold empties.
        self.may_have_empties = False
        self._record = Record(pointer_structs(version)) if record else None
        if self._record is not None:
            self._record.tag(self.result, self.root, PARENT, ())

    def merge(self, child: Mapping[str, Any]) -> None:
        """Merge one child config (already in this config's spec version) into the result."""
        self._merge_object(self.result, child, self.root, ())

    def config(self) -> dict[str, Any]:
        """The merged config, empty lists and objects left out (rule 6)."""
        return prune_empty(self.result) if self.may_have_empties else self.result

    def transcript(self) -> list[Origin]:
        """Go's transcript of the merges so far (needs record=True)."""
        assert self._record is not None, "MergedConfig(record=True) keeps the transcript"
        out: list[Origin] = []
        self._record.walk(self.result, self.root, (), out)
        return out

    def keys(self, *path: str) -> Collection[Any]:
        """The keys of the keyed list of objects at `path` in the result (`keys("storage", "files")`: the file
        paths), which a child's entries are matched against; empty when the result has no such list."""
        node = self.root
        value_: Any = self.result
        for name in path:
            node = node.fields[name].node
            value_ = value_.get(name) if is_map(value_) else None
        if not isinstance(value_, list) or not value_ or node.item is None or node.item.kind != "object":
            return ()
        return self._index_of(value_, node).keys()

    def _index_of(self, items: list[Any], node: schema_nodes.Node) -> dict[Any, Any]:
        found = self._index.get(id(items))
        if found is None:
            found = (items, {entry_key(e, node): e for e in items})
            self._index[id(items)] = found
        return found[1]

    def _merge_object(self, parent: dict[str, Any], child: Mapping[str, Any], node: schema_nodes.Node,
                      cp: Path) -> None:
        """Rules 1-3 over one object (lists: `_merge_list`); `cp` is the child's path (for the transcript)."""
        fields = node.fields
        rec = self._record
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
                if not is_map(value):
                    parent[key] = value
                    continue
                current = parent.get(key)
                if isinstance(current, dict):
                    if rec is not None:
                        rec.whole.pop(id(current), None)
                    self._merge_object(current, value, fnode, cp + (key,) if rec else cp)
                elif value:
                    copied = copy_known(value, fnode)
                    if copied:
                        parent[key] = copied
                        if rec is not None:
                            rec.tag(copied, fnode, CHILD, cp + (key,))
            elif fnode.kind == "list":
                if not isinstance(value, list):
                    parent[key] = value
                    continue
                if fnode.keyspace is not None:  # merged after the object's other fields, as Go does
                    if keyspaces is None:
                        keyspaces = {}
                    keyspaces.setdefault(fnode.keyspace, []).append((key, fnode, value))
                    continue
                self._merge_list(parent, key, value, fnode, (), cp)
            else:
                parent[key] = value
                if rec is not None:
                    rec.leaves[(id(parent), key)] = (CHILD, cp + (key,))
        non_pointers = _NON_POINTERS.get(node)
        if non_pointers is None:
            non_pointers = _non_pointers(node)
        for name in non_pointers:  # rule 1
            if name in parent and child.get(name) is None and not _set_by_other_case(child, node, name):
                if parent[name] == ZERO[fields[name].node.kind]:
                    del parent[name]
                else:
                    parent[name] = ZERO[fields[name].node.kind]
                if rec is not None:
                    rec.leaves.pop((id(parent), name), None)
        if keyspaces:
            for members in keyspaces.values():
                for key, fnode, value in members:
                    self._merge_list(parent, key, value, fnode, _siblings(node)[key], cp)

    def _merge_list(self, parent: dict[str, Any], key: str, child: list[Any], node: schema_nodes.Node,
                    siblings: tuple[str, ...], cp: Path) -> None:
        """Rules 4 and 5 for one list field."""
        item = node.item
        assert item is not None
        rec = self._record
        lp = cp + (key,) if rec is not None else cp
        current = parent.get(key)
        if not isinstance(current, list):
            current = []
        if node.key is None:  # rule 4
            copied = child if item.kind != "object" else [copy_known(c, item) for c in child]
            if current or copied:
                joined = parent[key] = current + list(copied)
                if rec is not None:
                    rec.joined(current, joined, copied, item, lp)
            return
        if not child:
            return
        scalar = item.kind != "object"
        if scalar:
            in_parent = set(current)
        else:
            index = self._index_of(current, node)  # P's items only, until the loop ends
            matched: dict[Any, tuple[int, Any]] = {}  # rule 5a: P's key -> C's last item of that key
            fresh: dict[Any, Any] = {}  # rule 5c: C's new keys -> the first item appended for each
        sibling_lists = [parent[s] for s in siblings if isinstance(parent.get(s), list) and parent[s]]
        named = node.key not in (schema_nodes.KEY_VALUE, schema_nodes.KEY_PARTITION) and node.key
        for j, entry in enumerate(child):
            k = (entry.get(named) if type(entry) is dict else entry_key(entry, node)) if named \
                else entry_key(entry, node)
            if k is None:
                k = ""
            for slist in sibling_lists:  # rule 5b
                self._drop(slist, k, node)
            if scalar:
                if k in in_parent:
                    if rec is not None:
                        rec.replaced_values(current, k, lp + (j,))
                else:
                    current.append(entry)
                    if rec is not None:
                        rec.appended(current, entry, item, lp + (j,))
                continue
            if k in index:
                matched[k] = (j, entry)
                continue
            new = copy_known(entry, item)
            current.append(new)
            if k not in fresh:
                fresh[k] = new
            if rec is not None:
                rec.appended(current, new, item, lp + (j,))
        if not scalar:
            index.update(fresh)
            is_header = item.go == "HTTPHeader"
            for k, (j, entry) in matched.items():
                existing = index[k]
                if is_header and is_map(entry) and entry.get("value") is None:
                    current.remove(existing)
                    del index[k]
                    self.may_have_empties = True
                elif is_map(entry):
                    if rec is not None:
                        rec.merged(existing)
                    self._merge_object(existing, entry, item, lp + (j,))
            self._index[id(current)] = (current, index)
        parent[key] = current

    def _drop(self, slist: list[Any], k: Any, node: schema_nodes.Node) -> None:
        """Remove the entry keyed `k` from a sibling list of the same key space (if it has one)."""
        item = node.item
        assert item is not None
        rec = self._record
        if item.kind != "object":
            if k in slist:
                if rec is not None:
                    rec.filtered(slist, [e != k for e in slist])
                slist[:] = [e for e in slist if e != k]
                self.may_have_empties = True
            return
        victim = self._index_of(slist, node).pop(k, None)
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
