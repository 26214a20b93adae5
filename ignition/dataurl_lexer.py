"""The lexer of github.com/vincent-petithory/dataurl, the library Ignition decodes `data:` URLs with (ported).

It produces (kind, value) items; an ("error", text) item is always last. The parser (ignition/dataurl.py)
consumes items in order, so a parser error on an earlier item wins over a later lexer error, as with the Go
goroutine + channel pair.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_EOF = -1
_MAX_ASCII = 0x7F
_TSPECIALS = frozenset('()<>@,;:\\"/[]?=')
_ASCII_SPACE = frozenset("\t\n\v\f\r ")
# Characters lexData rejects (isURLCharRune is false): controls, delims, "unwise" and non-ASCII.
BAD_URL_CHAR = re.compile(r'[\x00-\x1f\x7f <>#"{}|\\^\[\]`]|[^\x00-\x7f]')
BAD_BASE64_CHAR = re.compile(r"[^A-Za-z0-9+/=\n]")


def _is_token(r: int) -> bool:
    if r < 0 or r > _MAX_ASCII:
        return False
    c = chr(r)
    return not (r <= 0x1F or r == 0x7F) and c not in _ASCII_SPACE and c not in _TSPECIALS


class Lexer:
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
        if r in (ord(";"), ord(","), _EOF):  # no media type: Go's lexAfterDataPrefix answers these as below
            self.backup()
            return self.after_media_subtype
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
        bad = (BAD_BASE64_CHAR if self.seen_base64 else BAD_URL_CHAR).search(rest)
        if bad is not None:
            return self.errorf("invalid data character")
        self.pos = len(self.input)
        if self.pos > self.start:
            self.emit("data")
        self.emit("eof")
        return None
