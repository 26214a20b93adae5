"""The `/config/{pool}` decision, shared by the aiohttp handler and the fast path (fastpath.py).

Pure with respect to I/O: given the method, pool, request headers and client address, it reads the
current snapshot once and returns an `Answer` (status, headers, body). The order of checks:

    client address (403) -> pool name (400) -> snapshot loaded (503) -> pool known (404)
    -> bearer token (403) -> pool has a target (503) -> Accept (400 / 406) -> version servable (406)
    -> If-None-Match (304) -> Accept-Encoding (gzip or identity) -> 200
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from server.auth import AccessPolicy, Refused
from server.convert import ConversionRefused
from server.metrics import ServerMetrics
from server.negotiate import choose_cached
from server.state import ServerState

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
JSON = "application/json"
Header = Callable[[str], "str | None"]


@dataclass(slots=True)
class Answer:
    """One response: `body` is the full body even for HEAD (the writer leaves it out)."""

    status: int
    headers: dict[str, str]
    body: bytes
    pool_label: str = "-"
    version: str = "-"
    note: dict[str, Any] = field(default_factory=dict)


def error_body(code: str, message: str, path: str = "") -> bytes:
    """The JSON error body every refusal carries (never config bytes)."""
    body = {"error": code, "message": message}
    if path:
        body["path"] = path
    return json.dumps(body).encode() + b"\n"


def _error(status: int, code: str, message: str, path: str = "", *, label: str = "-", version: str = "-",
           note: dict[str, Any]) -> Answer:
    return Answer(status, {"Content-Type": JSON}, error_body(code, message, path), label, version, note)


def accepts_gzip(header: str | None) -> bool:
    """Whether Accept-Encoding allows gzip (an explicit `gzip;q=0` refuses it)."""
    if not header or "gzip" not in header:
        return False
    for element in header.split(","):
        coding, _, params = element.strip().partition(";")
        if coding.strip().lower() in ("gzip", "x-gzip"):
            q = params.strip()
            if q.startswith("q="):
                try:
                    return float(q[2:]) > 0
                except ValueError:
                    return False
            return True
    return False


def etag_matches(if_none_match: str, etag: str) -> bool:
    """If-None-Match uses weak comparison: `W/"x"` matches `"x"`, `*` matches anything."""
    for candidate in if_none_match.split(","):
        tag = candidate.strip()
        if tag == "*":
            return True
        if tag.startswith("W/"):
            tag = tag[2:]
        if tag == etag:
            return True
    return False


class ConfigResponder:
    """Answers `/config/{pool}` from the current snapshot and counts the answer in the metrics."""

    def __init__(self, *, state: ServerState, policy: AccessPolicy, metrics: ServerMetrics,
                 default_version: str | None) -> None:
        self.state = state
        self.policy = policy
        self.metrics = metrics
        self.default_version = default_version

    def answer(self, method: str, pool: str, header: Header, remote: str | None) -> Answer:
        """Decide, count, return."""
        answer = self.decide(method, pool, header, remote)
        self.count(answer, method)
        return answer

    def count(self, answer: Answer, method: str) -> None:
        """Count one answer (and its body bytes) in the metrics."""
        nbytes = len(answer.body) if answer.status == 200 and method != "HEAD" else 0
        self.metrics.config_request(answer.pool_label, answer.version, answer.status, nbytes)

    def decide(self, method: str, pool: str, header: Header, remote: str | None) -> Answer:
        note: dict[str, Any] = {"pool": pool}
        policy = self.policy
        if policy.allow or policy.deny:
            try:
                policy.check_address(remote)
            except Refused as exc:
                note["refused"] = exc.reason
                return _error(403, "forbidden", "forbidden", note=note)
        if not NAME_RE.match(pool):
            return _error(400, "invalid-pool-name", "pool name must be a lowercase DNS name", "path pool", note=note)
        snapshot = self.state.snapshot
        if snapshot is None:
            return _error(503, "not-ready", self.state.store_error or "no good render yet", note=note)
        entry = snapshot.pools.get(pool)
        if entry is None:
            return _error(404, "unknown-pool", f"no pool {pool!r}", "path pool", note=note)
        if policy.pool_requires_token(pool):
            try:
                policy.check_token(pool, header("authorization"))
            except Refused as exc:
                note["refused"] = exc.reason
                return _error(403, "forbidden", "forbidden", label=pool, note=note)
        payload = entry.payload
        if payload is None:
            return _error(503, "not-ready", f"pool {pool} has no rendered config yet", label=pool, note=note)
        choice = choose_cached(header("accept"))
        if choice.error is not None:
            e = choice.error
            return _error(e.status, "accept", e.message, e.path, label=pool, note=note)
        try:
            variant = payload.variant(choice.version or self.default_version)
        except ConversionRefused as exc:
            note["refused"] = exc.message
            return _error(406, "unsatisfiable-version", str(exc), ", ".join(exc.fields), label=pool,
                          version=exc.version, note=note)
        note["version"] = variant.version
        note["rendered"] = payload.name
        gz = accepts_gzip(header("accept-encoding"))
        etag = variant.gzip_etag if gz else variant.etag
        headers = {"ETag": etag, "Vary": "Accept, Accept-Encoding", "Cache-Control": "no-cache",
                   "X-Rendered-Config": payload.name}
        inm = header("if-none-match")
        if inm is not None and etag_matches(inm, etag):
            return Answer(304, headers, b"", pool, variant.version, note)
        headers["Content-Type"] = JSON
        if gz:
            headers["Content-Encoding"] = "gzip"
        return Answer(200, headers, variant.gzip_body if gz else variant.body, pool, variant.version, note)
