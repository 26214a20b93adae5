"""RFC 2397 `data:` URLs exactly as Ignition reads them, plus the encoder and gzip helpers the sugar uses.

Where it sits: Ignition decodes every `data:` source with github.com/vincent-petithory/dataurl and
passes that library's error text through as the validation error. This module reproduces its lexer
and parser (same accepted inputs, same error strings, and Go's `encoding/base64` CorruptInputError
offsets), so a config that Ignition refuses is refused here with the same words.

The grammar, as that lexer implements it:
    data:[<type>/<subtype>][;attr=value | ;attr="quoted"]*[;base64],<data>
- the comma is mandatory; the media type is optional and ignored by Ignition;
- plain data may hold only URL characters (no space, control, non-ASCII, `<>#"{}|\\^[]` or backtick)
  and `%XX` escapes, decoded byte-wise; `+` stays `+`;
- base64 data is Go's StdEncoding (padding required), newlines tolerated.
"""

from __future__ import annotations

import binascii
import gzip
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_to_bytes

from ignition.errors import IgnitionError

__all__ = [
    "DataURL",
    "DataURLError",
    "data_url_problem",
    "decode_data_url",
    "encode_data_url",
    "escape",
    "gunzip_contents",
    "gzip_contents",
    "parse_data_url",
]

_EOF = -1
_MAX_ASCII = 0x7F
_TSPECIALS = frozenset('()<>@,;:\\"/[]?=')
_ASCII_SPACE = frozenset("\t\n\v\f\r ")
_UNRESERVED = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()")
# Characters lexData rejects (isURLCharRune is false): controls, delims, "unwise" and non-ASCII.
_BAD_URL_CHAR = re.compile(r'[\x00-\x1f\x7f <>#"{}|\\^\[\]`]|[^\x00-\x7f]')
_BAD_BASE64_CHAR = re.compile(r"[^A-Za-z0-9+/=\n]")
_HEX = frozenset("0123456789abcdefABCDEF")


