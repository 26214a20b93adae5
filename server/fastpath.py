"""A fast path for the one request that boot storms make: `GET|HEAD /config/<pool>` over keep-alive HTTP/1.1.

`FastRequestHandler` is aiohttp's connection protocol with one addition. While a connection has only
sent plain config requests, their heads are parsed here (a few bytes operations), answered by the same
`ConfigResponder` the aiohttp route uses, and the precomputed bytes are written straight to the
transport. That skips aiohttp's request/response objects, routing and middleware, which cost several
times more than the answer itself (bench/README.md).

The first thing that is not such a request (another route or method, a body, a query string or
percent-escape in the target, HTTP/1.0, an Upgrade/Expect header, a malformed or over-long line, a
header the bounds refuse) hands the connection, with every byte not yet answered, to aiohttp for
good, so ordering is kept and aiohttp's own rules and errors apply from there on.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from email.utils import formatdate
from http import HTTPStatus
from typing import Any

from aiohttp.web_protocol import RequestHandler

from server.accesslog import entry_json
from server.respond import Answer, ConfigResponder
from server.settings import Limits

_PREFIXES = (b"GET /config/", b"HEAD /config/")
_POOL_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789-.")
_REASONS = {s.value: s.phrase for s in HTTPStatus}


class _Date:
    """The Date header value, formatted once per second."""

    def __init__(self) -> None:
        self._second = -1
        self._value = ""

    def __call__(self) -> str:
        now = int(time.time())
        if now != self._second:
            self._second = now
            self._value = formatdate(now, usegmt=True)
        return self._value


_date = _Date()


_HEADER = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[ \t]*[^\x00-\x08\x0a-\x1f\x7f]*\r\n"
_BLOCK_RE = re.compile(rb"(?:" + _HEADER + rb")*")
_FIELD_RE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([^\x00-\x08\x0a-\x1f\x7f]*?)[ \t]*\r\n")
_REFUSE = frozenset(("content-length", "transfer-encoding", "upgrade", "expect"))


def parse_head(head: bytes, limits: Limits) -> tuple[str, str, dict[str, str], bool] | None:
    """(method, pool, headers lower-cased, close?) of a plain config request head; None: not for us."""
    line_end = head.find(b"\r\n")
    request_line = head if line_end < 0 else head[:line_end]
    if len(request_line) > limits.max_line_size:
        return None
    parts = request_line.split(b" ")
    if len(parts) != 3 or parts[2] != b"HTTP/1.1" or parts[0] not in (b"GET", b"HEAD"):
        return None
    target = parts[1]
    if not target.startswith(b"/config/"):
        return None
    pool = target[8:]
    if not pool or not _POOL_CHARS.issuperset(pool):
        return None
    block = b"" if line_end < 0 else head[line_end + 2:] + b"\r\n"
    if not _BLOCK_RE.fullmatch(block):
        return None  # a line aiohttp must judge (folding, bad name, control character)
    fields = _FIELD_RE.findall(block)
    if len(fields) > limits.max_headers:
        return None
    if len(block) > limits.max_field_size and any(len(n) + len(v) + 2 > limits.max_field_size for n, v in fields):
        return None
    headers = {n.decode("latin-1").lower(): v.decode("latin-1") for n, v in fields}
    if len(headers) != len(fields):  # repeated names: join them, as aiohttp's getall would
        headers = {}
        for n, v in fields:
            k = n.decode("latin-1").lower()
            text = v.decode("latin-1")
            headers[k] = f"{headers[k]}, {text}" if k in headers else text
    if not _REFUSE.isdisjoint(headers):
        if headers.get("content-length") != "0" or not _REFUSE.isdisjoint(set(headers) - {"content-length"}):
            return None
    connection = headers.get("connection")
    close = connection is not None and "close" in connection.lower()
    return parts[0].decode(), pool.decode(), headers, close


def serialize(answer: Answer, *, head_only: bool, close: bool) -> tuple[bytes, bytes]:
    """(status line + headers, body) of an answer, as aiohttp would write them."""
    lines = [f"HTTP/1.1 {answer.status} {_REASONS.get(answer.status, '')}"]
    lines.extend(f"{k}: {v}" for k, v in answer.headers.items())
    if answer.status != 304:
        lines.append(f"Content-Length: {len(answer.body)}")
    lines.append(f"Date: {_date()}")
    lines.append("Server: mco")
    if close:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head, (b"" if head_only or answer.status == 304 else answer.body)


class FastRequestHandler(RequestHandler):
    """aiohttp's protocol, answering plain config requests itself (module docstring)."""

    def __init__(self, manager: Any, *, responder: ConfigResponder, limits: Limits,
                 access_logger: logging.Logger | None, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._fast_responder = responder
        self._fast_limits = limits
        self._fast_log = access_logger if access_logger is not None and access_logger.isEnabledFor(logging.INFO) \
            else None
        self._fast_on = True
        self._fast_buf = b""
        self._fast_waiting = False
        self._fast_peer: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        self._fast_peer = peer[0] if isinstance(peer, tuple | list) and peer else None

    def data_received(self, data: bytes) -> None:
        if self._fast_on:
            data = self._fast_feed(self._fast_buf + data if self._fast_buf else data)
            if not data:
                return
        super().data_received(data)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._fast_waiting and self.transport is not None:
            self._fast_waiting = False
            self.transport.resume_reading()
            pending, self._fast_buf = self._fast_buf, b""
            if pending:
                self.data_received(pending)

    def _give_up(self, buf: bytes) -> bytes:
        self._fast_on = False
        self._fast_buf = b""
        return buf

    def _fast_feed(self, buf: bytes) -> bytes:
        """Answer the plain config requests at the start of `buf`; return what aiohttp must handle."""
        transport = self.transport
        if transport is None or self._force_close or self._close:
            return b""
        limits = self._fast_limits
        while buf:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                probe = buf[:13]
                if (not any(p.startswith(probe) or probe.startswith(p) for p in _PREFIXES)
                        or b"\n\n" in buf or len(buf) > limits.max_line_size + limits.max_field_size * 4):
                    return self._give_up(buf)
                self._fast_buf = buf  # wait for the rest of the head
                return b""
            if self.writing_paused:  # the client is not reading: stop until it drains
                self._fast_buf = buf
                self._fast_waiting = True
                transport.pause_reading()
                return b""
            parsed = parse_head(buf[:end], limits)
            if parsed is None:
                return self._give_up(buf)
            method, pool, headers, close = parsed
            started = time.perf_counter() if self._fast_log is not None else 0.0
            answer = self._fast_responder.answer(method, pool, headers.get, self._fast_peer)
            head, body = serialize(answer, head_only=method == "HEAD", close=close)
            if body:
                transport.write(head + body if len(body) < 16384 else head)
                if len(body) >= 16384:
                    transport.write(body)
            else:
                transport.write(head)
            if self._fast_log is not None:
                self._fast_log.info(entry_json(
                    remote=self._fast_peer, method=method, path=f"/config/{pool}", status=answer.status,
                    nbytes=len(body), seconds=time.perf_counter() - started, ua=headers.get("user-agent"),
                    accept=headers.get("accept"), noted=answer.note))
            buf = buf[end + 4:]
            if self._keepalive_timeout > 0:
                self._next_keepalive_close_time = self._loop.time() + self._keepalive_timeout
            if close:
                self._fast_buf = b""
                self._fast_on = False
                transport.close()
                return b""
        self._fast_buf = b""
        return b""


def handler_factory(server: Any, *, loop: asyncio.AbstractEventLoop, responder: ConfigResponder, limits: Limits,
                    access_logger: logging.Logger | None, **kwargs: Any) -> Callable[[], FastRequestHandler]:
    """The protocol factory for loop.create_server (aiohttp's Server is the manager of each connection)."""
    def make() -> FastRequestHandler:
        return FastRequestHandler(server, loop=loop, responder=responder, limits=limits,
                                  access_logger=access_logger, **kwargs)
    return make
