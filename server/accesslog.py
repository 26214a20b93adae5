"""Structured access logs: one JSON object per request, never a secret, written off the event loop.

Logged: time, worker pid, client address, method, path (never the query string, which may carry a
token), status, body bytes, duration, User-Agent and Accept (truncated), and what the handler noted in
`request[LOG_NOTE]` (pool, served version, rendered name, refusal reason). Never logged: Authorization,
cookies, request bodies.

Cost on the loop: the line is built from values aiohttp already holds (the parsed method, path and
headers, the response's status and length; the time string and pid made once per second and once per
process) by orjson, and appended to the deque of `AccessLog` (the logger aiohttp is handed); a writer thread
takes what gathered every 0.1 s and writes it in one call. bench/accesslog_bench.py measures it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from time import time as _time
from typing import IO, Any

import orjson
from aiohttp import hdrs, web
from aiohttp.abc import AbstractAccessLogger

from fleet.clock import timestamp

LOGGER_NAME = "mco.access"
# where handlers leave what the access log adds (a typed request key where aiohttp has them, 3.13+)
LOG_NOTE: Any = web.RequestKey("log", dict) if hasattr(web, "RequestKey") else "log"
_LIMIT = 200


class _Stamp:
    """The time field, formatted once per second: `text` holds for times before `until` (a line compares one float
    and calls `renew` once a second)."""

    until = -1.0
    text = ""

    @classmethod
    def renew(cls, now: float) -> str:
        second = int(now)
        cls.text = timestamp(datetime.fromtimestamp(second, UTC))
        cls.until = second + 1.0
        return cls.text


class _PID:
    """This process's id (read again in a forked child, whose first line finds it changed)."""

    pid = os.getpid()


os.register_at_fork(after_in_child=lambda: setattr(_PID, "pid", os.getpid()))


class JsonAccessLogger(AbstractAccessLogger):
    """aiohttp access logger: one JSON line per request to its logger (an `AccessLog` when serving).

    aiohttp makes one per connection; it keeps the `AccessLog`'s `keep` (a deque's append), so a line costs no
    logger call on the loop.
    """

    def __init__(self, logger: logging.Logger, log_format: str) -> None:
        super().__init__(logger, log_format)
        self._keep = logger.keep if isinstance(logger, AccessLog) else logger.info

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time_taken: float) -> None:
        """One line: the fields of the module docstring, then the handler's note, as JSON (built here, in one
        call: a helper taking them as keywords cost 7% of the line). `ms` is truncated to the microsecond by
        integer division, a quarter of what `round` costs."""
        headers = request.headers
        ua, accept = headers.get(hdrs.USER_AGENT), headers.get(hdrs.ACCEPT)  # istr: no case folding per lookup
        now = _time()
        entry: dict[str, Any] = {
            "time": _Stamp.text if now < _Stamp.until else _Stamp.renew(now),
            "worker": _PID.pid,
            "remote": request.remote,
            "method": request.method,
            "path": request.path[:_LIMIT],
            "status": response.status,
            "bytes": response.body_length,
            "ms": int(time_taken * 1_000_000) / 1000,
            "ua": ua[:_LIMIT] if ua else "",
            "accept": accept[:_LIMIT] if accept else "",
        }
        noted = request.get(LOG_NOTE)
        if noted:
            entry.update(noted)
        self._keep(orjson.dumps(entry))

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)


class AccessLog(logging.Logger):
    """A logger whose `info` appends the line to a deque; a writer thread takes what gathered every 0.1 s.

    The loop never wakes the writer (a wake-up per line costs a thread switch and a GIL hand-over per
    request), and the writer writes what gathered in one call.
    """

    INTERVAL = 0.1

    def __init__(self, out: IO[bytes], *, close_out: bool) -> None:
        super().__init__(LOGGER_NAME, logging.INFO)
        self._out = out
        self._close_out = close_out
        self._lines: deque[bytes] = deque()
        self._closing = threading.Event()
        self._failed = False
        self._writer = threading.Thread(target=self._write, name="access-log", daemon=True)
        self._writer.start()

    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        """Keep one line, as bytes, for the writer (`args` are ignored: lines come formatted)."""
        self._lines.append(msg)  # type: ignore[arg-type]

    @property
    def keep(self) -> Callable[[bytes], None]:
        """What `info` does, without the call around it: the deque's own append."""
        return self._lines.append

    def _write(self) -> None:
        while True:
            closing = self._closing.wait(self.INTERVAL)
            self._flush()
            if closing:
                return

    def _flush(self) -> None:
        lines = self._lines
        batch = [lines.popleft() for _ in range(len(lines))]  # deque ends are thread-safe: none is lost
        if not batch or self._failed:
            return
        try:
            self._out.write(b"\n".join(batch) + b"\n")
            self._out.flush()
        except (OSError, ValueError) as exc:  # a full disk or a closed stream: say so once, keep serving
            print(f"access log: cannot write, lines dropped from now on: {exc}", file=sys.stderr)
            self._failed = True

    def close(self) -> None:
        """Write what gathered, stop the writer (and close the file it opened)."""
        self._closing.set()
        self._writer.join(10)
        self._flush()
        if self._close_out:
            self._out.close()


def configure(target: str | None) -> AccessLog | None:
    """Access logs to a file, `-` (stderr), or nowhere (None / `off`); returns the logger to hand aiohttp."""
    if not target or target == "off":
        return None
    if target == "-":
        return AccessLog(sys.stderr.buffer, close_out=False)
    return AccessLog(open(target, "ab"), close_out=True)  # noqa: SIM115 - closed by close()