class DataURLError(IgnitionError):
    """A `data:` URL Ignition would refuse; `message` is the Go library's own text."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message, path=path)
        self.message = message


@dataclass(frozen=True)
class DataURL:
    """A decoded data URL: media type and parameters (informational only) and the payload bytes."""

    type: str = "text"
    subtype: str = "plain"
    params: dict[str, str] = field(default_factory=lambda: {"charset": "US-ASCII"})
    base64: bool = False
    data: bytes = b""

    @property
    def content_type(self) -> str:
        """`type/subtype`, e.g. `text/plain`."""
        return f"{self.type}/{self.subtype}"


# ---------------------------------------------------------------------------------------------------
# Lexer: a port of the library's state machine. It produces (kind, value) items; an ("error", text)
# item is always last. The parser consumes items in order, so a parser error on an earlier item wins
# over a later lexer error, as with the Go goroutine + channel pair.


def _is_token(r: int) -> bool:
    if r < 0 or r > _MAX_ASCII:
        return False
    c = chr(r)
    return not (r <= 0x1F or r == 0x7F) and c not in _ASCII_SPACE and c not in _TSPECIALS


class _Lexer:
    def __init__(self, text: str) -> None:
        self.input = text
        self.start = 0
        self.pos = 0
        self.width = 0
        self.seen_base64 = False
        self.items: list[tuple[str, str]] = []

    def run(self) -> list[tuple[str, str]]:
        state: Callable[[], object] | None = self.before_data_prefix
        while state is not None:
            state = state()  # type: ignore[assignment]
        return self.items

    def emit(self, kind: str) -> None:
        self.items.append((kind, self.input[self.start : self.pos]))
        self.start = self.pos

    def next(self) -> int:
        if self.pos >= len(self.input):
            self.width = 0
            return _EOF
        self.width = 1
        self.pos += 1
        return ord(self.input[self.pos - 1])

    def backup(self) -> None:
        self.pos -= self.width

    def errorf(self, message: str) -> Any:
        """Append the error item; its None return ends the state machine (Go's errorf)."""
        self.items.append(("error", message))
        return None

    # states -------------------------------------------------------------------------------------
    def before_data_prefix(self) -> object:
        if self.input.startswith("data:", self.pos):
            self.pos += len("data:")
            self.emit("prefix")
            return self.after_data_prefix
        return self.errorf("missing data prefix")

    def after_data_prefix(self) -> object:
        r = self.next()
        if r == ord(";"):
            self.backup()
            return self.param_semicolon
        if r == ord(","):
            self.backup()
            return self.data_comma
        if r == _EOF:
            return self.errorf("missing comma before data")
        if r in (ord("x"), ord("X")):
            if self.next() == ord("-"):
                return self.x_token_media_type
            return self.in_discrete_media_type
        if _is_token(r):
            return self.in_discrete_media_type
        return self.errorf("invalid character after data prefix")

    def x_token_media_type(self) -> object:
        while True:
            r = self.next()
            if r == ord("/"):
                self.backup()
                return self.media_type
            if r == _EOF:
                return self.errorf("missing media type slash")
            if not _is_token(r):
                return self.errorf("invalid character for media type")

    def in_discrete_media_type(self) -> object:
        while True:
            r = self.next()
            if r == ord("/"):
                self.backup()
                typ = self.input[self.start : self.pos]
                if not typ.startswith(
                    ("text", "image", "audio", "video", "application", "message", "multipart")
                ):
                    return self.errorf("invalid media type")
                return self.media_type
            if r == _EOF:
                return self.errorf("missing media type slash")
            if not _is_token(r):
                return self.errorf("invalid character for media type")

    def media_type(self) -> object:
        if self.pos > self.start:
            self.emit("type")
        self.next()
        self.emit("sep")
        return self.after_media_sep

    def after_media_sep(self) -> object:
        while True:
            r = self.next()
            if r in (ord(";"), ord(",")):
                self.backup()
                if self.pos > self.start:
                    self.emit("subtype")
                return self.after_media_subtype
            if r == _EOF:
                return self.errorf("incomplete media type")
            if not _is_token(r):
                return self.errorf("invalid character for media subtype")

    def after_media_subtype(self) -> object:
        r = self.next()
        if r == ord(";"):
            self.backup()
            return self.param_semicolon
        if r == ord(","):
            self.backup()
            return self.data_comma
        if r == _EOF:
            return self.errorf("missing comma before data")
        return self.errorf("expected semicolon or comma")

    def param_semicolon(self) -> object:
        self.next()
        self.emit("semicolon")
        r = self.next()
        if r == _EOF or r in (ord("="), ord(",")):
            return self.errorf("unterminated parameter sequence")
        if _is_token(r):
            self.backup()
            return self.in_param_attr
        return self.errorf("invalid character for parameter attribute")

    def in_param_attr(self) -> object:
        while True:
            r = self.next()
            if r == ord("="):
                self.backup()
                if self.pos > self.start:
                    self.emit("attr")
                self.next()
                self.emit("equal")
                return self.after_param_equal
            if r == ord(","):
                self.backup()
                return self.base64_enc
            if r == _EOF:
                return self.errorf("unterminated parameter sequence")
            if not _is_token(r):
                return self.errorf("invalid character for parameter attribute")

    def base64_enc(self) -> object:
        if self.pos > self.start:
            value = self.input[self.start : self.pos]
            if value != "base64":
                return self.errorf(f"expected base64, got {value}")
            self.seen_base64 = True
            self.emit("base64")
        return self.data_comma

    def after_param_equal(self) -> object:
        r = self.next()
        if r == ord('"'):
            self.emit("lquote")
            return self.in_quoted_value
        if r == _EOF:
            return self.errorf("missing comma before data")
        if _is_token(r):
            return self.in_param_value
        return self.errorf("invalid character for parameter value")

    def in_quoted_value(self) -> object:
        while True:
            r = self.next()
            if r == _EOF:
                return self.errorf("unclosed quoted string")
            if r == ord("\\"):
                # lexEscapedChar: eof (-1) is <= MaxASCII in Go, so it falls back into the quoted string.
                r = self.next()
                if r > _MAX_ASCII:
                    return self.errorf("invalid escaped character")
                continue
            if r == ord('"'):
                self.backup()
                if self.pos > self.start:
                    self.emit("value")
                self.next()
                self.emit("rquote")
                return self.after_param_value
            if r > _MAX_ASCII:
                return self.errorf("invalid character for parameter value")

    def in_param_value(self) -> object:
        while True:
            r = self.next()
            if r in (ord(";"), ord(",")):
                self.backup()
                if self.pos > self.start:
                    self.emit("value")
                return self.after_param_value
            if r == _EOF:
                return self.errorf("missing comma before data")
            if not _is_token(r):
                return self.errorf("invalid character for parameter value")

    # After a parameter value the grammar is the same as after the media subtype (Go has two identical states).
    after_param_value = after_media_subtype

    def data_comma(self) -> object:
        self.next()
        self.emit("comma")
        # lexData / lexBase64Data scan to the end; a regex does the per-character check in one pass.
        rest = self.input[self.pos :]
        bad = (_BAD_BASE64_CHAR if self.seen_base64 else _BAD_URL_CHAR).search(rest)
        if bad is not None:
            return self.errorf("invalid data character")
        self.pos = len(self.input)
        if self.pos > self.start:
            self.emit("data")
        self.emit("eof")
        return None


# ---------------------------------------------------------------------------------------------------
# Decoders the parser applies to parameter values and data.


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _unescape(text: str) -> bytes:
    """rfc2396 Unescape: `%XX` byte-wise, everything else verbatim (ASCII only)."""
    if not text.isascii():
        raise DataURLError("rfc2396: non-ASCII char detected")
    if "%" not in text:
        return text.encode("ascii")
    bad = _BAD_ESCAPE.search(text)
    if bad is not None:
        # Go reads the two digits one by one: a missing digit is "end", a non-hex one "invalid char"
        digits = text[bad.start() + 1 : bad.start() + 3]
        for i in range(2):
            if i >= len(digits):
                raise DataURLError("rfc2396: unexpected end of unescape sequence")
            if digits[i] not in _HEX:
                raise DataURLError("rfc2396: invalid char 0x25 in unescape sequence")
    return unquote_to_bytes(text)


_B64_ALPHABET = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}


