"""Parent/child merge of two Ignition configs, exactly as Ignition's `config/merge/merge.go` does it.

Where it sits: the renderer merges MachineConfig fragments with it, and Ignition itself merges
`ignition.config.merge[]` children into their parent the same way. Configs are plain JSON dicts of one
spec version; the walk follows `ignition.schema` (Go's struct types), so it sees what Go sees.

Merge rules (parent P, child C; the one place they are written down):

0. Both configs must be of the same spec version (translate first); the result has the child's
   `ignition.version`. Merging is structural: it never validates, and two valid configs can merge
   into an invalid one. Before merging, each side is read as Go's `encoding/json` would: unknown keys
   are ignored, keys match fields case-insensitively, `null` means "unset".
1. Non-pointer scalars (`ignition.version`, the list keys `path`/`name`/`device`/`url`, partition
   `number`, and in specs 3.0-3.2 `links[].target` and `raid[].level`) take C's value, even when C
   leaves them out (then the result holds the zero value, `""`/`0`).
2. Pointer scalars (nearly every optional field: `mode`, `overwrite`, `source`, `compression`,
   `format`, `label`, `enabled`, `contents`, ...) take C's value when C sets it, even to `""`, `false`
   or `0`; otherwise P's.
3. Objects merge recursively. Spec 3.2 only: `luks[].clevis` and `clevis.custom` are Go pointers, so
   when one side lacks them the other side's object is taken whole.
4. Lists that Ignition does not deduplicate (`files[].append`, `filesystems[].options`,
   `filesystems[].mountOptions`, `luks[].options`, `raid[].options`) are concatenated, P then C.
5. Every other list is keyed (files/directories/links by `path`, disks and filesystems by `device`,
   partitions by `number:N` or else `label:L`, raid/luks/units/dropins/users/groups by `name`,
   tang by `url`, config.merge and CAs by `source`, httpHeaders by `name`, string lists by value).
   Walking P's items in order:
   a. key also in C's *same* list -> one merged item at P's position (recursive for objects, C's
      value for strings); an `httpHeaders` item whose C side has no `value` is dropped instead;
   b. key in C but in *another list of the same key space* (files/directories/links share one by
      path; kernelArguments shouldExist/shouldNotExist share one) -> P's item is dropped;
   c. key not in C -> P's item is kept.
   Then C's items whose key is not in P's same list are appended in C's order. When C repeats a
   key, its last item is the one P's item merges with.
6. A list that ends up empty is left out of the result.

`merge_with_transcript` also returns Go's transcript: for every leaf (and every object taken whole)
of the result, which side and which path it came from. The renderer uses it for provenance.
Merging many configs left to right is merge_many.py; `ignition.config.replace`/`merge[]` references are
rendered by references.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ignition import schema, schema_nodes
from ignition.decode import decode
from ignition.errors import IgnitionError
from ignition.report import Path, path_str
from ignition.versions import is_accepted

__all__ = ["CHILD", "PARENT", "MergeError", "Origin", "merge", "merge_with_transcript"]

PARENT = "parent"
CHILD = "child"

# Spec 3.2's Go pointer-to-struct fields (ignition issue 1132); every other object is a plain struct.
_POINTER_STRUCTS = {"3.2.0": frozenset({"storage.luks[].clevis", "storage.luks[].clevis.custom"})}
_ZERO = {"string": "", "integer": 0, "boolean": False}


class MergeError(IgnitionError):
    """The two documents cannot be merged (different spec versions, or a value of the wrong JSON type)."""


@dataclass(frozen=True)
class Origin:
    """One transcript line: the result path `result` was taken from `side`'s document at `source`."""

    side: str
    source: Path
    result: Path

    def __str__(self) -> str:
        return f"{self.side}:{path_str(self.source)} -> {path_str(self.result)}"


def merge(parent: Mapping[str, Any], child: Mapping[str, Any]) -> dict[str, Any]:
    """Ignition's merge of `child` onto `parent` (same spec version); the result has the child's version."""
    return _merge(parent, child, record=False)[0]


def merge_with_transcript(
    parent: Mapping[str, Any], child: Mapping[str, Any]
) -> tuple[dict[str, Any], list[Origin]]:
    """The merge result and, for each leaf of it, which side (and path) supplied it."""
    return _merge(parent, child, record=True)


def _merge(
    parent: Mapping[str, Any], child: Mapping[str, Any], *, record: bool
) -> tuple[dict[str, Any], list[Origin]]:
    version = _common_version(parent, child)
    root = schema.root(version)
    p, c = _decoded(parent, version), _decoded(child, version)
    merger = _Merger(_POINTER_STRUCTS.get(version, frozenset()), record=record)
    result = merger.struct(root, "", p, (), c, (), ())
    return result, merger.transcript


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
        raise MergeError(
            f"cannot merge a {cv} child into a {pv} parent: translate both to one spec version first",
            path=("ignition", "version"),
        )
    version = cv or pv
    if version is None:
        raise MergeError("neither config has an ignition.version", path=("ignition", "version"))
    if not is_accepted(version):
        raise MergeError(f"unsupported config version {version!r}", path=("ignition", "version"))
    return version


def _item_key(list_node: schema_nodes.Node, item: Any) -> str:
    """Ignition's Key() of a list item."""
    key = list_node.key
    if key == schema_nodes.KEY_VALUE:
        return str(item)
    if key == schema_nodes.KEY_PARTITION:
        number = item.get("number", 0)
        if number:
            return f"number:{number}"
        if "label" in item:
            return f"label:{item['label']}"
        return ""
    assert key is not None
    value = item.get(key)
    return "" if value is None else str(value)


