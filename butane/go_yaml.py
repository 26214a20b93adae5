"""The bytes Butane prints, YAML side: MachineConfig YAML as go-yaml v3 emits it.

The MachineConfig YAML is the Ignition JSON (butane/go_json.py) re-read into maps (so keys sort the
go-yaml way) and emitted with a two-space indent: Butane's config/util/util.go TranslateBytesYAML
json.Unmarshals into interface{} (numbers become float64) and uses `yaml.NewEncoder` + `SetIndent(2)` from
gopkg.in/yaml.v3 v3.0.1 (its go.mod), then trims the newlines around the result. This is a port of the v3
emitter's writers (the scalar analysis and style choice are in butane/go_yaml_style.py), so that
quoting, escapes and block-scalar headers come out byte for byte.
"""

from __future__ import annotations

import math
from typing import Any

from butane.go_yaml_style import (
    BREAKS,
    DOUBLE,
    DQ_ESCAPED,
    LITERAL_SPLIT,
    PLAIN,
    SINGLE,
    SURROGATE,
    Analysis,
    dq_escape,
    go_format_g,
    requested_style,
    select_style,
    sorted_keys,
)


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
            self.scalar(value, requested_style(value), simple_key)
        else:
            self.scalar(_plain_text(value), PLAIN, simple_key)

    def block_mapping(self, value: dict[str, Any]) -> None:
        self.increase_indent(False)
        for key in sorted_keys(list(value)):
            self.write_indent()
            a = Analysis(key)
            if not a.multiline and len(key.encode("utf-8")) <= 128:  # yaml_emitter_check_simple_key
                self.scalar(key, requested_style(key), True, a)
                self.write_indicator(":", False, False, False)
            else:
                self.write_indicator("?", True, False, True)
                self.scalar(key, requested_style(key), False, a)
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

    def scalar(self, text: str, requested: str, simple_key: bool, a: Analysis | None = None) -> None:
        if a is None:
            a = Analysis(text)
        style = select_style(requested, a, text, simple_key)
        self.increase_indent(True)
        if style == PLAIN:
            if text and not self.whitespace:
                self.put(" ")
            self.put(text)
            if text:
                self.whitespace = False
            self.indention = False
        elif style == SINGLE:
            self.single_quoted(text)
        elif style == DOUBLE:
            self.double_quoted(text)
        else:
            self.literal(text)
        self.pop_indent()

    def single_quoted(self, text: str) -> None:
        """write_single_quoted_scalar: `'` doubled; a break (only U+2028/9 get here) is written as is and
        the next character starts at the indentation."""
        self.write_indicator("'", True, False, False)
        breaks = False
        for chunk in LITERAL_SPLIT.split(text):
            if not chunk:
                continue
            if chunk in BREAKS:
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
            body = "".join(dq_escape(ch) for ch in text)
        else:
            body = DQ_ESCAPED.sub(lambda m: dq_escape(m.group()), text)
        self.put(body)
        self.write_indicator('"', False, False, False)
        self.whitespace = False
        self.indention = False

    def literal(self, text: str) -> None:
        """write_literal_scalar with write_block_scalar_hints. v3 writes no line break after the header
        (only its line comment, of which there is none), so the first content line's write_indent, or the
        value's own leading break, ends the header line."""
        self.write_indicator("|", True, False, False)
        if text[:1] == " " or text[:1] in BREAKS:
            self.write_indicator("2", False, False, False)
        last = text[-1:]
        if not last or last not in BREAKS:
            self.write_indicator("-", False, False, False)
        elif len(text) == 1 or text[-2] in BREAKS:
            self.write_indicator("+", False, False, False)
        self.whitespace = True
        breaks = True
        for chunk in LITERAL_SPLIT.split(text):
            if not chunk:
                continue
            if chunk in BREAKS:
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
    e.scalar(SURROGATE.sub("\ufffd", text), requested_style(text), simple_key)
    out = "".join(e.out)
    out = out[1:] if out.startswith(" ") else out
    return out[:-1] if out.endswith("\n") else out


def _json_strings(value: Any) -> Any:
    """The value after Butane's json.Marshal + json.Unmarshal: lone surrogates (never valid UTF-8) come
    back as U+FFFD, as go_json writes them."""
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value) if SURROGATE.search(value) else value
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