def _corrupt(offset: int) -> DataURLError:
    return DataURLError(f"illegal base64 data at input byte {offset}")


def go_base64_decode(text: str) -> bytes:
    """Go's base64.StdEncoding.DecodeString: same accepted inputs and the same error offsets."""
    stripped = text.replace("\n", "").replace("\r", "")
    if len(stripped) % 4 == 0:
        try:
            return binascii.a2b_base64(stripped, strict_mode=True)
        except binascii.Error:
            pass
    return _go_base64_slow(text)


def _go_base64_slow(src: str) -> bytes:
    """Port of decodeQuantum's loop, used only to find Go's exact error (or accept what Go accepts)."""
    out = bytearray()
    si, n = 0, len(src)
    while si < n:
        dbuf = [0, 0, 0, 0]
        dlen = 4
        j = 0
        trailing_error: DataURLError | None = None
        while j < 4:
            if si == n:
                if j == 0:
                    return bytes(out)
                raise _corrupt(si - j)  # padding is required in StdEncoding
            ch = src[si]
            si += 1
            if ch in _B64_ALPHABET:
                dbuf[j] = _B64_ALPHABET[ch]
                j += 1
                continue
            if ch in "\n\r":
                continue
            if ch != "=":
                raise _corrupt(si - 1)
            if j in (0, 1):
                raise _corrupt(si - 1)
            if j == 2:
                while si < n and src[si] in "\n\r":
                    si += 1
                if si == n:
                    raise _corrupt(n)
                if src[si] != "=":
                    raise _corrupt(si - 1)
                si += 1
            while si < n and src[si] in "\n\r":
                si += 1
            if si < n:
                trailing_error = _corrupt(si)
            dlen = j
            break
        val = dbuf[0] << 18 | dbuf[1] << 12 | dbuf[2] << 6 | dbuf[3]
        chunk = bytes(((val >> 16) & 0xFF, (val >> 8) & 0xFF, val & 0xFF))
        out += chunk[: dlen - 1]
        if trailing_error is not None:
            raise trailing_error
    return bytes(out)


_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    '"': '"',
}


