"""go-systemd's unit-file lexer (`unit.DeserializeOptions`), as Ignition uses it to check unit and dropin contents.

Ported step for step, including the bufio.Reader buffering that decides when a line counts as too long:
the Go lexer peeks 2048 bytes whenever at least that much is buffered and fails if they hold no newline.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

LINE_MAX = 2048
_BUF = 4096


class UnitParseError(ValueError):
    """The lexer's error; its text follows `invalid unit content: `."""


class UnitOption(NamedTuple):
    """One `Name=Value` line and the section it is in (a named tuple: a unit makes a few of them, and a
    tuple is built in a fifth of a frozen dataclass's time)."""

    section: str
    name: str
    value: str


class _Reader:
    """Enough of Go's bufio.Reader over a strings.Reader to reproduce Buffered()."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.r = 0
        self.w = 0
        self.eof = False
        self.last = 1  # size of the last rune read, for unread_rune

    def buffered(self) -> int:
        return self.w - self.r

    def fill(self) -> None:
        if self.w >= len(self.data):
            self.eof = True
            return
        self.w = min(self.r + _BUF, len(self.data))

    def read_rune(self) -> str | None:
        if self.r == self.w or (self.data[self.r] >= 0x80 and self.w - self.r < 4 and self.w < len(self.data)):
            self.fill()
            if self.r == self.w:
                self.eof = False
                return None
        b = self.data[self.r]
        size = 1
        if b >= 0xF0:
            size = 4
        elif b >= 0xE0:
            size = 3
        elif b >= 0xC0:
            size = 2
        chunk = self.data[self.r : self.r + size]
        try:
            ch = chunk.decode("utf-8")
        except UnicodeDecodeError:
            ch, size = "\ufffd", 1
        self.r += size
        self.last = size
        return ch

    def unread_rune(self) -> None:
        self.r -= self.last

    def read_bytes(self, delim: int) -> tuple[bytes, bool]:
        """ReadBytes: (line including delim, hit_eof)."""
        start = self.r
        s = 0
        while True:
            i = self.data.find(delim, self.r + s, self.w)
            if i >= 0:
                self.r = i + 1
                return self.data[start : self.r], False
            if self.eof:
                self.eof = False
                line = self.data[start : self.w]
                self.r = self.w
                return line, True
            if self.w - self.r >= _BUF:
                # ErrBufferFull: ReadBytes keeps the fragment and reads on from an empty buffer.
                self.r = self.w
                s = 0
                self.fill()
                continue
            s = self.w - self.r
            self.fill()

    def peek_has_newline(self) -> bool:
        window = self.data[self.r : self.r + LINE_MAX]
        return b"\n" in window or b"\r" in window


def _is_space(ch: str) -> bool:
    return ch.isspace() or ch in "\x85\xa0"


def deserialize(contents: str) -> list[UnitOption]:
    """Parse unit contents like go-systemd; raises UnitParseError with the Go error text."""
    options = deserialize_lines(contents)
    return options if options is not None else deserialize_runes(contents)


_BYTE_SPACE = " \t\n\r\x0b\x0c"  # what bytes.strip() strips


def deserialize_lines(contents: str) -> list[UnitOption] | None:
    """The lexer's result, line by line, for the text nearly every unit is; None for anything else.

    Modelled exactly: ASCII text without carriage returns, every line shorter than LINE_MAX (so the "line
    too long" check cannot fire), made of blank lines, comments without a backslash, `[Section]` headers
    closed on their line with only blanks after, and `Name=value` lines inside a section, whose values
    may continue over lines ending in a backslash. Before the first section only blank lines and comments
    (the rune lexer would skip other text one character at a time). Anything else -- and every input the
    lexer refuses -- answers None, and `deserialize_runes` decides (tests/ignition/test_unitfile.py checks
    the two agree)."""
    if not contents.isascii() or "\r" in contents:
        return None
    lines = contents.split("\n")  # the last one is what follows the final newline: read with EOF
    if max(map(len, lines)) >= LINE_MAX:
        return None
    options: list[UnitOption] = []
    section: str | None = None
    last = len(lines) - 1
    i = 0
    while i <= last:
        body = lines[i].lstrip()  # the lexer skips whitespace, newlines included, between entries
        i += 1
        if not body:
            continue
        first = body[0]
        if first in "#;":
            if "\\" in body:  # a comment may continue on the next line
                return None
            continue
        if first == "[":
            close = body.find("]")
            if close < 0 or "\\" in body or body[close + 1:].strip(" \t\v\f"):
                return None  # a name over lines, or garbage after it
            section = body[1:close]
            continue
        equals = body.find("=")
        if section is None or equals < 0:
            return None
        name = body[:equals].strip()
        segment, at = body[equals + 1:], i - 1  # the value: the rest of the line, then continuations
        partial = ""
        while segment.strip(_BYTE_SPACE):  # (the lexer tests bytes: \x1c-\x1f are not blank here)
            partial += segment
            if not segment.endswith("\\"):
                break
            if at == last:  # a backslash before EOF: the next read is empty and ends the value
                break
            partial += "\n"
            at += 1
            segment = lines[at]
        i = at + 1
        options.append(UnitOption(section, name, partial.strip() + "\n" if partial.endswith("\n") else partial.strip()))
    return options


def deserialize_runes(contents: str) -> list[UnitOption]:
    """The port of go-systemd's lexer, rune by rune (the reference for `deserialize_lines`)."""
    rd = _Reader(contents.encode("utf-8"))
    options: list[UnitOption] = []
    state = "next_section"
    section = ""
    name = ""
    partial = b""
    after_ignore = "next_section"

    def to_eol() -> tuple[bytes, bool]:
        line, eof = rd.read_bytes(0x0A)
        if line.endswith(b"\r"):
            line = line[:-1]
        if line.endswith(b"\n"):
            line = line[:-1]
        return line, eof

    while True:
        if rd.buffered() >= LINE_MAX and not rd.peek_has_newline():
            raise UnitParseError(f"line too long (max {LINE_MAX} bytes)")
        if state == "next_section":
            ch = rd.read_rune()
            if ch is None:
                return options
            if ch == "[":
                state = "section_name"
            elif ch in "#;":
                state, after_ignore = "ignore", "next_section"
        elif state == "section_name":
            sec, eof = rd.read_bytes(ord("]"))
            if eof:
                raise UnitParseError("unable to find end of section")
            section = sec[:-1].decode("utf-8", "replace")
            state = "section_suffix"
        elif state == "section_suffix":
            garbage, _ = to_eol()
            garbage = garbage.strip(b" \t\n\r\v\f")
            if garbage:
                raise UnitParseError(f"found garbage after section name : {_go_quote(garbage)}")
            state = "section_or_option"
        elif state == "ignore":
            while True:
                line, _ = to_eol()
                line = line.removesuffix(b" ")
                if not line.endswith(b"\\"):
                    break
            state = after_ignore
        elif state == "section_or_option":
            ch = rd.read_rune()
            if ch is None:
                return options
            if _is_space(ch):
                continue
            if ch == "[":
                state = "section_name"
            elif ch in "#;":
                state, after_ignore = "ignore", "section_or_option"
            else:
                rd.unread_rune()
                state = "option_name"
        elif state == "option_name":
            chars: list[str] = []
            while True:
                ch = rd.read_rune()
                if ch is None:
                    raise UnitParseError("EOF")
                if ch in "\n\r":
                    raise UnitParseError("unexpected newline encountered while parsing option name")
                if ch == "=":
                    break
                chars.append(ch)
            name = "".join(chars).strip()
            partial = b""
            state = "option_value"
        elif state == "option_value":
            line, eof = to_eol()
            if line.strip():
                partial += line
                if line.endswith(b"\\"):
                    if not eof:
                        partial += b"\n"
                    continue
            val = partial.decode("utf-8", "replace")
            val = val.strip() + "\n" if val.endswith("\n") else val.strip()
            options.append(UnitOption(section, name, val))
            state = "section_or_option"


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}


