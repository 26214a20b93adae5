"""The bytes Butane prints: Ignition JSON as Go marshals it, and MachineConfig YAML as go-yaml v3 emits it.

Last step of the pipeline. Butane marshals Go structs, so key order is the Go field order (the schema's
fields sorted by Go name, the embedded node fields `group, overwrite, path, user` first), nil pointers,
empty lists and empty structs are omitted (`omitempty`, with empty structs omitted too), and strings are
escaped as `encoding/json` does (`<`, `>`, `&`, U+2028/9 as `\\u` escapes). The MachineConfig YAML is that
JSON re-read into maps (so keys sort the go-yaml way) and emitted with a two-space indent.
"""

from __future__ import annotations

import decimal
import functools
import math
import re
from typing import Any

from ignition import schema as ign

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


def go_order(node: ign.Node) -> list[str]:
    """JSON keys of an object node in Go struct field order."""
    names = list(node.fields)
    head = [n for n in _NODE_FIELDS if n in names] if node.go in ("File", "Directory", "Link") else []
    rest = sorted((n for n in names if n not in head), key=go_field_name)
    return head + rest


def _zero_scalar(node: ign.Node) -> Any:
    return {"string": "", "integer": 0, "boolean": False}[node.kind]


def prune(value: Any, node: ign.Node) -> tuple[Any, bool]:
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


# ---- YAML, as go-yaml v3 emits a map[string]interface{} ----------------------------------------------