class _Merger:
    def __init__(self, pointer_structs: frozenset[str], *, record: bool) -> None:
        self.pointer_structs = pointer_structs
        self.record = record
        self.transcript: list[Origin] = []

    # transcript -------------------------------------------------------------------------------
    def transcribe(
        self, side: str, source: Path, result: Path, node: schema_nodes.Node, value: Any, pointer: bool
    ) -> bool:
        """Record every populated leaf of a subtree taken whole from one side (Go's transcribe)."""
        if not self.record:
            return False
        if node.is_scalar:
            if not pointer and value == _ZERO[node.kind]:
                return False
            self.transcript.append(Origin(side, source, result))
            return True
        if node.kind == "list":
            assert node.item is not None
            done = False
            for i, item in enumerate(value):
                done = self.transcribe(side, source + (i,), result + (i,), node.item, item, False) or done
            return done
        done = False
        for name, sub in value.items():
            f = node.fields[name]
            done = self.transcribe(side, source + (name,), result + (name,), f.node, sub, f.pointer) or done
        if done:
            self.transcript.append(Origin(side, source, result))
        return done

    # the walk ---------------------------------------------------------------------------------
    def struct(
        self,
        node: schema_nodes.Node,
        where: str,
        p: dict[str, Any],
        pp: Path,
        c: dict[str, Any],
        cp: Path,
        rp: Path,
    ) -> dict[str, Any]:
        """Rules 1-6 over one object; `where` is its schema field path (for the 3.2 pointer structs)."""
        child_index = self.child_index(node, c)
        out: dict[str, Any] = {}
        for name in sorted(node.fields):
            if name not in p and name not in c:
                continue
            f = node.fields[name]
            sub = f.node
            here = f"{where}.{name}" if where else name
            pfp, cfp, rfp = pp + (name,), cp + (name,), rp + (name,)
            if sub.is_scalar:
                if f.pointer:  # rule 2
                    side, value, src = (CHILD, c[name], cfp) if name in c else (PARENT, p[name], pfp)
                    out[name] = value
                    self.transcribe(side, src, rfp, sub, value, True)
                elif name in c:  # rule 1
                    out[name] = c[name]
                    self.transcribe(CHILD, cfp, rfp, sub, c[name], False)
                elif p[name] != _ZERO[sub.kind]:
                    out[name] = _ZERO[sub.kind]
            elif sub.kind == "object":
                if here in self.pointer_structs and (name not in p or name not in c):  # rule 3, spec 3.2
                    side, value, src = (CHILD, c[name], cfp) if name in c else (PARENT, p[name], pfp)
                    out[name] = value
                    self.transcribe(side, src, rfp, sub, value, True)
                else:  # rule 3
                    out[name] = self.struct(sub, here, p.get(name, {}), pfp, c.get(name, {}), cfp, rfp)
            else:
                merged = self.list(
                    sub, here, name, p.get(name, []), pfp, c.get(name, []), cfp, rfp, child_index
                )
                if merged:  # rule 6
                    out[name] = merged
        return out

    def child_index(self, node: schema_nodes.Node, c: dict[str, Any]) -> dict[tuple[str, str], tuple[str, int]]:
        """(key space, key) -> (child list, index) over the child's keyed lists; the last repeat wins."""
        index: dict[tuple[str, str], tuple[str, int]] = {}
        for name in sorted(node.fields):
            sub = node.fields[name].node
            if sub.kind != "list" or sub.key is None or name not in c:
                continue
            handle = sub.keyspace or name
            for j, item in enumerate(c[name]):
                index[(handle, _item_key(sub, item))] = (name, j)
        return index

    def list(
        self,
        node: schema_nodes.Node,
        where: str,
        name: str,
        p: list[Any],
        pp: Path,
        c: list[Any],
        cp: Path,
        rp: Path,
        child_index: dict[tuple[str, str], tuple[str, int]],
    ) -> list[Any]:
        """Rules 4 and 5 for one list field."""
        item_node = node.item
        assert item_node is not None
        out: list[Any] = []
        if node.key is None:  # rule 4
            for side, items, base in ((PARENT, p, pp), (CHILD, c, cp)):
                for i, item in enumerate(items):
                    self.transcribe(side, base + (i,), rp + (len(out),), item_node, item, False)
                    out.append(item)
            return out
        handle = node.keyspace or name
        parent_keys = {_item_key(node, item) for item in p}
        for i, item in enumerate(p):  # rule 5, parent's items
            at = rp + (len(out),)
            found = child_index.get((handle, _item_key(node, item)))
            if found is None:  # 5c
                self.transcribe(PARENT, pp + (i,), at, item_node, item, False)
                out.append(item)
                continue
            child_list, j = found
            if child_list != name:  # 5b
                continue
            child_item = c[j]
            if item_node.kind == "object":
                if name == "httpHeaders" and "value" not in child_item:
                    continue  # 5a: a header without value deletes the parent's header
                out.append(self.struct(item_node, f"{where}[]", item, pp + (i,), child_item, cp + (j,), at))
            else:
                self.transcribe(CHILD, cp + (j,), at, item_node, child_item, False)
                out.append(child_item)
        for j, child_item in enumerate(c):  # rule 5, the child's new items
            if _item_key(node, child_item) not in parent_keys:
                self.transcribe(CHILD, cp + (j,), rp + (len(out),), item_node, child_item, False)
                out.append(child_item)
        return out
