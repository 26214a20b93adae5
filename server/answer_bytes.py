"""Config answers as the bytes written on a connection, cached per snapshot, for server/connection.py.

The decision is `ConfigResponder.decide` (respond.py), the same one the aiohttp route makes; this
module only remembers its serialized result. The key holds everything the decision reads from a
request, as llhttp parsed it: method, pool, the parsed header lines (`raw_headers`, name and value
pairs), and the client address when CIDR rules exist. A fleet sends the
same few keys (same Ignition build, same pool), so most requests cost a dict lookup and one write.
Entries live for one snapshot generation and store-error state; the Date header is spliced in per
request. The cache is bounded (emptied when full), so a client varying its headers costs only CPU.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from typing import Any

from server.accesslog import entry_json
from server.errors import ServerError
from server.respond import Answer, ConfigResponder, Headers

SERVER_NAME = "mco"
CONFIG_PREFIX = "/config/"
_REASONS = {s.value: s.phrase for s in HTTPStatus}
_SMALL = 16384  # bodies up to this size leave in the same write as their head


@dataclass(frozen=True, slots=True)
class Serialized:
    """One answer on the wire: `before_date` + Date value + `after_date` (+ `body` when large)."""

    before_date: bytes
    after_date: bytes
    body: bytes
    answer: Answer
    count_key: tuple[str, str, int]  # (pool label, version, status) in the metrics
    sent: int  # body bytes counted as served


def serialize(answer: Answer, *, head_only: bool) -> Serialized:
    """The status line, headers and body of an answer, as aiohttp writes a web.Response."""
    lines = [f"HTTP/1.1 {answer.status} {_REASONS.get(answer.status, '')}"]
    lines.extend(f"{k}: {v}" for k, v in answer.headers.items())
    if answer.status != 304:
        lines.append(f"Content-Length: {len(answer.body)}")
    before = ("\r\n".join(lines) + "\r\nDate: ").encode("latin-1")
    after = f"\r\nServer: {SERVER_NAME}\r\n\r\n".encode("latin-1")
    body = b"" if head_only or answer.status == 304 else answer.body
    key = (answer.pool_label, answer.version, answer.status)
    sent = len(answer.body) if answer.status == 200 and not head_only else 0
    if len(body) <= _SMALL:
        return Serialized(before, after + body, b"", answer, key, sent)
    return Serialized(before, after, body, answer, key, sent)


class _NotReady(ServerError):
    """The answer needs bytes not built yet."""


class AnswerBytes:
    """Serialized config answers of one process (shared by its connections)."""

    def __init__(self, responder: ConfigResponder, *, access_logger: logging.Logger | None,
                 limit: int = 1024) -> None:
        self.responder = responder
        self.limit = limit
        self._by_address = bool(responder.policy.allow or responder.policy.deny)
        self.log = access_logger if access_logger is not None and access_logger.isEnabledFor(logging.INFO) \
            else None
        self._snapshot: Any = None
        self._store_error: str | None = None
        self._items: dict[Any, Serialized | None] = {}
        self._second = -1
        self._date = b""

    def date(self) -> bytes:
        """The Date header value, formatted once per second."""
        now = int(time.time())
        if now != self._second:
            self._second = now
            self._date = formatdate(now, usegmt=True).encode("ascii")
        return self._date

    def entry(self, method: str, target: str, headers: Headers, header_lines: tuple[tuple[bytes, bytes], ...],
              peer: str | None) -> Serialized | None:
        """The counted answer to a parsed `GET|HEAD /config/<pool>` request; None: not a pool we serve.

        `target` is the request target (`/config/<pool>`, nothing else: a query, an escape or a
        sub-path is not a pool name) and `header_lines` the parsed header lines `headers` was built
        from, so equal lines mean an equal decision.
        """
        state = self.responder.state
        if state.snapshot is not self._snapshot or state.store_error != self._store_error:
            self._snapshot, self._store_error = state.snapshot, state.store_error
            self._items = {}
        key = (method, target, header_lines, peer if self._by_address else None)
        items = self._items
        try:
            found = items[key]
        except KeyError:
            try:
                found = items[key] = self._decide(method, target, headers, peer)
            except _NotReady:
                return None
            if len(items) > self.limit:
                items.clear()
        if found is not None:
            counts = self.responder.metrics.config_counts
            counts[found.count_key] = counts.get(found.count_key, 0) + 1
            if found.sent:
                sent = self.responder.metrics.config_bytes
                bytes_key = found.count_key[:2]
                sent[bytes_key] = sent.get(bytes_key, 0) + found.sent
        return found

    def _decide(self, method: str, target: str, headers: Headers, peer: str | None) -> Serialized | None:
        snapshot = self._snapshot
        pool = target[len(CONFIG_PREFIX):]
        if snapshot is None or pool not in snapshot.pools:
            return None  # unknown names and every odd target: the aiohttp route answers them
        if self.responder.unbuilt(pool, headers) is not None:
            raise _NotReady()  # the route builds the bytes in a thread first; nothing is remembered
        return serialize(self.responder.decide(method, pool, headers, peer), head_only=method == "HEAD")

    def log_answer(self, entry: Serialized, method: str, headers: Headers, peer: str | None, started: float) -> None:
        """One access-log line for an answer written from the cache."""
        if self.log is not None:
            answer = entry.answer
            self.log.info(entry_json(
                remote=peer, method=method, path=f"/config/{answer.note.get('pool', '-')}", status=answer.status,
                nbytes=entry.sent, seconds=time.perf_counter() - started, ua=headers.get("User-Agent"),
                accept=headers.get("Accept"), noted=answer.note))
