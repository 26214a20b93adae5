"""The bytes Butane prints: Ignition JSON as Go marshals it, and MachineConfig YAML as go-yaml v3 emits it.

Last step of the pipeline. Butane marshals Go structs, so key order is the Go field order (the schema's
fields sorted by Go name, the embedded node fields `group, overwrite, path, user` first), nil pointers,
empty lists and empty structs are omitted (`omitempty`, with empty structs omitted too), and strings are
escaped as `encoding/json` does (`<`, `>`, `&`, U+2028/9 as `\\u` escapes). The MachineConfig YAML is that
JSON re-read into maps (so keys sort the go-yaml way) and emitted with a two-space indent: Butane's
config/util/util.go TranslateBytesYAML json.Unmarshals into interface{} (numbers become float64) and uses
`yaml.NewEncoder` + `SetIndent(2)` from gopkg.in/yaml.v3 v3.0.1 (its go.mod), then trims the newlines around
the result. The YAML side is a port of the v3 emitter's scalar analysis, style choice and writers, so that
quoting, escapes and block-scalar headers come out byte for byte.
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


def _wrap64(n: int) -> int:
    """Go int64 arithmetic wraps around."""
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >= 1 << 63 else n


def _key_less(a: str, b: str) -> bool:
    """go-yaml v3's keyList.Less (sorter.go): natural order, digit runs compare as numbers, letters before
    others. Digits are unicode.IsDigit (category Nd, Python's isdecimal) and a run's value is the int64
    sum of `rune - '0'`, as Go computes it, so a non-ASCII digit counts as its code point minus 48."""
    ar, br = a, b
    digits = False
    for i in range(min(len(ar), len(br))):
        if ar[i] == br[i]:
            digits = ar[i].isdecimal()
            continue
        al, bl = ar[i].isalpha(), br[i].isalpha()
        if al and bl:
            return ar[i] < br[i]
        if al or bl:
            return al if digits else bl
        an = bn = 0
        if ar[i] == "0" or br[i] == "0":
            j = i - 1
            while j >= 0 and ar[j].isdecimal():
                if ar[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(ar) and ar[ai].isdecimal():
            an = _wrap64(an * 10 + ord(ar[ai]) - 48)
            ai += 1
        bi = i
        while bi < len(br) and br[bi].isdecimal():
            bn = _wrap64(bn * 10 + ord(br[bi]) - 48)
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


# Character classes of yamlprivateh.go, on code points (Go works on UTF-8 bytes; the classes are the same).
# is_printable: LF, 0x20-0x7E, 0xA0-0xD7FF, 0xE000-0xFFFD but not the BOM; so TAB, CR, NEL, C1 controls,
# U+FEFF and everything above U+FFFF (emoji) are *not* printable.
_BREAKS = "\r\n\x85\u2028\u2029"
# analyze_scalar's special_characters: not printable (TAB is counted separately as tab_characters).
_SPECIAL = re.compile(r"[^\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
# write_double_quoted_scalar escapes: not printable, a break, `"` or `\`.
_DQ_ESCAPED = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
_ANY_BREAK = re.compile(r"[\r\n\x85\u2028\u2029]")
_BREAK_SPACE = re.compile(r"[\r\n\x85\u2028\u2029] ")
_SPACE_BREAK = re.compile(r" [\r\n\x85\u2028\u2029]")
# Block indicators after the first character: `:` followed by a blank or the end, `#` after is_blankz.
_INNER_BLOCK_IND = re.compile(r"(?s).:(?:[ \t]|\Z)|[ \t\r\n\x85\u2028\u2029\x00]#")
_FIRST_BLOCK_IND = "#,[]{}&*!|>'\"%@`"
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_LITERAL_SPLIT = re.compile(r"([\r\n\x85\u2028\u2029])")

_PLAIN, _SINGLE, _DOUBLE, _LITERAL = "plain", "single", "double", "literal"


class _Analysis:
    """yaml_emitter_analyze_scalar's verdict on a scalar (emitterc.go), for the block context only: the
    encoder never puts a scalar inside a flow collection (only empty `{}`/`[]` are flow)."""

    __slots__ = ("multiline", "block_plain", "single", "block")

    def __init__(self, value: str) -> None:
        if not value:
            self.multiline, self.block_plain, self.single, self.block = False, True, True, False
            return
        first, last = value[0], value[-1]
        block_ind = value.startswith(("---", "..."))
        if first in _FIRST_BLOCK_IND:
            block_ind = True
        elif first in "?:-" and (len(value) == 1 or value[1] in " \t"):
            block_ind = True
        if not block_ind and _INNER_BLOCK_IND.search(value):
            block_ind = True
        line_breaks = _ANY_BREAK.search(value) is not None
        special = _SPECIAL.search(value) is not None
        tabs = "\t" in value
        leading = first == " " or first in _BREAKS
        trailing_space = last == " "
        trailing = trailing_space or last in _BREAKS
        break_space = line_breaks and _BREAK_SPACE.search(value) is not None
        space_break = line_breaks and _SPACE_BREAK.search(value) is not None
        self.multiline = line_breaks
        self.block_plain = not (leading or trailing or break_space or space_break or tabs or special)
        self.block_plain = self.block_plain and not line_breaks and not block_ind
        self.single = not (break_space or space_break or tabs or special)
        self.block = not (trailing_space or space_break or special)


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


def _dq_escape(ch: str) -> str:
    """One escape of write_double_quoted_scalar (hex digits upper-case, width by code point)."""
    if ch in _DQ:
        return "\\" + _DQ[ch]
    o = ord(ch)
    return f"\\x{o:02X}" if o <= 0xFF else (f"\\u{o:04X}" if o <= 0xFFFF else f"\\U{o:08X}")


def _requested_style(text: str) -> str:
    """encode.go stringv: literal if the string holds a line feed, plain if it would read back as the same
    string (not a YAML 1.2 bool/int/float/null, not a timestamp, not a YAML 1.1 base-60 float or yes/no/on/off
    bool), else double-quoted."""
    if "\n" in text:
        return _LITERAL
    if (
        _resolves_to_str(text)
        and not _BASE60.match(text)
        and text not in _OLD_BOOL
    ):
        return _PLAIN
    return _DOUBLE


def _select_style(requested: str, a: _Analysis, text: str, simple_key: bool) -> str:
    """yaml_emitter_select_scalar_style in the block context (flow_level 0, implicit tags)."""
    style = requested
    if simple_key and a.multiline:
        style = _DOUBLE
    if style == _PLAIN and (not a.block_plain or (not text and simple_key)):
        style = _SINGLE
    if style == _SINGLE and not a.single:
        style = _DOUBLE
    if style == _LITERAL and (not a.block or simple_key):
        style = _DOUBLE
    return style


class _Emitter:
    """The parts of go-yaml v3's emitter (emitterc.go) that a JSON-shaped value reaches, with its column,
    `whitespace` and `indention` bookkeeping, so line breaks and indentation land where Go puts them.
    best_indent is 2 (Butane calls SetIndent(2)); best_width is unlimited (v3's yaml_emitter_initialize
    sets -1), so no scalar is ever folded."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.column = 0
        self.whitespace = True
        self.indention = True
        self.indent = -1
        self.indents: list[int] = []

    # -- low-level writers (put, put_break, write, write_break, write_indent, write_indicator) --
    def put(self, text: str) -> None:
        self.out.append(text)
        self.column += len(text)

    def put_break(self) -> None:
        self.out.append("\n")
        self.column = 0
        self.indention = True

    def write_break(self, ch: str) -> None:
        if ch == "\n":
            self.put_break()
        else:
            self.out.append(ch)
            self.column = 0
            self.indention = True

    def write_indent(self) -> None:
        indent = max(self.indent, 0)
        if not self.indention or self.column > indent or (self.column == indent and not self.whitespace):
            self.put_break()
        if self.column < indent:
            self.put(" " * (indent - self.column))
        self.whitespace = True

    def write_indicator(
        self, indicator: str, need_whitespace: bool, is_whitespace: bool, is_indention: bool
    ) -> None:
        if need_whitespace and not self.whitespace:
            self.put(" ")
        self.put(indicator)
        self.whitespace = is_whitespace
        self.indention = self.indention and is_indention

    def increase_indent(self, flow: bool) -> None:
        self.indents.append(self.indent)
        if self.indent < 0:
            self.indent = 2 if flow else 0
        else:
            self.indent += 2

    def pop_indent(self) -> None:
        self.indent = self.indents.pop()

    # -- nodes --
    def node(self, value: Any, simple_key: bool = False) -> None:
        if isinstance(value, dict) and value:
            self.block_mapping(value)
        elif isinstance(value, list) and value:
            self.block_sequence(value)
        elif isinstance(value, (dict, list)):
            self.write_indicator("{" if isinstance(value, dict) else "[", True, True, False)
            self.write_indicator("}" if isinstance(value, dict) else "]", False, False, False)
        elif isinstance(value, str):
            self.scalar(value, _requested_style(value), simple_key)
        else:
            self.scalar(_plain_text(value), _PLAIN, simple_key)

    def block_mapping(self, value: dict[str, Any]) -> None:
        self.increase_indent(False)
        for key in _sorted_keys(list(value)):
            self.write_indent()
            a = _Analysis(key)
            if not a.multiline and len(key.encode("utf-8")) <= 128:  # yaml_emitter_check_simple_key
                self.scalar(key, _requested_style(key), True, a)
                self.write_indicator(":", False, False, False)
            else:
                self.write_indicator("?", True, False, True)
                self.scalar(key, _requested_style(key), False, a)
                self.write_indent()
                self.write_indicator(":", True, False, True)
            self.node(value[key])
        self.pop_indent()

    def block_sequence(self, value: list[Any]) -> None:
        self.increase_indent(False)
        for item in value:
            self.write_indent()
            self.write_indicator("-", True, False, True)
            self.node(item)
        self.pop_indent()

    def scalar(self, text: str, requested: str, simple_key: bool, a: _Analysis | None = None) -> None:
        if a is None:
            a = _Analysis(text)
        style = _select_style(requested, a, text, simple_key)
        self.increase_indent(True)
        if style == _PLAIN:
            if text and not self.whitespace:
                self.put(" ")
            self.put(text)
            if text:
                self.whitespace = False
            self.indention = False
        elif style == _SINGLE:
            self.single_quoted(text)
        elif style == _DOUBLE:
            self.double_quoted(text)
        else:
            self.literal(text)
        self.pop_indent()

    def single_quoted(self, text: str) -> None:
        """write_single_quoted_scalar: `'` doubled; a break (only U+2028/9 get here) is written as is and
        the next character starts at the indentation."""
        self.write_indicator("'", True, False, False)
        breaks = False
        for chunk in _LITERAL_SPLIT.split(text):
            if not chunk:
                continue
            if chunk in _BREAKS:
                if not breaks and chunk == "\n":
                    self.put_break()
                self.write_break(chunk)
                breaks = True
                continue
            if breaks:
                self.write_indent()
            self.put(chunk.replace("'", "''"))
            self.indention = False
            breaks = False
        self.write_indicator("'", False, False, False)
        self.whitespace = False
        self.indention = False

    def double_quoted(self, text: str) -> None:
        """write_double_quoted_scalar. is_bom() looks at the start of the whole value, so a value that
        starts with U+FEFF has every character escaped."""
        self.write_indicator('"', True, False, False)
        if text.startswith("\ufeff"):
            body = "".join(_dq_escape(ch) for ch in text)
        else:
            body = _DQ_ESCAPED.sub(lambda m: _dq_escape(m.group()), text)
        self.put(body)
        self.write_indicator('"', False, False, False)
        self.whitespace = False
        self.indention = False

    def literal(self, text: str) -> None:
        """write_literal_scalar with write_block_scalar_hints. v3 writes no line break after the header
        (only its line comment, of which there is none), so the first content line's write_indent, or the
        value's own leading break, ends the header line."""
        self.write_indicator("|", True, False, False)
        if text[:1] == " " or text[:1] in _BREAKS:
            self.write_indicator("2", False, False, False)
        last = text[-1:]
        if not last or last not in _BREAKS:
            self.write_indicator("-", False, False, False)
        elif len(text) == 1 or text[-2] in _BREAKS:
            self.write_indicator("+", False, False, False)
        self.whitespace = True
        breaks = True
        for chunk in _LITERAL_SPLIT.split(text):
            if not chunk:
                continue
            if chunk in _BREAKS:
                self.write_break(chunk)
                breaks = True
                continue
            if breaks:
                self.write_indent()
            self.put(chunk)
            self.indention = False
            breaks = False


def _plain_text(value: Any) -> str:
    """floatv/boolv/nil of encode.go; JSON numbers are float64 once Butane re-reads them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return go_format_g(float(value))
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return go_format_g(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def _scalar(text: str, indent: int, simple_key: bool) -> str:
    """One string scalar as go-yaml v3 writes it as a mapping value (or key, when simple_key) whose own
    indentation is `indent`; a block scalar ending in a line break is shown without that last break (the
    break that the next line would start with)."""
    e = _Emitter()
    e.indent = indent - 2
    e.column, e.whitespace, e.indention = max(indent - 2, 0) + 2, False, False
    e.scalar(_SURROGATE.sub("\ufffd", text), _requested_style(text), simple_key)
    out = "".join(e.out)
    out = out[1:] if out.startswith(" ") else out
    return out[:-1] if out.endswith("\n") else out


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


def _json_strings(value: Any) -> Any:
    """The value after Butane's json.Marshal + json.Unmarshal: lone surrogates (never valid UTF-8) come
    back as U+FFFD, as go_json writes them."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {_json_strings(k): _json_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_strings(v) for v in value]
    return value


def go_yaml(value: dict[str, Any]) -> str:
    """go-yaml v3 (indent 2) of a JSON-shaped mapping, as Butane's TranslateBytesYAML prints it: the
    encoder's output with the surrounding newlines trimmed (bytes.Trim(..., "\n"))."""
    e = _Emitter()
    e.node(_json_strings(value))
    e.write_indent()  # yaml_emitter_emit_document_end
    return "".join(e.out).strip("\n")
