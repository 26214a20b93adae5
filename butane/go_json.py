"""The bytes Butane prints, JSON side: Ignition JSON as Go marshals it (the YAML side: butane/go_yaml.py).

Last step of the pipeline. Butane marshals Go structs, so key order is the Go field order (the schema's
fields sorted by Go name, the embedded node fields `group, overwrite, path, user` first), nil pointers,
empty lists and empty structs are omitted (`omitempty`, with empty structs omitted too), and strings are
escaped as `encoding/json` does (`<`, `>`, `&`, U+2028/9 as `\\u` escapes).
"""

from __future__ import annotations

from typing import Any

from ignition import schema as ign
from ignition import schema_nodes

_NODE_FIELDS = ("group", "overwrite", "path", "user")
_GO_NAMES = {
    "sshAuthorizedKeys": "SSHAuthorizedKeys",
    "httpHeaders": "HTTPHeaders",
    "httpProxy": "HTTPProxy",
    "httpsProxy": "HTTPSProxy",
    "httpResponseHeaders": "HTTPResponseHeaders",
    "httpTotal": "HTTPTotal",
    "uuid": "UUID",
    "guid": "GUID",
    "typeGuid": "TypeGUID",
    "id": "ID",
    "uid": "UID",
    "url": "URL",
    "tls": "TLS",
}
# Non-pointer fields tagged omitempty (omitted when zero); every other non-pointer field is always written.
_OMITEMPTY_VALUES = {("Partition", "number"), ("Tang", "url")}

_MISSING = object()


def go_field_name(json_name: str) -> str:
    """The Go field name behind a JSON key (`sshAuthorizedKeys` -> `SSHAuthorizedKeys`)."""
    return _GO_NAMES.get(json_name, json_name[:1].upper() + json_name[1:])


def go_order(node: schema_nodes.Node) -> list[str]:
    """JSON keys of an object node in Go struct field order."""
    names = list(node.fields)
    head = [n for n in _NODE_FIELDS if n in names] if node.go in ("File", "Directory", "Link") else []
    rest = sorted((n for n in names if n not in head), key=go_field_name)
    return head + rest


def _zero_scalar(node: schema_nodes.Node) -> Any:
    return {"string": "", "integer": 0, "boolean": False}[node.kind]


def prune(value: Any, node: schema_nodes.Node) -> tuple[Any, bool]:
    """(value in Go order with empties dropped, whether it is Go's zero value) for a value of `node`."""
    if node.kind == "object":
        out: dict[str, Any] = {}
        zero = True
        for name in go_order(node):
            member = node.fields[name]
            child = value.get(name, _MISSING) if isinstance(value, dict) else _MISSING
            if member.node.is_scalar:
                if child is _MISSING or child is None:
                    if member.pointer:
                        continue
                    child = _zero_scalar(member.node)
                if not member.pointer:
                    is_zero = child == _zero_scalar(member.node)
                    zero = zero and is_zero
                    if is_zero and (node.go, name) in _OMITEMPTY_VALUES:
                        continue
                else:
                    zero = False
                out[name] = child
                continue
            if child is _MISSING or child is None:
                continue
            cleaned, child_zero = prune(child, member.node)
            if child_zero:
                continue
            zero = False
            out[name] = cleaned
        return out, zero
    if node.kind == "list":
        assert node.item is not None
        if not value:
            return [], True
        items = [prune(v, node.item)[0] if node.item.kind == "object" else v for v in value]
        return items, False
    return value, value is None


def ignition_json_value(config: dict[str, Any], version: str) -> dict[str, Any]:
    """The config in Go order and omitempty shape (`ignition` is always present)."""
    root = ign.root(version)
    cleaned, _ = prune(config, root)
    if "ignition" not in cleaned:
        cleaned = {"ignition": {"version": version}, **cleaned}
    return cleaned


# ---- JSON, as Go's encoding/json writes it -------------------------------------------------------------

_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _json_string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[ch])
        elif ch < " " or ch in "<>&\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        elif "\ud800" <= ch <= "\udfff":
            out.append("\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _json(value: Any, indent: str | None, level: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        if indent is None:
            return "{" + ",".join(f"{_json_string(k)}:{_json(v, None, 0)}" for k, v in value.items()) + "}"
        pad = "\n" + indent * (level + 1)
        body = ",".join(f"{pad}{_json_string(k)}: {_json(v, indent, level + 1)}" for k, v in value.items())
        return "{" + body + "\n" + indent * level + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if indent is None:
            return "[" + ",".join(_json(v, None, 0) for v in value) + "]"
        pad = "\n" + indent * (level + 1)
        body = ",".join(f"{pad}{_json(v, indent, level + 1)}" for v in value)
        return "[" + body + "\n" + indent * level + "]"
    raise TypeError(f"cannot encode {type(value).__name__}")


def _go_float(value: float) -> str:
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def go_json(value: Any, pretty: bool = False) -> str:
    """`json.Marshal` (or `json.MarshalIndent(v, "", "  ")` when pretty) of an already ordered value."""
    return _json(value, "  " if pretty else None, 0)
