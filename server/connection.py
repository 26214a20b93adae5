"""One client connection around aiohttp's public server: what a boot server needs that aiohttp lacks.

aiohttp's parser (llhttp) reads every byte a client sends and its application serves every route; this
module parses no HTTP and only uses aiohttp's public API (`web.Server` as the protocol factory, its
`request_factory` and `logger`, `on_response_prepare`):

- A request-read deadline. `Connection` sits between the transport and aiohttp's protocol (it is the
  transport's protocol, so `request.transport.get_protocol()` finds it): bytes arriving while no request
  is being handled start a deadline of `read_timeout` seconds, which the next request's start stops
  (aiohttp makes the request object once the head is parsed: `request_factory`), so a client sending one
  byte a second is cut long before the keep-alive timeout. Bytes that arrived while a request was
  handled restart it once its response begins (`request_done`, from app.py's `on_response_prepare`
  hook). Bodies are bounded by the handlers' own read deadline (request_body.py).
- HTTP versions other than 1.0/1.1 get 505: the request factory marks such a request (read as 1.1, so
  the answer never says `HTTP/2.0 200`, and closing, so a keep-alive request needs no lookup to be
  told apart: `refused_version`) and app.py's middleware answers it (`refuse_version`) before any
  handler runs.
- A head llhttp refused gets a 400 JSON body naming the request head, and one log line without header
  values: never a traceback, never a token echoed from a bad header line. aiohttp reports the refusal
  to the server's logger before answering; `MalformedRequests`, a filter on that logger, writes the
  fixed answer and closes the connection, so aiohttp's own answer (which quotes the bad line) finds it
  closed.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from email.utils import formatdate
from typing import Any

from aiohttp import HttpVersion10, HttpVersion11, web
from aiohttp.http import HttpProcessingError
from aiohttp.web import RequestPayloadError

from server.errors import ServerError
from server.respond import JSON, SERVER_NAME, error_body

log = logging.getLogger("mco.server")
HTTP_LOGGER = "mco.http"  # the logger handed to aiohttp's server (MalformedRequests filters it)
_VERSIONS = (HttpVersion10, HttpVersion11)
REFUSED_VERSION: Any = web.RequestKey("refused-version", bool) if hasattr(web, "RequestKey") else "refused-version"

# What the client is told about a head llhttp refused: a fixed phrase per error class, never its text
# (aiohttp's messages quote the offending header line, which may hold a token). aiohttp exports only the base
# class, HttpProcessingError (`aiohttp.http`); its subclasses are matched by name along the MRO, so a renamed
# one falls back to the base's phrase instead of breaking the import.
_PHRASES: dict[str, str] = {
    "LineTooLong": "request line or header too long",
    "BadStatusLine": "malformed request line",
    "BadHttpMethod": "malformed request method",
    "InvalidHeader": "malformed header",
    "TransferEncodingError": "malformed transfer encoding",
    "ContentLengthError": "malformed content length",
    "ContentEncodingError": "malformed content encoding",
    "BadHttpMessage": "malformed request head",
}


def phrase(exc: BaseException | None) -> str:
    """The fixed description of a parse error (by class, most specific first)."""
    for cls in type(exc).__mro__ if exc is not None else ():
        found = _PHRASES.get(cls.__name__)
        if found is not None:
            return found
    return "malformed request"


class VersionNotSupported(ServerError):
    """The request line names an HTTP version other than 1.0 or 1.1."""

    message = "HTTP version not supported"


def _answer(status: int, reason: str, body: bytes) -> bytes:
    """A whole closing answer to a request aiohttp could not hand to the application."""
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {JSON}\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\nDate: {formatdate(usegmt=True)}\r\nServer: {SERVER_NAME}\r\n\r\n")
    return head.encode("latin-1") + body


class Connection(asyncio.Protocol):
    """The transport's protocol: forwards to aiohttp's, adds the read deadline and releases the admission.

    The deadline costs a request two attribute writes: `_since` holds when the awaited bytes began to
    arrive (None: nothing awaited), and one timer per connection, armed when bytes arrive and none is
    armed, checks it when it fires and re-arms for the remaining time only while something is awaited.
    """

    def __init__(self, inner: asyncio.Protocol, *, read_timeout: float,
                 on_lost: Callable[[], None] | None = None) -> None:
        self.inner = inner
        self.peer: str | None = None
        self._read_timeout = read_timeout
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._since: float | None = None
        self._transport: asyncio.Transport | None = None
        self._on_lost = on_lost
        self._active = False  # a request is being handled (aiohttp handles one at a time)
        self._arrived = False  # bytes arrived while a request was being handled (a pipelined head?)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        peer = transport.get_extra_info("peername")
        self.peer = peer[0] if isinstance(peer, tuple | list) and peer else None
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._active:
            self._arrived = True
        elif self._since is None:
            self._await_head()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._since = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.inner.connection_lost(exc)
        if self._on_lost is not None:
            on_lost, self._on_lost = self._on_lost, None
            on_lost()

    # -- the read deadline ---------------------------------------------------------------------------
    def request_started(self) -> None:
        """A request reached the application: its head arrived in time."""
        self._active = True
        self._arrived = False
        self._since = None

    def request_finished(self, request: web.BaseRequest) -> None:
        """Bytes that arrived meanwhile (not this request's body) may be a partial next head: time it."""
        self._active = False
        if self._arrived:
            self._arrived = False
            if not request.body_exists and self._since is None:
                self._await_head()

    def _await_head(self) -> None:
        if self._read_timeout <= 0:
            return
        now = self._loop.time()
        self._since = now
        if self._timer is None:
            self._timer = self._loop.call_at(now + self._read_timeout, self._check)

    def _check(self) -> None:
        self._timer = None
        if self._since is None:
            return  # nothing awaited: the next bytes arm the timer again
        due = self._since + self._read_timeout
        if self._loop.time() < due:
            self._timer = self._loop.call_at(due, self._check)
            return
        log.warning("request from %s not received within %g s: connection closed", self.peer, self._read_timeout)
        if self._transport is not None:
            self._transport.abort()


def refused_version(request: web.BaseRequest) -> bool:
    """Whether the factory marked this request for its HTTP version. Such a request is marked closing too, so a
    keep-alive one (nearly every request) is told apart without looking up an absent key (a KeyError raised and
    caught inside `Mapping.get`: ~0.5 us)."""
    return not request.keep_alive and bool(request.get(REFUSED_VERSION))


def refuse_version(request: web.BaseRequest) -> web.Response | None:
    """The 505 answer to a request the factory marked for its HTTP version, else None."""
    if not refused_version(request):
        return None
    log.warning("malformed request from %s: %s (HTTP 505)", request.remote, VersionNotSupported.message)
    response = web.Response(status=505, body=error_body("bad-request", VersionNotSupported.message, "request line"),
                            content_type=JSON)
    response.force_close()
    return response


def request_done(request: web.BaseRequest) -> None:
    """Called as the response is prepared (app.py): the handler is done (the read deadline may restart)."""
    transport = request.transport
    if transport is not None:
        connection = transport.get_protocol()
        if type(connection) is Connection:  # not so under a test client without run.py's listeners
            connection.request_finished(request)


_CURRENT: contextvars.ContextVar[web.BaseRequest | None] = contextvars.ContextVar("mco_request", default=None)


def request_factory(make: Callable[..., web.BaseRequest]) -> Callable[..., web.BaseRequest]:
    """Wrap `web.Server.request_factory`: tell the connection a head arrived, remember the request for the log
    filter, mark odd HTTP versions.

    aiohttp calls the factory right before it starts the task handling that request (a parse error's
    placeholder included), so the task, and `MalformedRequests` running inside it, sees it in `_CURRENT`.
    """
    def factory(message: Any, *args: Any) -> web.BaseRequest:  # (aiohttp's other arguments passed on as they come)
        version = message.version
        refused = version is not HttpVersion11 and version not in _VERSIONS  # llhttp hands aiohttp's constants
        if refused:
            # answered as HTTP/1.1 (never echoed), and the connection closed after the answer
            message = message._replace(version=HttpVersion11, should_close=True)
        request = make(message, *args)
        if refused:
            request[REFUSED_VERSION] = True
        _CURRENT.set(request)
        transport = request.transport
        if transport is not None:
            connection = transport.get_protocol()
            if type(connection) is Connection:
                connection.request_started()
        return request
    return factory


class MalformedRequests(logging.Filter):
    """On aiohttp's server logger: a refused head or body becomes one line and a fixed 400 answer.

    Why it exists: a head llhttp refuses never reaches the application (no middleware or handler sees it),
    and aiohttp's own 400 quotes the offending line, which may carry a token, and logs a traceback. The
    one public seam aiohttp offers there is the `logger` its server reports the refusal to (before it
    answers); this filter on that logger answers first. It uses only public API: the logging record,
    `HttpProcessingError` (`aiohttp.http`), `RequestPayloadError` (`aiohttp.web`), and the current
    request's `transport` and `writer.output_size` (`aiohttp.abc.AbstractStreamWriter`).

    A parse error (`HttpProcessingError`) reported while a request is current is a head llhttp refused:
    the fixed JSON answer naming the request head is written and the connection closed. A body refused
    while aiohttp drains it after our answer (`RequestPayloadError`) is only logged. Anything else is a
    bug of ours and keeps its traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, RequestPayloadError):
            self._one_line(record, "malformed request body from %s: %s (%s)",
                           (self._remote(), phrase(exc.__cause__ or exc), type(exc).__name__))
            return True
        if not isinstance(exc, HttpProcessingError):
            return True
        what = phrase(exc)
        request = _CURRENT.get()
        self._one_line(record, "malformed request from %s: %s (%s, HTTP 400)",
                       (self._remote(), what, type(exc).__name__))
        transport = request.transport if request is not None else None
        if request is not None and transport is not None and not transport.is_closing() \
                and not request.writer.output_size:  # never behind an answer already begun
            transport.write(_answer(400, "Bad Request", error_body("bad-request", what, "request head")))
            transport.close()
        return True

    @staticmethod
    def _remote() -> str | None:
        request = _CURRENT.get()
        return request.remote if request is not None else None

    @staticmethod
    def _one_line(record: logging.LogRecord, msg: str, args: tuple[Any, ...]) -> None:
        record.msg, record.args = msg, args
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"


def http_logger() -> logging.Logger:
    """The logger handed to aiohttp's server, with `MalformedRequests` on it (every level reaches it)."""
    logger = logging.getLogger(HTTP_LOGGER)
    if not any(isinstance(f, MalformedRequests) for f in logger.filters):
        logger.addFilter(MalformedRequests())
    logger.setLevel(logging.DEBUG)  # a refusal logged at debug level must still be answered by the filter
    return logger
