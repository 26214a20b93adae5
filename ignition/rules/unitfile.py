"""go-systemd's unit-file lexer (`unit.DeserializeOptions`), as Ignition uses it to check unit and dropin contents.

Ported step for step, including the bufio.Reader buffering that decides when a line counts as too long:
the Go lexer peeks 2048 bytes whenever at least that much is buffered and fails if they hold no newline.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from ignition.errors import IgnitionError

LINE_MAX = 2048
_BUF = 4096
_ASCII = [chr(b) for b in range(128)]


class UnitParseError(IgnitionError, ValueError):
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
        r = self.r
        if r < self.w and self.data[r] < 0x80:  # an ASCII byte already buffered: the rune is the byte
            self.r = r + 1
            self.last = 1
            return _ASCII[self.data[r]]
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

    def read_name(self) -> str | None:
        """The runes up to the next `=` (consumed), as read_rune would read them one by one, buffer included;
        None when a newline or the end comes first, or when the name is not ASCII (then read rune by rune)."""
        data, r = self.data, self.r
        end = len(data)
        stop = min((i for i in (data.find(b"=", r), data.find(b"\n", r), data.find(b"\r", r)) if i >= 0),
                   default=-1)
        if stop < 0 or data[stop] != 0x3D or not data[r:stop].isascii():
            return None
        w = self.w
        while w <= stop:  # each time the buffer runs dry, read_rune refills it from the read position
            if w >= end:
                return None
            w = min(w + _BUF, end)
        self.w, self.r, self.last = w, stop + 1, 1
        return data[r:stop].decode("ascii")

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
    """Parse unit contents like go-systemd, rune by rune; raises UnitParseError with the Go error text."""
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
                raise UnitParseError(f"found garbage after section name : {go_quote(garbage)}")
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
            fast = rd.read_name()
            if fast is not None:
                name = fast.strip()
                partial = b""
                state = "option_value"
                continue
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


def go_quote(b: bytes) -> str:
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

    Memoised by contents (a pure function of the string): a merged config repeats its inputs' units. The memo
    is bounded in entries and in size: at most 1,024 texts of up to 16 KiB each (16 MiB of text)."""
    if contents is None:
        return None, []
    if len(contents) > _CACHED_UNIT_LENGTH:
        return _check_unit_contents(contents)
    error, options = _check_unit_contents_cached(contents)
    return error, list(options)


_CACHED_UNIT_LENGTH = 16384


@lru_cache(maxsize=1024)
def _check_unit_contents_cached(contents: str) -> tuple[str | None, tuple[UnitOption, ...]]:
    error, options = _check_unit_contents(contents)
    return error, tuple(options)


def _check_unit_contents(contents: str) -> tuple[str | None, list[UnitOption]]:
    try:
        return None, deserialize(contents)
    except UnitParseError as exc:
        return f"invalid unit content: {exc}", []


def unit_verdict(contents: str) -> tuple[str | None, bool]:
    """(`check_unit_contents`' error, whether an option is in the `Install` section): all that Ignition's
    unit rules read of a unit's text."""
    error, options = check_unit_contents(contents)
    return error, any(option.section == "Install" for option in options)


def clear_cache() -> None:
    """Empty the unit memos (see ignition/rules/caches.py)."""
    _check_unit_contents_cached.cache_clear()