_OLD_BOOL = {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF"}
_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")


def _key_less(a: str, b: str) -> bool:
    """go-yaml v3's key order (natural order: digit runs compare as numbers, letters before others)."""
    ar, br = a, b
    digits = False
    for i in range(min(len(ar), len(br))):
        if ar[i] == br[i]:
            digits = ar[i].isdigit()
            continue
        al, bl = ar[i].isalpha(), br[i].isalpha()
        if al and bl:
            return ar[i] < br[i]
        if al or bl:
            return al if digits else bl
        an = bn = 0
        if ar[i] == "0" or br[i] == "0":
            j = i - 1
            while j >= 0 and ar[j].isdigit():
                if ar[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(ar) and ar[ai].isdigit():
            an = an * 10 + int(ar[ai])
            ai += 1
        bi = i
        while bi < len(br) and br[bi].isdigit():
            bn = bn * 10 + int(br[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ar[i] < br[i]
    return len(ar) < len(br)


def _compare_keys(x: str, y: str) -> int:
    return -1 if _key_less(x, y) else (1 if _key_less(y, x) else 0)


def _sorted_keys(keys: list[str]) -> list[str]:
    return sorted(keys, key=functools.cmp_to_key(_compare_keys))


def _printable(ch: str) -> bool:
    o = ord(ch)
    return (
        o in (0x9, 0xA, 0xD)
        or 0x20 <= o <= 0x7E
        or o == 0x85
        or 0xA0 <= o <= 0xD7FF
        or 0xE000 <= o <= 0xFFFD
        and o != 0xFEFF
        or 0x10000 <= o <= 0x10FFFF
    )


def _analyze(value: str) -> dict[str, bool]:
    """libyaml's yaml_emitter_analyze_scalar: which styles a scalar allows."""
    if not value:
        return {"multiline": False, "flow_plain": False, "block_plain": True, "single": True, "block": False}
    block_ind = flow_ind = line_breaks = special = False
    leading_space = leading_break = trailing_space = trailing_break = False
    break_space = space_break = previous_space = previous_break = False
    tabs = False
    if value.startswith("---") or value.startswith("..."):
        block_ind = flow_ind = True
    preceded_ws = True
    n = len(value)
    for i, ch in enumerate(value):
        followed_ws = i + 1 >= n or value[i + 1] in " \t\r\n\x85\u2028\u2029"
        if i == 0:
            if ch in "#,[]{}&*!|>'\"%@`":
                flow_ind = block_ind = True
            elif ch in "?:":
                flow_ind = True
                if followed_ws:
                    block_ind = True
            elif ch == "-" and followed_ws:
                flow_ind = block_ind = True
        else:
            if ch in ",?[]{}":
                flow_ind = True
            elif ch == ":":
                flow_ind = True
                if followed_ws:
                    block_ind = True
            elif ch == "#" and preceded_ws:
                flow_ind = block_ind = True
        if ch == "\t":
            tabs = True
        elif not _printable(ch) or (ch == "\ufeff"):
            special = True
        if ch in "\r\n\x85\u2028\u2029":
            line_breaks = True
        if ch == " ":
            if i == 0:
                leading_space = True
            if i == n - 1:
                trailing_space = True
            if previous_break:
                break_space = True
            previous_space, previous_break = True, False
        elif ch in "\r\n\x85\u2028\u2029":
            if i == 0:
                leading_break = True
            if i == n - 1:
                trailing_break = True
            if previous_space:
                space_break = True
            previous_space, previous_break = False, True
        else:
            previous_space = previous_break = False
        preceded_ws = ch in " \t\r\n\x85\u2028\u2029"
    flow_plain = block_plain = single = block = True
    if leading_space or leading_break or trailing_space or trailing_break:
        flow_plain = block_plain = False
    if trailing_space:
        block = False
    if break_space:
        flow_plain = block_plain = single = False
    if space_break or tabs or special:
        flow_plain = block_plain = single = False
    if space_break or special:
        block = False
    if line_breaks:
        flow_plain = block_plain = False
    if flow_ind:
        flow_plain = False
    if block_ind:
        block_plain = False
    return {
        "multiline": line_breaks,
        "flow_plain": flow_plain,
        "block_plain": block_plain,
        "single": single,
        "block": block,
    }


def _resolves_to_str(text: str) -> bool:
    from ignition.butane.yamlsrc import STR, resolve_plain

    return resolve_plain(text)[0] == STR


_DQ = {
    "\0": "0",
    "\a": "a",
    "\b": "b",
    "\t": "t",
    "\n": "n",
    "\v": "v",
    "\f": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}


def _double_quoted(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch in _DQ:
            out.append("\\" + _DQ[ch])
        elif not _printable(ch) or ch == "\ufeff":
            o = ord(ch)
            out.append(f"\\x{o:02X}" if o <= 0xFF else (f"\\u{o:04X}" if o <= 0xFFFF else f"\\U{o:08X}"))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _scalar(text: str, indent: int, simple_key: bool) -> str:
    """One string scalar in go-yaml v3's chosen style; block scalars include their leading newline."""
    plain_ok = _resolves_to_str(text) and not _BASE60.match(text) and text not in _OLD_BOOL
    a = _analyze(text)
    if "\n" in text and not simple_key:
        if a["block"]:
            return _literal(text, indent)
        return _double_quoted(text)
    if plain_ok and text:
        if a["block_plain"]:
            return text
        if a["single"]:
            return "'" + text.replace("'", "''") + "'"
        return _double_quoted(text)
    return _double_quoted(text)


def _literal(text: str, indent: int) -> str:
    hints = ""
    if text[:1] in (" ", "\n"):
        hints += "2"
    if not text.endswith("\n"):
        hints += "-"
    elif text == "\n" or text.endswith("\n\n"):
        hints += "+"
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    pad = " " * indent
    body = "\n".join((pad + line) if line else "" for line in lines)
    return "|" + hints + "\n" + body


def go_format_g(value: float) -> str:
    """Go's strconv.FormatFloat(v, 'g', -1, 64): shortest digits, exponent form from 1e6 or below 1e-4."""
    if value == 0:
        return "0" if math.copysign(1, value) > 0 else "-0"
    sign = "-" if value < 0 else ""
    parts = decimal.Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, parts.digits)).rstrip("0") or "0"
    exponent = len(parts.digits) + int(parts.exponent) - 1
    if exponent < -4 or exponent >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _yaml_scalar(value: Any, indent: int, simple_key: bool = False) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return go_format_g(float(value))  # JSON numbers are float64 once re-read, as Butane re-reads them
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return go_format_g(value)
    return _scalar(str(value), indent, simple_key)


def _yaml_block(value: Any, indent: int) -> list[str]:
    """Lines of a mapping or sequence whose entries start at column `indent`."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key in _sorted_keys(list(value)):
            item = value[key]
            k = _yaml_scalar(key, indent, simple_key=True)
            if isinstance(item, dict) and item:
                lines.append(f"{pad}{k}:")
                lines.extend(_yaml_block(item, indent + 2))
            elif isinstance(item, list) and item:
                lines.append(f"{pad}{k}:")
                lines.extend(_yaml_block(item, indent + 2))
            else:
                lines.append(f"{pad}{k}: {_inline(item, indent + 2)}")
        return lines
    for item in value:
        if isinstance(item, dict) and item:
            sub = _yaml_block(item, indent + 2)
            sub[0] = pad + "- " + sub[0][indent + 2 :]
            lines.extend(sub)
        elif isinstance(item, list) and item:
            sub = _yaml_block(item, indent + 2)
            sub[0] = pad + "- " + sub[0][indent + 2 :]
            lines.extend(sub)
        else:
            lines.append(f"{pad}- {_inline(item, indent + 2)}")
    return lines


def _inline(value: Any, indent: int) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _yaml_scalar(value, indent)


def go_yaml(value: dict[str, Any]) -> str:
    """go-yaml v3 (indent 2) of a JSON-shaped mapping, without a trailing newline."""
    return "\n".join(_yaml_block(value, 0))
