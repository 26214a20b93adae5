"""Reading an Ignition document: the pipeline of Ignition's `config.Parse`, with positions for every entry.

1. empty input -> `not a config (empty)`;
2. JSON syntax (C decoder; on failure Go's own error text and offset, from ignition/gojson.py);
3. `ignition.version`: semver (`invalid config version (couldn't parse)`), then one of the accepted versions
   (`unsupported config version`);
4. decode into that version's shape (ignition/decode.py): a wrong JSON type is fatal, unknown keys warn;
5. validate (ignition/validate.py) — every rule, all entries collected;
6. line:col attached to every entry (ignition/locate.py), lazily, only for the entries there are.

`check(raw)` runs it all and returns a `Checked` (the normalized dict, the version, the report);
`parse(raw)` also builds the typed, immutable `Config` (ignition/types.py) when the document is valid.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ignition import gojson
from ignition.decode import CONTEXT_MISMATCH, DupDict, TypeMismatch, decode, pairs_hook
from ignition.locate import Locator
from ignition.report import ERROR, WARNING, Entry, Report, path_str
from ignition.versions import ACCEPTED_VERSIONS

if TYPE_CHECKING:
    from ignition.types import Config

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_SEMVER_IDENT = re.compile(r"[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*")
_GO_INT = re.compile(r"[+-]?[0-9]+")

MSG_EMPTY = "not a config (empty)"
MSG_BAD_VERSION = "invalid config version (couldn't parse)"
MSG_UNSUPPORTED = "unsupported config version"


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


def parse_semver(text: str) -> tuple[int, int, int, str, str] | None:
    """coreos/go-semver's NewVersion: (major, minor, patch, prerelease, metadata), or None if it fails."""
    version, sep, metadata = text.partition("+")
    if not sep:
        metadata = ""
    version, sep, pre = version.partition("-")
    if not sep:
        pre = ""
    parts = version.split(".", 2)
    if len(parts) != 3:
        return None
    for ident in (pre, metadata):
        if ident and not _SEMVER_IDENT.fullmatch(ident):
            return None
    nums = []
    for part in parts:
        if not _GO_INT.fullmatch(part):
            return None
        value = int(part)
        if not -(2**63) <= value < 2**63:
            return None
        nums.append(value)
    return nums[0], nums[1], nums[2], pre, metadata


_ACCEPTED = {parse_semver(v): v for v in ACCEPTED_VERSIONS}


def match_version(text: str) -> tuple[str | None, str | None]:
    """(accepted version, None) or (None, the error text) for an `ignition.version` string."""
    parsed = parse_semver(text)
    if parsed is None:
        return None, MSG_BAD_VERSION
    version = _ACCEPTED.get(parsed)
    if version is None:
        return None, MSG_UNSUPPORTED
    return version, None


def _fold_all(obj: dict[str, Any], name: str) -> list[tuple[str, Any]]:
    """Every (key, value) Go's case-insensitive field lookup feeds into field `name`, in document order."""
    pairs = obj.pairs if type(obj) is DupDict else obj.items()
    return [(key, val) for key, val in pairs if key == name or (isinstance(key, str) and key.lower() == name)]


@dataclass
class Checked:
    """Everything `check` learned about one document."""

    report: Report
    version: str | None = None
    doc: dict[str, Any] | None = None  # normalized (see ignition/decode.py); None when parsing failed
    raw_doc: Any = None  # the JSON as read

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
    found = gojson.syntax_error(raw)
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


