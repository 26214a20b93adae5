"""Step 4-5 of the pipeline: read a JSON value into one spec version's shape, the way Go's `encoding/json` does.

`decode(doc, version)` checks every JSON type against the schema (a wrong type is fatal, like Go's
UnmarshalTypeError: only the first one is reported), warns about keys the version does not know
(`unused key X`), and returns the *normalized* document the rules read without caring about Go's quirks:

* keys are the schema's field names (Go matches keys case-insensitively; the odd-cased key is still warned);
* `null` on a pointer field means unset, so the key is dropped; `null` on a non-pointer field is its zero value;
* a `null` list item is the zero item (`{}` or `""`);
* keys unknown to the version are dropped (their sections are ignored, as Ignition ignores them).

What needs none of that is not copied: a list of objects that are already so (nearly every list, `_normalized`) is
the input's own list in the result. The result is for reading: whoever changes it changes the input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from itertools import chain, compress, repeat
from operator import is_not
from typing import Any

from ignition.errors import IgnitionError
from ignition.report import Path
from ignition.schema import root
from ignition.schema_nodes import Field, Node

INT_MIN, INT_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class TypeMismatch:
    """A JSON value of the wrong type (Go's UnmarshalTypeError), with what Go would name in its message."""

    path: Path
    json_kind: str
    go_struct: str
    field_path: str
    go_type: str
    literal: str | None = None  # number text, for "number 1.5" (filled in from the source when known)

    def message(self, literal: str | None = None) -> str:
        """Go's text: `json: cannot unmarshal string into Go struct field File.storage.files.mode of type int`."""
        what = self.json_kind
        lit = literal if literal is not None else self.literal
        if what == "number" and lit is not None:
            what = f"number {lit}"
        return f"json: cannot unmarshal {what} into Go struct field {self.go_struct}.{self.field_path} of type {self.go_type}"


class _MismatchFound(IgnitionError):
    """Decoding stops at the first wrong JSON type, as Go's does (caught inside `decode`)."""

    def __init__(self, mismatch: TypeMismatch) -> None:
        super().__init__(mismatch.message(), path=mismatch.path)
        self.mismatch = mismatch


def json_kind(value: Any) -> str:
    """Go's name for a JSON value's type in unmarshal errors. A YAML date or time (what Python's YAML loaders make
    of an unquoted `2026-01-02`) is a string: Kubernetes reads YAML through go-yaml v2 (sigs.k8s.io/yaml), which
    keeps a timestamp decoded into interface{} the string it was (gopkg.in/yaml.v2 decode.go)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (str, date)):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if value is None:
        return "null"
    return type(value).__name__


def _zero(node: Node) -> Any:
    if node.kind == "string":
        return ""
    if node.kind == "integer":
        return 0
    if node.kind == "boolean":
        return False
    if node.kind == "object":
        return {}
    return []


class _Decoder:
    def __init__(self, root: Node) -> None:
        self.root = root
        self.unused: list[Path] = []
        # set when the document has what makes Go's unused-key walk differ from a walk of the JSON: a repeated
        # or odd-cased key, a null on a struct value or list item (decode() then redoes the walk Go's way)
        self.odd = False
        # the object nodes Go holds through a pointer (3.2's *Clevis, *Custom): a later null unsets them
        self.pointer_structs: frozenset[Node] = frozenset()

    def mismatch(self, path: Path, value: Any, go_type: str, literal: str | None = None) -> _MismatchFound:
        """The stop for a wrong JSON type at `path`. Go's message names the struct holding the field and the
        field's path of names; both follow from `path` (walked through the schema as `obj` walks it), so the
        walk down carries only the JSON path."""
        node, struct, names = self.root, "", []
        for part in path:
            if not isinstance(part, str):
                node = node.item  # type: ignore[assignment]
                continue
            name = part if part in node.fields else node.match(part)
            struct = node.go
            names.append(name)
            node = node.fields[name].node  # type: ignore[index]
        return _MismatchFound(TypeMismatch(path, json_kind(value), struct, ".".join(names), go_type, literal))  # type: ignore[arg-type]

    def scalar(self, value: Any, node: Node, path: Path) -> Any:
        kind = node.kind
        t = type(value)
        if kind == "string":
            if t is str:
                return value
        elif kind == "integer":
            if t is int and INT_MIN <= value <= INT_MAX:
                return value
        elif t is bool:
            return value
        raise self.mismatch(path, value, node.go, repr(value) if kind == "integer" and t in (int, float) else None)

    def value(self, value: Any, node: Node, path: Path, into: Any = None) -> Any:
        """Decode `value` for `node`; `into` is what an earlier duplicate key left there (Go decodes into it)."""
        kind = node.kind
        if kind == "object":
            if not isinstance(value, dict):
                raise self.mismatch(path, value, "types." + node.go)
            return self.obj(value, node, path, into if isinstance(into, dict) else None)
        if kind == "list":
            if type(value) is not list:
                raise self.mismatch(path, value, node.go)
            item = node.item
            assert item is not None
            old = into if isinstance(into, list) else ()
            out: list[Any] = []
            if item.kind == "object":
                if value and not old and _normalized(value, item):
                    return value  # (already normalized: shared with the input, not copied)
                for i, v in enumerate(value):
                    prev = old[i] if i < len(old) else None
                    if v is None:
                        self.odd = True
                        out.append(prev if prev is not None else {})
                    elif isinstance(v, dict):
                        out.append(self.obj(v, item, path + (i,), prev))
                    else:
                        raise self.mismatch(path + (i,), v, "types." + item.go)
            else:
                for i, v in enumerate(value):
                    if v is None:
                        out.append(old[i] if i < len(old) else _zero(item))
                    elif type(v) is str and item.kind == "string":
                        out.append(v)
                    else:
                        out.append(self.scalar(v, item, path + (i,)))
            return out
        return self.scalar(value, node, path)

    def obj(self, value: dict[Any, Any], node: Node, path: Path, into: dict[str, Any] | None = None) -> dict[str, Any]:
        members = _MEMBERS.get(node) or _members(node)
        out: dict[str, Any] = dict(into) if into else {}
        pairs: Iterable[tuple[Any, Any]]
        if type(value) is DupDict:
            self.odd = True
            pairs = value.pairs
        else:
            pairs = value.items()
        for key, val in pairs:
            name = key
            member = members.get(key)
            if member is None:
                if type(key) is not str:  # a YAML-built dict can hold int/bool keys; JSON cannot
                    key = str(key)
                self.unused.append(path + (key,))
                matched = node.match(key)
                if matched is None:
                    continue
                self.odd = True
                name = matched
                member = members[name]
            field, child, kind, scalar_type = member
            t = type(val)
            # well-typed scalars (nearly every value) are stored without building the paths errors would need
            if t is scalar_type and (t is not int or INT_MIN <= val <= INT_MAX):
                out[name] = val
                continue
            if val is None:
                if kind == "object":
                    self.odd = True
                    if child in self.pointer_structs:
                        out.pop(name, None)  # Go: null on a pointer sets it to nil
                    continue  # Go: null on a struct value changes nothing
                if field.pointer:
                    out.pop(name, None)
                elif name not in out:
                    out[name] = _zero(child)
                continue
            if kind == "object" and type(val) is dict:
                # (what `value` does for an object, without the call)
                prev = out.get(name)
                out[name] = self.obj(val, child, path + (key,), prev if type(prev) is dict else None)
            elif kind == "string":
                raise self.mismatch(path + (key,), val, child.go)  # (a well-typed string was stored above)
            else:
                out[name] = self.value(val, child, path + (key,), out.get(name))
        return out


_ABSENT = object()
_PYTHON_TYPES = {"string": str, "boolean": bool, "integer": int, "object": dict, "list": list}


def _normalized(items: list[Any], node: Node) -> bool:
    """True when every one of `items` (objects of `node`) is a dict with only the schema's own keys and every
    value of its field's type, objects and lists inside too (nearly every list): such a list is its own
    decoding, with nothing to report. Decided field by field for the whole list at once (the values of one
    field gathered by `map`, their types in one set), not object by object; False for anything else, which
    `value` then decodes item by item (and reports)."""
    if set(map(type, items)) != {dict}:
        return False
    keys = set().union(*items)
    fields = node.fields
    if not keys <= fields.keys():
        return False
    for name in keys:
        child = fields[name].node
        values = list(map(dict.get, items, repeat(name), repeat(_ABSENT)))
        if _ABSENT in values:  # (some objects leave the field out)
            values = list(compress(values, map(is_not, values, repeat(_ABSENT))))
        if set(map(type, values)) != {_PYTHON_TYPES[child.kind]}:
            return False  # (a null among them, too)
        if child.kind == "integer" and (min(values) < INT_MIN or max(values) > INT_MAX):
            return False
        if child.kind == "object" and not _normalized(values, child):
            return False
        if child.kind == "list":
            item = child.item
            if item is None or item.kind == "object":
                return False  # lists of objects inside: item by item
            scalars = list(chain.from_iterable(values))
            if scalars and (set(map(type, scalars)) != {_PYTHON_TYPES[item.kind]}
                            or (item.kind == "integer" and (min(scalars) < INT_MIN or max(scalars) > INT_MAX))):
                return False
    return True


_SCALAR_TYPES = {"string": str, "boolean": bool, "integer": int}
_Member = tuple[Field, Node, str, "type | None"]
# per schema node (nodes compare by identity; there are a few hundred per spec version, built once)
_MEMBERS: dict[Node, dict[str, _Member]] = {}


def _members(node: Node) -> dict[str, _Member]:
    """name -> (field, its node, the node's kind, the Python type a well-typed scalar value has), per node."""
    members = _MEMBERS.get(node)
    if members is None:
        members = _MEMBERS[node] = {
            name: (f, f.node, f.node.kind, _SCALAR_TYPES.get(f.node.kind)) for name, f in node.fields.items()}
    return members


class DupDict(dict):  # type: ignore[type-arg]
    """A JSON object that repeats a key: `pairs` keeps every (key, value) in document order, as Go sees them."""

    pairs: list[tuple[str, Any]]


def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json.loads object_pairs_hook: a plain dict, or a DupDict when a key repeats (Go decodes each in turn)."""
    d = dict(pairs)
    if len(d) != len(pairs):
        dup = DupDict(d)
        dup.pairs = pairs
        return dup
    return d


@dataclass
class Decoded:
    """The result of decoding: the normalized document, or the type error that stopped Go."""

    doc: dict[str, Any] | None
    mismatch: TypeMismatch | None
    unused: list[Path]
    # paths of struct values whose JSON is not an object (a null): Go's "context tree" warning
    context: list[Path] = field(default_factory=list)


def decode(doc: Any, version: str) -> Decoded:
    """Type-check and normalize a parsed JSON document against `version`'s schema (see module docstring)."""
    dec = _Decoder(root(version))
    dec.pointer_structs = pointer_structs(version)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        return Decoded(None, TypeMismatch((), json_kind(doc), "", "", "types.Config"), [])
    try:
        out = dec.obj(doc, dec.root, ())
    except _MismatchFound as stop:
        return Decoded(None, stop.mismatch, dec.unused)
    unused, context = dec.unused, list[Path]()
    if dec.odd:
        unused = []
        _go_unused(doc, root(version), out, (), version, unused, context)
    return Decoded(out, None, unused, context)


def pointer_structs(version: str) -> frozenset[Node]:
    """The schema nodes of `version` that are Go pointers to structs: 3.2's `luks[].clevis` and `clevis.custom`,
    the only ones of specs 3.0-3.6."""
    if version != "3.2.0":
        return frozenset()
    clevis = root("3.2.0").fields["storage"].node.fields["luks"].node.item.fields["clevis"].node  # type: ignore[union-attr]
    return frozenset({clevis, clevis.fields["custom"].node})


CONTEXT_MISMATCH = ("context tree does not match content tree at {}. Line and column reporting may be inconsistent."
                    " Unused keys may not be reported.")
_MISSING = object()


def _go_unused(raw: Any, node: Node, decoded: Mapping[str, Any], path: Path, version: str,
               unused: list[Path], context: list[Path]) -> None:
    """Ignition's ValidateUnusedKeys, for documents where it differs from a walk of the JSON.

    Go walks every struct of the *decoded* config (pointers only when set, list items only up to the decoded
    length) and looks its JSON up by exact keys, the last of a repeated key winning: keys of that object
    the struct lacks are unused (an odd-cased key too, though it was decoded); a struct whose JSON is not an
    object (a null) gets the context-tree warning; a struct with no JSON at that path (reached only through
    an odd-cased key) is not looked at, so nothing under such a key is ever reported."""
    if raw is _MISSING:
        return
    if not isinstance(raw, dict):
        context.append(path)
        return
    fields = node.fields
    for key in raw:
        if key not in fields:
            unused.append(path + (key if type(key) is str else str(key),))
    for name, f in fields.items():
        child = f.node
        if child.kind == "object":
            if name not in decoded and version == "3.2.0" and name in ("clevis", "custom"):
                continue  # 3.2's *Clevis and *Custom: a nil pointer is not walked
            sub = decoded.get(name)
            _go_unused(raw.get(name, _MISSING), child, sub if isinstance(sub, dict) else {}, path + (name,), version,
                       unused, context)
        elif child.kind == "list" and child.item is not None and child.item.kind == "object":
            items = decoded.get(name) or ()
            raw_items = raw.get(name, _MISSING)
            for i, item in enumerate(items):
                r = raw_items[i] if type(raw_items) is list and i < len(raw_items) else _MISSING
                _go_unused(r, child.item, item, path + (name, i), version, unused, context)
