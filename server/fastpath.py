"""A fast path for the one request that boot storms make: `GET|HEAD /config/<pool>` over keep-alive HTTP/1.1.

`FastRequestHandler` is aiohttp's connection protocol with one addition. While a connection has only
sent plain config requests, their heads are parsed here (a few bytes operations), answered by the same
`ConfigResponder` the aiohttp route uses, and the precomputed bytes are written straight to the
transport. That skips aiohttp's request/response objects, routing and middleware, which cost several
times more than the answer itself (bench/README.md). Serialized answers are cached by exact request
head (`AnswerCache`), and a large body leaves with its head in one `sendmsg` when nothing is queued.

The first thing that is not such a request (another route or method, a body, a query string or
percent-escape in the target, HTTP/1.0, an Upgrade/Expect header, a malformed or over-long line, a
header the bounds refuse) hands the connection, with every byte not yet answered, to aiohttp for
good, so ordering is kept and aiohttp's own rules and errors apply from there on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import time
from collections.abc import Callable
from email.utils import formatdate
from http import HTTPStatus
from typing import Any

from aiohttp.web_protocol import RequestHandler

from server.accesslog import entry_json
from server.respond import Answer, ConfigResponder
from server.settings import Limits

log = logging.getLogger("mco.server")
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


Cached = tuple[bytes, bytes, bool, str, str, Answer, "str | None", "str | None"]


class AnswerCache:
    """Serialized answers by exact request head, shared by all connections of a process.

    A fleet sends the same few heads (same Ignition build, same pool), so most requests cost a dict
    lookup. Entries are only valid for one snapshot generation, one store-error state and one second
    (the Date header); any change starts a new, empty cache. The client address is part of the key
    when CIDR rules exist. Size is bounded (cleared when full).
    """

    def __init__(self, state: Any, *, keyed_by_address: bool, limit: int = 1024) -> None:
        self.state = state
        self.keyed_by_address = keyed_by_address
        self.limit = limit
        self._marker: tuple[int, str | None, int] | None = None
        self._items: dict[Any, Cached] = {}

    def _check(self) -> None:
        snapshot = self.state.snapshot
        marker = (snapshot.generation if snapshot is not None else -1, self.state.store_error, int(time.time()))
        if marker != self._marker:
            self._marker = marker
            self._items = {}

    def get(self, key: Any) -> Cached | None:
        """The cached (head, body, close, method, pool, answer) for this request head, if still valid."""
        self._check()
        return self._items.get(key)

    def put(self, key: Any, value: Cached) -> None:
        """Remember an answer until the snapshot, store state or second changes."""
        if len(self._items) >= self.limit:
            self._items = {}
        self._items[key] = value


class FastRequestHandler(RequestHandler):
    """aiohttp's protocol, answering plain config requests itself (module docstring)."""

    def __init__(self, manager: Any, *, responder: ConfigResponder, limits: Limits, cache: AnswerCache,
                 access_logger: logging.Logger | None, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._fast_responder = responder
        self._fast_cache = cache
        self._fast_limits = limits
        self._fast_log = access_logger if access_logger is not None and access_logger.isEnabledFor(logging.INFO) \
            else None
        self._fast_on = True
        self._fast_buf = b""
        self._fast_waiting = False
        self._fast_peer: str | None = None
        self._fast_raw: socket.socket | None = None  # a dup of the connection's fd, for sendmsg
        self._fast_plain = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._fast_plain = transport.get_extra_info("sslcontext") is None
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

    def _send_large(self, transport: asyncio.Transport, head: bytes, body: bytes) -> None:
        """Head and a large body in one sendmsg (no copy, one syscall) when nothing is queued; else queue."""
        raw = self._fast_raw
        if raw is None and self._fast_plain and transport.get_write_buffer_size() == 0:
            sock = transport.get_extra_info("socket")
            if sock is not None:
                raw = self._fast_raw = socket.socket(fileno=os.dup(sock.fileno()))
                raw.setblocking(False)
        sent = 0
        if raw is not None and transport.get_write_buffer_size() == 0 and not transport.is_closing():
            try:
                sent = raw.sendmsg((head, body))
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                sent = 0  # let the transport meet the error and close the connection its way
        if sent < len(head):
            transport.write(head[sent:] if sent else head)
            transport.write(body)
        elif sent < len(head) + len(body):
            transport.write(memoryview(body)[sent - len(head):])

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._fast_raw is not None:
            self._fast_raw.close()
            self._fast_raw = None
        super().connection_lost(exc)

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
            raw_head = buf[:end]
            key = (raw_head, self._fast_peer) if self._fast_cache.keyed_by_address else raw_head
            cached = self._fast_cache.get(key)
            started = time.perf_counter() if self._fast_log is not None else 0.0
            if cached is None:
                parsed = parse_head(raw_head, limits)
                if parsed is None:
                    return self._give_up(buf)
                method, pool, headers, close = parsed
                try:
                    answer = self._fast_responder.decide(method, pool, headers.get, self._fast_peer)
                    head, body = serialize(answer, head_only=method == "HEAD", close=close)
                except Exception:  # a bug here must not drop the connection: aiohttp answers instead
                    log.exception("fast path failed; handing the connection to aiohttp")
                    return self._give_up(buf)
                if len(body) < 16384:
                    head, body = head + body, b""
                cached = (head, body, close, method, pool, answer, headers.get("user-agent"), headers.get("accept"))
                self._fast_cache.put(key, cached)
            head, body, close, method, pool, answer, ua, accept = cached
            self._fast_responder.count(answer, method)
            if body:
                self._send_large(transport, head, body)
            else:
                transport.write(head)
            if self._fast_log is not None:
                sent = len(answer.body) if answer.status == 200 and method != "HEAD" else 0
                self._fast_log.info(entry_json(
                    remote=self._fast_peer, method=method, path=f"/config/{pool}", status=answer.status,
                    nbytes=sent, seconds=time.perf_counter() - started, ua=ua, accept=accept, noted=answer.note))
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
    policy = responder.policy
    cache = AnswerCache(responder.state, keyed_by_address=bool(policy.allow or policy.deny))

    def make() -> FastRequestHandler:
        return FastRequestHandler(server, loop=loop, responder=responder, limits=limits, cache=cache,
                                  access_logger=access_logger, **kwargs)
    return make