def _go_quote(b: bytes) -> str:
    """Go's %q of a byte slice (strconv.Quote): C-style escapes, \\xNN, \\uNNNN, printable runes kept."""
    out = []
    for ch in b.decode("utf-8", "replace"):
        esc = _GO_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch == " " or (ch.isprintable() and not ch.isspace()):
            out.append(ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def check_unit_contents(contents: str | None) -> tuple[str | None, list[UnitOption]]:
    """Ignition's validateUnitContent: (error text or None, the parsed options).

    Memoised by contents (a pure function of the string): a merged config repeats its inputs' units."""
    if contents is None:
        return None, []
    if len(contents) > _CACHED_UNIT_LENGTH:
        return _check_unit_contents(contents)
    error, options = _check_unit_contents_cached(contents)
    return error, list(options)


_CACHED_UNIT_LENGTH = 65536


@lru_cache(maxsize=4096)
def _check_unit_contents_cached(contents: str) -> tuple[str | None, tuple[UnitOption, ...]]:
    error, options = _check_unit_contents(contents)
    return error, tuple(options)


def _check_unit_contents(contents: str) -> tuple[str | None, list[UnitOption]]:
    try:
        return None, deserialize(contents)
    except UnitParseError as exc:
        return f"invalid unit content: {exc}", []


# --- what validation needs of a unit: its error and whether it has an [Install] option -----------------------
# A unit text that is ASCII, shorter than LINE_MAX, without a carriage return or a backslash (no continued
# line, no escape) is read by `deserialize_lines` without error exactly when it is made of these lines:
# blank, comment, `[Section]` with only blanks after it, and -- once a section began -- `Name=value`.
_WS = r"[ \t\x0b\x0c\x1c-\x1f]"  # what str.lstrip strips from an ASCII line
_BLANK_OR_COMMENT = rf"{_WS}*(?:[#;][^\n]*)?"
_HEADER = rf"{_WS}*\[[^\]\n]*\][ \t\x0b\x0c]*"
_OPTION = rf"{_WS}*(?:=|[^#;\[\n= \t\x0b\x0c\x1c-\x1f][^=\n]*=)[^\n]*"
_PLAIN_UNIT = re.compile(rf"(?:{_BLANK_OR_COMMENT}\n)*(?:{_BLANK_OR_COMMENT}|{_HEADER}"
                         rf"(?:\n(?:{_HEADER}|{_OPTION}|{_BLANK_OR_COMMENT}))*)")
# an [Install] header followed, before any other header, by an option (a bare header gives no option)
_INSTALL_OPTION = re.compile(rf"(?m)^{_WS}*\[Install\][ \t\x0b\x0c]*\n(?:{_BLANK_OR_COMMENT}\n)*{_OPTION}")


def unit_verdict(contents: str) -> tuple[str | None, bool]:
    """(`check_unit_contents`' error, whether an option is in the `Install` section): all that Ignition's
    unit rules read of a unit's text. Plain text (see above) is answered by two regex matches; anything
    else by the lexer (tests/ignition/test_unitfile.py checks the two agree). Memoised like
    `check_unit_contents`, texts longer than 64 KiB excepted."""
    if len(contents) > _CACHED_UNIT_LENGTH:
        return _unit_verdict(contents)
    return _unit_verdict_cached(contents)


def _unit_verdict(contents: str) -> tuple[str | None, bool]:
    if (len(contents) < LINE_MAX and contents.isascii() and "\r" not in contents and "\\" not in contents
            and _PLAIN_UNIT.fullmatch(contents) is not None):
        return None, _INSTALL_OPTION.search(contents) is not None
    error, options = check_unit_contents(contents)
    return error, any(option.section == "Install" for option in options)


_unit_verdict_cached = lru_cache(maxsize=4096)(_unit_verdict)


def clear_cache() -> None:
    """Empty the unit memos (see ignition/rules/caches.py)."""
    _check_unit_contents_cached.cache_clear()
    _unit_verdict_cached.cache_clear()