def _version_stub(doc: Any) -> tuple[str | None, Entry | None]:
    """Step 3a: Ignition's util.GetConfigVersion (unmarshal only ignition.version)."""
    if doc is None:
        return "", None
    if not isinstance(doc, dict):
        kind = _go_kind(doc)
        return None, Entry(ERROR, "json-type", (), f"json: cannot unmarshal {kind} into Go value of type util.versionStub")
    version = ""
    # a repeated key decodes into the same struct, as in Go; a type error is located at the key as spelt
    for ign_key, ign in _fold_all(doc, "ignition"):
        if ign is None:
            continue
        if not isinstance(ign, dict):
            return None, Entry(
                ERROR,
                "json-type",
                (ign_key,),
                f"json: cannot unmarshal {_go_kind(ign)} into Go struct field versionStub.ignition of type struct",
            )
        for key, value in _fold_all(ign, "version"):
            if value is None:
                continue
            if type(value) is not str:
                return None, Entry(
                    ERROR,
                    "json-type",
                    (ign_key, key),
                    f"json: cannot unmarshal {_go_kind(value)} into Go struct field .Ignition.Version of type string",
                )
            version = value
    return version, None


def _go_kind(value: Any) -> str:
    from ignition.decode import json_kind

    return json_kind(value)


def check(raw: bytes | str, *, source: str = "", validate: bool = True) -> Checked:
    """Run the whole pipeline on one document (see the module docstring); never raises for bad input."""
    del source
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
    version_text, stub_error = _version_stub(doc)
    if stub_error is not None:
        return Checked(Report([_mismatch_stub(stub_error, locator)]), raw_doc=doc)
    assert version_text is not None
    version, problem = match_version(version_text)
    if version is None:
        code = "version-invalid" if problem == MSG_BAD_VERSION else "version-unsupported"
        entry = Entry(ERROR, code, ("ignition", "version"), problem or "")
        return Checked(_positioned(Report([entry]), locator), raw_doc=doc)
    tests = list_tests = None
    if validate:  # plain files and directories pass through decoding and skip the per-entry rules
        from ignition.validate import plain_list_tests, plain_tests, validate_normalized

        tests, list_tests = plain_tests(version), plain_list_tests(version)
    decoded = decode(doc, version, accept=tests, accept_lists=list_tests)
    if decoded.mismatch is not None:
        return Checked(Report([_mismatch_entry(decoded.mismatch, locator)]), version=version, raw_doc=doc)
    report = Report()
    if validate:
        report = validate_normalized(decoded.doc or {}, version, plain=decoded.accepted, whole=decoded.whole)
    for path in decoded.unused:
        report.entries.append(Entry(WARNING, "unused-key", path, f"unused key {path[-1]}"))
    for path in decoded.context:  # a null where Go has a struct value
        report.entries.append(Entry(WARNING, "context-mismatch", path, CONTEXT_MISMATCH.format(path_str(path))))
    if numbers.huge:
        # a number beyond float64 (1e400): Ignition's context-tree parser fails on it, so Ignition reports no
        # unused key and no line or column for the validation entries (encoding/json merely skips the value)
        report.entries = [e for e in report.entries if e.code not in ("unused-key", "context-mismatch")]
        return Checked(report, version=version, doc=decoded.doc, raw_doc=doc)
    return Checked(_positioned(report, locator), version=version, doc=decoded.doc, raw_doc=doc)


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


def parse(raw: bytes | str, *, source: str = "") -> tuple[Config | None, Report]:
    """Parse and validate a document: (typed immutable Config, or None when it is invalid; the report)."""
    checked = check(raw, source=source)
    if not checked.ok or checked.doc is None or checked.version is None:
        return None, checked.report
    from ignition.types import to_config

    return to_config(checked.doc, checked.version), checked.report


_PARSE_CODES = frozenset({"empty", "json-syntax", "json-type", "version-invalid", "version-unsupported"})


def load(raw: bytes | str, *, source: str = "") -> Config:
    """Parse and validate, raising instead of returning a report: ParseError when the document cannot be read
    (empty, bad JSON, bad version, wrong JSON type), ValidationError when Ignition's rules reject it."""
    from ignition.errors import ParseError, ValidationError

    config, report = parse(raw, source=source)
    if config is not None:
        return config
    first = report.errors[0] if report.errors else None
    message = first.format(source) if first else "config is not valid"
    if first is not None and first.code in _PARSE_CODES:
        raise ParseError(message, report, first.path)
    raise ValidationError(message, report, first.path if first else ())