def _go_unquote(body: str) -> str:
    """strconv.Unquote of `"body"`: Go escape sequences; any syntax problem is `invalid syntax`."""
    syntax = DataURLError("invalid syntax")
    if "\n" in body:
        raise syntax
    if "\\" not in body:
        return body
    out = bytearray()
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8", "surrogateescape")
            i += 1
            continue
        if i + 1 >= n:
            raise syntax
        e = body[i + 1]
        i += 2
        if e in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[e].encode()
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits = body[i : i + width]
            if len(digits) != width or any(d not in _HEX for d in digits):
                raise syntax
            value = int(digits, 16)
            i += width
            if e == "x":
                out.append(value)
            else:
                if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                    raise syntax
                out += chr(value).encode("utf-8")
        elif e in "01234567":
            digits = body[i - 1 : i + 2]
            if len(digits) != 3 or any(d not in "01234567" for d in digits) or int(digits, 8) > 255:
                raise syntax
            out.append(int(digits, 8))
            i += 2
        else:
            raise syntax
    return out.decode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------------------------------
# Public API


def parse_data_url(url: str) -> DataURL:
    """Parse a data URL the way Ignition does; raises DataURLError with the Go library's message."""
    # The two shapes nearly every config uses, decided exactly as the lexer would decide them.
    if url.startswith("data:,"):
        data = url[6:]
        if _BAD_URL_CHAR.search(data):
            raise DataURLError("invalid data character")
        return DataURL(data=_unescape(data))
    if url.startswith("data:;base64,"):
        data = url[13:]
        if _BAD_BASE64_CHAR.search(data):
            raise DataURLError("invalid data character")
        return DataURL(params={"charset": "US-ASCII"}, base64=True, data=go_base64_decode(data))
    typ, subtype = "text", "plain"
    params: dict[str, str] = {"charset": "US-ASCII"}
    is_base64 = False
    reader: Callable[[str], bytes] | None = None
    decoded: bytes | None = None
    attr = ""
    unquote_next = False
    for kind, value in _Lexer(url).run():
        if kind == "error":
            raise DataURLError(value)
        if kind == "type":
            typ = value
            params.pop("charset", None)
        elif kind == "subtype":
            subtype = value
        elif kind == "attr":
            attr = value
        elif kind == "lquote":
            unquote_next = True
        elif kind == "value":
            if unquote_next:
                unquote_next = False
                params[attr] = _go_unquote(value)
            else:
                params[attr] = _unescape(value).decode("utf-8", "surrogateescape")
        elif kind == "base64":
            is_base64 = True
            reader = go_base64_decode
        elif kind == "comma":
            if reader is None:
                reader = _unescape
        elif kind == "data":
            assert reader is not None
            decoded = reader(value)
        elif kind == "eof":
            return DataURL(typ, subtype, params, is_base64, decoded if decoded is not None else b"")
    raise AssertionError("data URL lexer ended without EOF")  # pragma: no cover - the lexer always ends


def decode_data_url(url: str) -> bytes:
    """The payload of a data URL; raises DataURLError (Ignition's message) when Ignition would refuse it."""
    return parse_data_url(url).data


def data_url_problem(url: str) -> str | None:
    """Ignition's error text for a bad data URL, or None when it decodes (for validators)."""
    try:
        parse_data_url(url)
    except DataURLError as exc:
        return exc.message
    return None


def escape(data: bytes) -> str:
    """Percent-encode every byte outside RFC 2396's unreserved set, as `%XX` (two hex digits)."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in data)


def encode_data_url(data: bytes, *, mediatype: str = "", base64: bool | None = None) -> str:
    """A data URL for `data`: percent-encoded, base64, or (None) whichever is shorter, as Butane picks."""
    if base64 is False:
        return f"data:{mediatype}," + escape(data)
    b64 = f"data:{mediatype};base64," + binascii.b2a_base64(data, newline=False).decode("ascii")
    if base64 is True:
        return b64
    plain = f"data:{mediatype}," + escape(data)
    return b64 if len(b64) < len(plain) else plain


def gzip_contents(data: bytes) -> bytes:
    """gzip with a fixed header (mtime 0, no name) so the same input always gives the same bytes."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def gunzip_contents(data: bytes) -> bytes:
    """Decompress `compression: gzip` contents; raises DataURLError when the bytes are not gzip."""
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataURLError(f"invalid gzip contents: {exc}") from exc
