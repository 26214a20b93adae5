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
from urllib.parse import unquote_to_bytes

from ignition.dataurl_lexer import BAD_BASE64_CHAR, BAD_URL_CHAR, Lexer
from ignition.errors import IgnitionError

__all__ = [
    "BAD_ESCAPE",
    "COMMON_DATA_URL",
    "DATA_URL_LINES",
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

_UNRESERVED = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()")
# The two shapes nearly every valid data URL has, in one regex (a subset of what the lexer and the decoders
# accept): `data:`, the common media type and parameters, then `;base64,` and padded base64, or `,` and URL
# characters with `%XX` escapes (runs of URL characters between escapes: the same language, matched in a third
# less time). A URL it matches whole decodes, and Go's url.Parse reads it as an opaque `data` URL (no `#`, no
# control character, no `/` after the scheme): every spec version accepts it as a source (rules/urls.py).
_URL_CHARS = r"[!$&'()*+,\-./0-9:;=?@A-Z_a-z~]*"
COMMON_DATA_URL = re.compile(
    r"data:(?:(?:text|image|audio|video|application|message|multipart)[A-Za-z0-9.+-]*/[A-Za-z0-9.+-]+)?"
    r"(?:;[A-Za-z0-9.+-]+=[A-Za-z0-9.+-]+)*"
    r"(?:;base64,(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
    rf"|,{_URL_CHARS}(?:%[0-9A-Fa-f]{{2}}{_URL_CHARS})*)"
)
# The same language for a list of `data:,` URLs (no media type, URL characters and escapes) joined by newlines,
# tested in one pass: each line `data:,` and URL characters or `%`, and no `%` without two hex digits after it.
# (The caller checks that the newlines are exactly the joins: a newline is no URL character.)
DATA_URL_LINES = re.compile(r"(?:data:,[!$&'()*+,\-./0-9:;=?@A-Z_a-z~%]*+\n)*+data:,[!$&'()*+,\-./0-9:;=?@A-Z_a-z~%]*+")
BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
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
        if BAD_URL_CHAR.search(data):
            raise DataURLError("invalid data character")
        return DataURL(data=_unescape(data))
    if url.startswith("data:;base64,"):
        data = url[13:]
        if BAD_BASE64_CHAR.search(data):
            raise DataURLError("invalid data character")
        return DataURL(params={"charset": "US-ASCII"}, base64=True, data=go_base64_decode(data))
    typ, subtype = "text", "plain"
    params: dict[str, str] = {"charset": "US-ASCII"}
    is_base64 = False
    reader: Callable[[str], bytes] | None = None
    decoded: bytes | None = None
    attr = ""
    unquote_next = False
    for kind, value in Lexer(url).run():
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
    """Ignition's error text for a bad data URL, or None when it decodes (validation's data URL rule)."""
    if COMMON_DATA_URL.fullmatch(url) is not None:
        return None  # (it decodes: no need to build the bytes)
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
