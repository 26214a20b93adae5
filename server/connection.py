"""One client connection: aiohttp's RequestHandler, plus what a boot server needs that aiohttp lacks.

Every byte a client sends is parsed by aiohttp's parser (llhttp); this module parses no HTTP. On top:

- Config answers without a request object. When the connection is idle and llhttp has produced a
  plain `GET|HEAD /config/<pool>` HTTP/1.1 message (no body, no upgrade, keep-alive), its already-parsed
  headers go to the same `ConfigResponder` the aiohttp route uses, and the answer's serialized bytes
  (server/answer_bytes.py, cached per snapshot) are written at once. Routing, middleware and
  aiohttp's request/response objects cost several times the answer itself (bench/README.md). Any
  other message, or one queued behind a request aiohttp is still handling, goes to aiohttp's own
  loop unchanged, so answers keep the order of requests. While the client does not read what it was
  sent, reading pauses and the queued requests wait for it to drain.
- A request-read deadline: a head (or a body) must arrive within `read_timeout` seconds of its first
  byte, so a client sending one byte a second is cut long before the keep-alive timeout.
- Malformed requests are answered 400 (505 for an HTTP version other than 1.0/1.1) with a JSON body
  naming the request head, and logged as one line without header values: never a traceback, never a
  token echoed from a bad header line.

It relies on aiohttp internals (the queue of parsed messages, the parser's message accounting, the
idle waiter), so pyproject.toml pins aiohttp to the tested minor release; tests/server/test_connection.py
fails if those internals change shape.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from aiohttp import http_exceptions, web
from aiohttp.http import HttpVersion10, HttpVersion11
from aiohttp.streams import EMPTY_PAYLOAD
from aiohttp.web_protocol import RequestHandler, RequestPayloadError, _ErrInfo

from server.answer_bytes import CONFIG_PREFIX, AnswerBytes
from server.errors import ServerError
from server.respond import JSON, error_body

log = logging.getLogger("mco.server")
_VERSIONS = (HttpVersion10, HttpVersion11)

# What the client is told about a head llhttp refused: a fixed phrase per error class, never its text
# (aiohttp's messages quote the offending header line, which may hold a token).
_PHRASES: dict[type[BaseException], str] = {
    http_exceptions.LineTooLong: "request line or header too long",
    http_exceptions.BadStatusLine: "malformed request line",
    http_exceptions.BadHttpMethod: "malformed request method",
    http_exceptions.InvalidHeader: "malformed header",
    http_exceptions.TransferEncodingError: "malformed transfer encoding",
    http_exceptions.ContentLengthError: "malformed content length",
    http_exceptions.ContentEncodingError: "malformed content encoding",
    http_exceptions.BadHttpMessage: "malformed request head",
}


def phrase(exc: BaseException | None) -> str:
    """The fixed description of a parse error (by class, most specific first)."""
    for cls in type(exc).__mro__ if exc is not None else ():
        found = _PHRASES.get(cls)
        if found is not None:
            return found
    return "malformed request"


class VersionNotSupported(http_exceptions.HttpProcessingError, ServerError):
    """The request line names an HTTP version other than 1.0 or 1.1."""

    code = 505
    message = "HTTP version not supported"


def _version_error() -> _ErrInfo:
    error = VersionNotSupported()
    return _ErrInfo(status=505, exc=error, message=error.message)


class ServerProtocol(RequestHandler):
    """aiohttp's connection protocol with cached config answers, a read deadline and quiet 400s."""

    def __init__(self, manager: Any, *, answers: AnswerBytes, read_timeout: float,
                 on_lost: Callable[[], None] | None = None, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._answers = answers
        self._read_timeout = read_timeout
        self._read_deadline: asyncio.TimerHandle | None = None
        self._body: Any = None  # the payload of the last request while its body is still arriving
        self._on_lost = on_lost
        self._peer: str | None = None
        self._plain = False
        self._raw: socket.socket | None = None  # a duplicate of the connection's descriptor, for sendmsg
        self._held = False  # cached answers wait for the client to read what it was sent (reading paused)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        self._peer = peer[0] if isinstance(peer, tuple | list) and peer else None
        self._plain = transport.get_extra_info("sslcontext") is None

    def connection_lost(self, exc: BaseException | None) -> None:
        self._stop_deadline()
        if self._raw is not None:
            self._raw.close()
            self._raw = None
        super().connection_lost(exc)
        if self._on_lost is not None:
            on_lost, self._on_lost = self._on_lost, None
            on_lost()

    # -- reading -------------------------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        waiter = self._waiter
        idle = waiter is not None and not waiter.done() and not self._messages
        queued = len(self._messages)
        self._waiter = None  # aiohttp wakes its loop below, after the cached answers are out
        try:
            super().data_received(data)
        finally:
            self._waiter = waiter
        messages = self._messages
        if len(messages) > queued:
            for i in range(queued, len(messages)):
                message, payload = messages[i]
                if not isinstance(message, _ErrInfo) and message.version not in _VERSIONS:
                    messages[i] = (_version_error(), payload)  # never answer `HTTP/2.0 200`
            self._track_body(messages[-1][1])
            if idle:
                self._answer_from_cache()
        elif data:
            self._track_body(None)
        if messages and not self._held and waiter is not None and not waiter.done():
            waiter.set_result(None)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._held and self.transport is not None:
            self._held = False
            self.transport.resume_reading()
            self._answer_from_cache()
            waiter = self._waiter
            if self._messages and not self._held and waiter is not None and not waiter.done():
                waiter.set_result(None)

    def _answer_from_cache(self) -> None:
        """Answer plain config requests at the head of the queue while nothing else is in flight."""
        transport = self.transport
        messages = self._messages
        answers = self._answers
        wrote = False
        while messages and transport is not None and not self._close and not self._force_close:
            if self.writing_paused:  # the client is not reading: stop reading too, go on once it drains
                self._held = True
                transport.pause_reading()
                break
            message, payload = messages[0]
            if (isinstance(message, _ErrInfo) or payload is not EMPTY_PAYLOAD or message.should_close
                    or message.upgrade or message.version is not HttpVersion11
                    or (method := message.method) not in ("GET", "HEAD")
                    or not (target := message.path).startswith(CONFIG_PREFIX)):
                break
            started = time.perf_counter() if answers.log is not None else 0.0
            entry = answers.entry(method, target, message.headers, message.raw_headers, self._peer)
            if entry is None:
                break
            messages.popleft()
            if self._parser is not None:
                self._parser.message_consumed()
            head = entry.before_date + answers.date() + entry.after_date
            if entry.body:
                self._write_large(transport, head, entry.body)
            else:
                transport.write(head)
            wrote = True
            if answers.log is not None:
                answers.log_answer(entry, method, message.headers, self._peer, started)
        if wrote and self._keepalive_timeout > 0:
            self._next_keepalive_close_time = self._loop.time() + self._keepalive_timeout

    def _write_large(self, transport: asyncio.Transport, head: bytes, body: bytes) -> None:
        """Head and a large body in one sendmsg (no copy, one syscall) when nothing is queued; else queue.

        Python 3.11's transport copies whatever the socket does not take at once into its buffer; a
        duplicate of the connection's descriptor lets the kernel take both parts straight from the
        cached bytes. Plain TCP only (TLS goes through the transport).
        """
        raw = self._raw
        if raw is None and self._plain and transport.get_write_buffer_size() == 0:
            sock = transport.get_extra_info("socket")
            if sock is not None:
                raw = self._raw = socket.socket(fileno=os.dup(sock.fileno()))
                raw.setblocking(False)
        sent = 0
        if raw is not None and transport.get_write_buffer_size() == 0 and not transport.is_closing():
            try:
                sent = raw.sendmsg((head, body))
            except OSError:
                sent = 0  # would block, or the connection failed: the transport meets it its own way
        if sent < len(head):
            transport.write(head[sent:] if sent else head)
            transport.write(body)
        elif sent < len(head) + len(body):
            transport.write(memoryview(body)[sent - len(head):])

    # -- the read deadline -----------------------------------------------------------------------------
    def _track_body(self, payload: Any) -> None:
        """Keep a deadline running while a head, or the body of the last request, is still arriving."""
        if payload is not None:  # a message was completed: its body (if any) may still be arriving
            self._stop_deadline()
            self._body = None if payload is EMPTY_PAYLOAD or payload.is_eof() else payload
            if self._body is not None:
                self._start_deadline()
            return
        if self._body is not None and self._body.is_eof():
            self._body = None  # that chunk ended the body; a next head restarts the deadline with its bytes
            self._stop_deadline()
            return
        self._start_deadline()

    def _start_deadline(self) -> None:
        if self._read_deadline is None and self._read_timeout > 0:
            self._read_deadline = self._loop.call_later(self._read_timeout, self._read_too_slow)

    def _stop_deadline(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _read_too_slow(self) -> None:
        self._read_deadline = None
        log.warning("request from %s not received within %g s: connection closed", self._peer,
                    self._read_timeout)
        self.force_close()

    # -- malformed requests ----------------------------------------------------------------------------
    def log_exception(self, *args: Any, **kw: Any) -> None:
        """A body llhttp or the decompressor refused, met again while aiohttp drains it after our 4xx
        answer: one line, no traceback. Anything else is a bug of ours and keeps its traceback."""
        exc = kw.get("exc_info")
        if isinstance(exc, RequestPayloadError | http_exceptions.HttpProcessingError):
            log.warning("malformed request body from %s: %s (%s)", self._peer, phrase(exc.__cause__ or exc),
                        type(exc).__name__)
            return
        super().log_exception(*args, **kw)

    def handle_error(self, request: Any, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """4xx/5xx for a request aiohttp could not parse or handle: JSON naming the head, one log line."""
        if status >= 500 and status != 505:
            return super().handle_error(request, status, exc, message)  # a bug of ours: keep the traceback
        what = phrase(exc) if status != 505 else VersionNotSupported.message
        log.warning("malformed request from %s: %s (%s, HTTP %d)", self._peer, what,
                    type(exc).__name__ if exc is not None else "-", status)
        response = web.Response(status=status, body=error_body("bad-request", what, "request head"),
                                content_type=JSON)
        response.force_close()
        return response
