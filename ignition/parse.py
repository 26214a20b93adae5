"""Reading an Ignition document: the pipeline of Ignition's `config.Parse`, with positions for every entry.

1. empty input -> `not a config (empty)`;
2. JSON syntax (C decoder; on failure Go's own error text and offset, from ignition/go_json_syntax.py);
3. `ignition.version` (ignition/config_version.py): semver (`invalid config version (couldn't parse)`), then one of the accepted versions
   (`unsupported config version`);
4. decode into that version's shape (ignition/decode.py): a wrong JSON type is fatal, unknown keys warn;
5. validate (ignition/validate.py) — every rule, all entries collected;
6. line:col attached to every entry (ignition/locate.py), lazily, only for the entries there are.

`check(raw)` runs it all and returns a `Checked` (the normalized dict, the version, the report). The
normalized dict is the model every caller works on: plain JSON values in Go's shape (known fields, canonical
names, null read as unset), walked with ignition/schema.py.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from ignition import go_json_syntax
from ignition.config_version import config_version
from ignition.decode import TypeMismatch, decode, pairs_hook
from ignition.locate import Locator
from ignition.report import ERROR, Entry, Report
from ignition.validate import validate_decoded

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

MSG_EMPTY = "not a config (empty)"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid constant {name}")


_INF = float("inf")


class _Numbers:
    """json.loads' parse_float and parse_int: note a literal beyond float64 (1e400, or 309 digits and more)."""

    def __init__(self) -> None:
        self.huge = False

    def float(self, text: str) -> float:
        value = float(text)
        if value == _INF or value == -_INF:
            self.huge = True
        return value

    def int(self, text: str) -> int:
        if len(text) > 308 and abs(float(text)) == _INF:
            self.huge = True
        return int(text)


@dataclass
class Checked:
    """Everything `check` learned about one document."""

    report: Report
    version: str | None = None
    # Normalized (ignition/decode.py); None when parsing failed. For reading: it shares lists with the JSON as
    # read, so copy (copy.deepcopy) before changing it.
    doc: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """True when the document parsed and has no errors."""
        return self.doc is not None and not self.report.is_fatal


def _replace_lone_surrogates(value: Any) -> Any:
    """Go decodes an unpaired `\\uD800`-style escape as U+FFFD; Python keeps the surrogate. Do as Go does."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_lone_surrogates(k): _replace_lone_surrogates(v) for k, v in value.items()}
    return value


def _go_replace(err: UnicodeError) -> tuple[str, int]:
    """Go's decoding of invalid UTF-8 inside JSON strings: one U+FFFD per bad byte."""
    assert isinstance(err, UnicodeDecodeError)
    return "\ufffd" * (err.end - err.start), err.end


codecs.register_error("ignition-go-utf8", _go_replace)


def _text_of(raw: bytes | str) -> tuple[str, bytes | None, str]:
    """(text for the JSON decoder, the raw bytes, text for the locator: one char per invalid byte, kept)."""
    if isinstance(raw, str):
        return raw, None, raw
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "ignition-go-utf8"), raw, raw.decode("utf-8", "surrogateescape")
    return text, raw, text


def _syntax_entry(text: str, data: bytes | None, exc: Exception) -> Entry:
    raw = data if data is not None else text.encode("utf-8", "surrogatepass")
    found = go_json_syntax.syntax_error(raw)
    if found is None:
        message, offset = str(exc), getattr(exc, "pos", 0)
        offset = len(text[:offset].encode("utf-8", "surrogatepass"))
    else:
        message, offset = found
    # Ignition prints the byte after the one Go stopped at; past the end it has no position ("line 0 col 0"),
    # so we point at the last byte instead.
    offset = max(0, min(offset, len(raw) - 1))
    line = raw.count(b"\n", 0, offset) + 1
    start = raw.rfind(b"\n", 0, offset) + 1
    return Entry(ERROR, "json-syntax", (), message, line, offset - start + 1)


def _mismatch_entry(m: TypeMismatch, locator: Locator | None) -> Entry:
    literal = None
    line = col = None
    if locator is not None:
        span = locator.value_span(m.path)
        if span is not None:
            start, end = span
            literal = locator.text[start:end] if m.literal is not None else None
            is_container = locator.text[start : start + 1] in ("{", "[")
            line, col = locator.line_col(start + 1 if is_container else end)
    return Entry(ERROR, "json-type", m.path, m.message(literal), line, col)


def check(raw: bytes | str) -> Checked:
    """Run the whole pipeline on one document (see the module docstring); never raises for bad input."""
    if len(raw) == 0:
        return Checked(Report([Entry(ERROR, "empty", (), MSG_EMPTY)]))
    text, data, located = _text_of(raw)
    try:
        numbers = _Numbers()
        doc = json.loads(text, parse_constant=_reject_constant, parse_float=numbers.float, parse_int=numbers.int,
                         object_pairs_hook=pairs_hook)
    except (ValueError, RecursionError) as exc:
        return Checked(Report([_syntax_entry(text, data, exc)]))
    if _SURROGATE_ESCAPE.search(text):
        doc = _replace_lone_surrogates(doc)
    locator = Locator(located)
    version, error = config_version(doc)
    if error is not None or version is None:
        assert error is not None
        if error.code == "json-type":  # the version stub's own type error
            return Checked(Report([_mismatch_stub(error, locator)]))
        return Checked(_positioned(Report([error]), locator))
    decoded = decode(doc, version)
    if decoded.mismatch is not None:
        return Checked(Report([_mismatch_entry(decoded.mismatch, locator)]), version=version)
    report = validate_decoded(decoded, version)
    if numbers.huge:
        # a number beyond float64 (1e400): Ignition's context-tree parser fails on it, so Ignition reports no
        # unused key and no line or column for the validation entries (encoding/json merely skips the value)
        report.entries = [e for e in report.entries if e.code not in ("unused-key", "context-mismatch")]
        return Checked(report, version=version, doc=decoded.doc)
    return Checked(_positioned(report, locator), version=version, doc=decoded.doc)


def _mismatch_stub(entry: Entry, locator: Locator) -> Entry:
    span = locator.value_span(entry.path)
    if span is None:
        return entry
    start, end = span
    is_container = locator.text[start : start + 1] in ("{", "[")
    line, col = locator.line_col(start + 1 if is_container else end)
    return replace(entry, line=line, col=col)


def _positioned(report: Report, locator: Locator) -> Report:
    out = Report()
    for e in report.entries:
        pos = locator.locate(e.path, key=e.code == "unused-key")
        out.entries.append(replace(e, line=pos[0], col=pos[1]) if pos else e)
    return out
