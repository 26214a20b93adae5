"""Data URL checks as Ignition runs them (vincent-petithory/dataurl `DecodeString`): lexer, then decoding.

`check_data_url(url)` returns the library's error text or None. Decoding is only checked, never kept: the
encoder/decoder the rest of the project uses is ignition/dataurl.py.
"""

from __future__ import annotations

import re

_TSPECIALS = frozenset('()<>@,;:\\"/[]?=')
_URL_UNWISE = frozenset(' <>#"{}|\\^[]`')
_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_HEX = frozenset("0123456789abcdefABCDEF")
# Fast paths for the common shapes; anything else takes the exact character-by-character route.
_B64_OK = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_HEADER_OK = re.compile(
    r"data:(?:(?:text|image|audio|video|application|message|multipart)[A-Za-z0-9.+-]*/[A-Za-z0-9.+-]+)?"
    r"(?:;[A-Za-z0-9.+-]+=[A-Za-z0-9.+-]+)*(;base64)?,"
)
# (runs of URL characters between escapes: the language of `(?:[chars]|%XX)*`, matched in a third less time)
_URL_CHARS = r"[!$&'()*+,\-./0-9:;=?@A-Z_a-z~]*"
_ASCII_OK = re.compile(rf"{_URL_CHARS}(?:%[0-9A-Fa-f]{{2}}{_URL_CHARS})*")


def _token(c: str) -> bool:
    o = ord(c)
    return 0x20 < o < 0x7F and c not in _TSPECIALS


def _url_char(c: str) -> bool:
    o = ord(c)
    return o < 0x80 and o > 0x1F and o != 0x7F and c not in _URL_UNWISE


class _Lex:
    """The dataurl lexer's state machine, reduced to "where does the data start, is it base64, first error"."""

    def __init__(self, s: str) -> None:
        self.s = s
        self.pos = 0
        self.start = 0
        self.base64 = False
        self.params: list[tuple[str, bool]] = []  # (raw value, quoted)

    def next(self) -> str:
        if self.pos >= len(self.s):
            return ""
        c = self.s[self.pos]
        self.pos += 1
        return c

    def run(self) -> str | None:
        """Lex up to the comma; returns an error or None (then `self.pos` is the start of the data)."""
        s = self.s
        if not s.startswith("data:"):
            return "missing data prefix"
        self.pos = self.start = 5
        c = self.next()
        if c == ";":
            self.pos -= 1
            return self._param_semicolon()
        if c == ",":
            return None
        if c == "":
            return "missing comma before data"
        if c in "xX":
            if self.next() == "-":
                return self._media_type(discrete=False)
            return self._media_type(discrete=True)
        if _token(c):
            return self._media_type(discrete=True)
        return "invalid character after data prefix"

    def _media_type(self, discrete: bool) -> str | None:
        while True:
            c = self.next()
            if c == "/":
                typ = self.s[self.start : self.pos - 1]
                if discrete and not typ.startswith(("text", "image", "audio", "video", "application", "message", "multipart")):
                    return "invalid media type"
                break
            if c == "":
                return "missing media type slash"
            if not _token(c):
                return "invalid character for media type"
        while True:
            c = self.next()
            if c in (";", ","):
                self.pos -= 1
                break
            if c == "":
                return "incomplete media type"
            if not _token(c):
                return "invalid character for media subtype"
        return self._after_value()

    def _after_value(self) -> str | None:
        c = self.next()
        if c == ";":
            self.pos -= 1
            return self._param_semicolon()
        if c == ",":
            return None
        if c == "":
            return "missing comma before data"
        return "expected semicolon or comma"

    def _param_semicolon(self) -> str | None:
        self.pos += 1
        self.start = self.pos
        c = self.next()
        if c == "" or c in "=,":
            return "unterminated parameter sequence"
        if not _token(c):
            return "invalid character for parameter attribute"
        self.pos -= 1
        while True:
            c = self.next()
            if c == "=":
                break
            if c == ",":
                attr = self.s[self.start : self.pos - 1]
                if attr != "base64":
                    return f"expected base64, got {attr}"
                self.base64 = True
                return None
            if c == "":
                return "unterminated parameter sequence"
            if not _token(c):
                return "invalid character for parameter attribute"
        c = self.next()
        if c == '"':
            begin = self.pos
            while True:
                c = self.next()
                if c == "":
                    return "unclosed quoted string"
                if c == "\\":
                    e = self.next()
                    if e == "":
                        return "unexpected eof"
                    if ord(e) > 0x7F:
                        return "invalid escaped character"
                    continue
                if c == '"':
                    self.params.append((self.s[begin : self.pos - 1], True))
                    break
                if ord(c) > 0x7F:
                    return "invalid character for parameter value"
            return self._after_value()
        if c == "":
            return "missing comma before data"
        if not _token(c):
            return "invalid character for parameter value"
        begin = self.pos - 1
        while True:
            c = self.next()
            if c in (";", ","):
                self.pos -= 1
                self.params.append((self.s[begin : self.pos], False))
                return self._after_value()
            if c == "":
                return "missing comma before data"
            if not _token(c):
                return "invalid character for parameter value"


def rfc2396_unescape_error(s: str) -> str | None:
    """dataurl.Unescape's error for percent-encoded text, or None."""
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if ord(c) > 0x7F:
            return "rfc2396: non-ASCII char detected"
        if c == "%":
            for k in (1, 2):
                if i + k >= n:
                    return "rfc2396: unexpected end of unescape sequence"
                if s[i + k] not in _HEX:
                    return "rfc2396: invalid char 0x25 in unescape sequence"
            i += 3
            continue
        i += 1
    return None


def go_base64_error(src: str) -> str | None:
    """Go's `base64.StdEncoding.DecodeString` error ("illegal base64 data at input byte N"), or None."""
    si, n = 0, len(src)
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return f"illegal base64 data at input byte {si - j}"
            ch = src[si]
            si += 1
            if ch in _B64:
                j += 1
                continue
            if ch in "\r\n":
                continue
            if ch != "=":
                return f"illegal base64 data at input byte {si - 1}"
            if j in (0, 1):
                return f"illegal base64 data at input byte {si - 1}"
            if j == 2:
                while si < n and src[si] in "\r\n":
                    si += 1
                if si == n:
                    return f"illegal base64 data at input byte {n}"
                if src[si] != "=":
                    return f"illegal base64 data at input byte {si - 1}"
                si += 1
            while si < n and src[si] in "\r\n":
                si += 1
            if si < n:
                return f"illegal base64 data at input byte {si}"
            return None


def check_data_url(url: str) -> str | None:
    """The error dataurl.DecodeString gives for `url`, or None when it decodes."""
    fast = _HEADER_OK.match(url)
    if fast is not None:
        data = url[fast.end() :]
        if (_B64_OK if fast.group(1) else _ASCII_OK).fullmatch(data):
            return None
    lex = _Lex(url)
    err = lex.run()
    if err is not None:
        return err
    for value, quoted in lex.params:
        if not quoted:
            e = rfc2396_unescape_error(value)
            if e:
                return e
    data = url[lex.pos :]
    if (_B64_OK if lex.base64 else _ASCII_OK).fullmatch(data):
        return None
    if lex.base64:
        for ch in data:
            if ch not in _B64 and ch != "=" and ch not in "\r\n":
                return "invalid data character"
        return go_base64_error(data)
    for ch in data:
        if not _url_char(ch):
            return "invalid data character"
    return rfc2396_unescape_error(data)
