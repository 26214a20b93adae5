"""The `/config/{pool}` decision, shared by the aiohttp route (app.py) and the cached answers (connection.py).

Pure with respect to I/O: given the method, pool, the request's parsed headers (aiohttp's multidict)
and the client address, it reads the current snapshot once and returns an `Answer` (status, headers,
body). The order of checks:

    client address (403) -> pool name (400) -> snapshot loaded (503) -> pool known (404)
    -> Authorization and `node` readable (400) -> the pool's bearer token, or the named node's (403)
    -> pool has a target (503) -> machine facts readable (400) -> machine chosen (409 on a tie; 404 if the pool
    requires one, or the named node has no machine) -> Accept (400 / 406) -> version servable (406)
    -> If-None-Match (304) -> Accept-Encoding (gzip or identity) -> 200

A machine is chosen (server/machine_choice.py) from the query parameters `mac`, `uuid`, `serial` and `hostname`
(aiohttp's parsed query; other parameters are ignored) among the pool's machine documents, or on day 2 from
`node` proven by that node's token, and is served its own config, the pool's merged with its overlay. The facts
identify a machine; they authorise nothing: the pool's token and address rules apply first, as to the pool's
config, and with node authentication on, a machine whose node has registered is served only to that node's
token: such an answer names the node (`Answer.first_boot_of`) for the caller to check the store (app.py), and is
never recalled.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from multidict import CIMultiDict, CIMultiDictProxy, MultiMapping

from fleet.names import valid_name
from server.auth import AccessPolicy, Refused
from server.convert import ConversionRefused
from server.machine_choice import ChoiceRefused, authorise, choose
from server.metrics import ServerMetrics
from server.negotiate import choose_cached
from server.payload import ConfigPayload
from server.state import ServerState

JSON = "application/json"
SERVER_NAME = "mco"  # the Server header of every answer (no version), the refusals connection.py writes included
__all__ = ["JSON", "SERVER_NAME", "Answer", "ConfigResponder", "Headers", "accepts_gzip", "error_body", "etag_matches"]


Headers = MultiMapping[str]  # parsed request headers, case-insensitive (aiohttp's CIMultiDictProxy)
Query = MultiMapping[str]  # the parsed query string (yarl's MultiDictProxy, as aiohttp hands it)


@dataclass(slots=True)
class Answer:
    """One response: `body` is the full body even for HEAD (the writer leaves it out)."""

    status: int
    headers: CIMultiDictProxy[str]  # `response_headers`: made once per answer, copied into each response
    body: bytes
    pool_label: str = "-"
    version: str = "-"
    note: dict[str, Any] = field(default_factory=dict)
    first_boot_of: str = ""  # a machine's config chosen by its facts: withdrawn (403) once this node registered


def response_headers(fields: dict[str, str]) -> CIMultiDictProxy[str]:
    """An answer's response headers with the Server header, made once per answer: aiohttp copies a multidict into
    each response faster than it reads a dict and then sets the Server header (1.2 vs 1.7 us a response)."""
    return CIMultiDictProxy(CIMultiDict(fields, Server=SERVER_NAME))


def json_bytes(body: Any) -> bytes:
    """An API answer's JSON (not a stored or hashed form: ignition/canonical.py has that one). orjson writes the
    2-4 MB of `/pools` and `/nodes` for 10,000 machines ~10x faster than the json module; what it refuses
    (integers beyond 64 bits) goes through the json module."""
    try:
        return orjson.dumps(body)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(body).encode()


def json_fragment(body: Any) -> orjson.Fragment:
    """`body`'s JSON, encoded now, to be copied as it is into a `json_bytes` body later."""
    return orjson.Fragment(json_bytes(body))


def json_array(items: Sequence[bytes]) -> orjson.Fragment:
    """A JSON array of already encoded items (each `json_bytes`'s), which `json_bytes` then copies into a body
    as it is: a listing of 10,000 items encodes only the items that changed since it was last built."""
    return orjson.Fragment(b"[" + b",".join(items) + b"]")


def error_body(code: str, message: str, path: str = "") -> bytes:
    """The JSON error body every refusal carries (never config bytes)."""
    body = {"error": code, "message": message}
    if path:
        body["path"] = path
    return json.dumps(body).encode() + b"\n"


def _error(status: int, code: str, message: str, path: str = "", *, label: str = "-", version: str = "-",
           note: dict[str, Any]) -> Answer:
    return Answer(status, response_headers({"Content-Type": JSON}), error_body(code, message, path), label, version,
                  note)


def _quality(params: list[str]) -> float:
    """The q parameter of one Accept-Encoding element (1 when absent, 0 when unreadable)."""
    for param in params:
        key, sep, value = param.partition("=")
        if sep and key.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return 0.0
            return q if 0.0 <= q <= 1.0 else 0.0
    return 1.0


def accepts_gzip(header: str | None) -> bool:
    """Whether Accept-Encoding allows gzip (RFC 9110 12.5.3: names case-insensitive, q=0 refuses).

    `gzip`/`x-gzip` decide when named; otherwise `*` does; otherwise no gzip.
    """
    if not header:
        return False
    named: float | None = None
    star: float | None = None
    for element in header.split(","):
        parts = element.split(";")
        coding = parts[0].strip().lower()
        if coding in ("gzip", "x-gzip"):
            q = _quality(parts[1:])
            named = q if named is None else max(named, q)
        elif coding == "*":
            star = _quality(parts[1:])
    if named is not None:
        return named > 0
    return star is not None and star > 0


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
        self.limit = 1024
        self._by_address = bool(policy.allow or policy.deny)
        self._snapshot: Any = None
        self._store_error: str | None = None
        self._recalled: dict[tuple[str, str, tuple[tuple[bytes, bytes], ...], str | None, str], Answer] = {}

    def recall(self, method: str, pool: str, header_lines: tuple[tuple[bytes, bytes], ...],
               remote: str | None, query: str = "") -> Answer | None:
        """The counted answer decided before for the same request, or None (then: `decide`, `count` and `remember`).

        `header_lines` are the parsed header lines (aiohttp's `raw_headers`) the headers were built from, and
        `query` the query string (which names a machine), so equal lines and query mean an equal decision; the client address counts only when CIDR rules exist. A fleet
        sends the same few requests (same Ignition build, same pool), so most cost a dict lookup. Entries
        live for one snapshot and store-error state; the memory is bounded (emptied when full).
        """
        state = self.state
        if state.snapshot is not self._snapshot or state.store_error != self._store_error:
            self._snapshot, self._store_error = state.snapshot, state.store_error
            self._recalled.clear()
        found = self._recalled.get((method, pool, header_lines, remote if self._by_address else None, query))
        if found is not None:
            self.count(found, method)
        return found

    def remember(self, method: str, pool: str, header_lines: tuple[tuple[bytes, bytes], ...], remote: str | None,
                 answer: Answer, query: str = "") -> None:
        """Keep an answer for `recall` (decided on the snapshot `recall` last saw); a 503 says "try again" and is
        not kept, nor a machine's answer that depends on whether its node has registered since."""
        if self.state.snapshot is not self._snapshot or self.state.store_error != self._store_error \
                or answer.status == 503 or answer.first_boot_of:
            return
        recalled = self._recalled
        if len(recalled) >= self.limit:
            recalled.clear()
        recalled[(method, pool, header_lines, remote if self._by_address else None, query)] = answer

    def withdrawn(self, answer: Answer) -> Answer:
        """`answer` refused because its machine's node has registered: day 2, its config goes to that node's token
        only (`?node=NAME`), never again to whoever names the machine's facts."""
        note = dict(answer.note, refused=f"machine of node {answer.first_boot_of} past its first boot: "
                    "its node's token only")
        note.pop("version", None)
        note.pop("rendered", None)
        return _error(403, "forbidden", "forbidden", label=answer.pool_label, note=note)

    def count(self, answer: Answer, method: str) -> None:
        """Count one answer (and its body bytes) in the metrics."""
        nbytes = len(answer.body) if answer.status == 200 and method != "HEAD" else 0
        self.metrics.config_request(answer.pool_label, answer.version, answer.status, nbytes)

    def unbuilt(self, pool: str, headers: Headers, query: Query | None = None,
                remote: str | None = None) -> Callable[[], None] | None:
        """The build of the variant this request would be served, when it is not ready yet (else None).

        Translating and compressing a large config takes long enough to stall every connection, so the
        aiohttp route runs this in a thread before deciding, and the cached answers leave such a request
        to the route.
        """
        snapshot = self.state.snapshot
        entry = snapshot.pools.get(pool) if snapshot is not None else None
        payload = entry.payload if entry is not None else None
        if payload is None or entry is None:
            return None
        machines = entry.machines
        machine = None
        if machines is not None:
            try:
                self.policy.check_address(remote)  # no work for a refused client
                node = authorise(self.policy, pool, headers.getall("Authorization", ()), query)
                machine = choose(self.policy, entry, pool, node, query).machine
            except (ChoiceRefused, Refused):
                return None  # decide() answers these
        accept = headers.getall("Accept", ())
        choice = choose_cached(", ".join(accept) if accept else None)
        version = choice.version or self.default_version
        if choice.error is not None:
            return None
        if machine is not None and machines is not None:
            found = machines.peek(machine)
            if found is not None and found.built(version):
                return None
            chosen, source = machine, machines
        elif payload.built(version):
            return None

        def build() -> None:
            built = source.build(chosen) if machine is not None else payload
            try:
                built.variant(version)
            except ConversionRefused:
                pass  # remembered too: decide() answers the refusal
        return build

    def decide(self, method: str, pool: str, headers: Headers, remote: str | None,
               query: Query | None = None) -> Answer:
        """The answer to one request (the order of checks is in the module docstring)."""
        note: dict[str, Any] = {"pool": pool if valid_name(pool) else "-"}
        policy = self.policy
        if policy.allow or policy.deny:
            try:
                policy.check_address(remote)
            except Refused as exc:
                note["refused"] = exc.reason
                return _error(403, "forbidden", "forbidden", note=note)
        if not valid_name(pool):
            return _error(400, "invalid-pool-name", "pool name must be a lowercase DNS name", "path pool", note=note)
        snapshot = self.state.snapshot
        if snapshot is None:
            return _error(503, "not-ready", self.state.store_error or "no good render yet", note=note)
        entry = snapshot.pools.get(pool)
        if entry is None:
            return _error(404, "unknown-pool", f"no pool {pool!r}", "path pool", note=note)
        try:
            node = authorise(policy, pool, headers.getall("Authorization", ()), query)
            payload = entry.payload
            if payload is None:
                return _error(503, "not-ready", f"pool {pool} has no rendered config yet", label=pool, note=note)
            chosen = choose(policy, entry, pool, node, query)
        except ChoiceRefused as exc:
            if exc.reason:
                note["refused"] = exc.reason
            return _error(exc.status, exc.code, exc.message, exc.path, label=pool, note=note)
        machine, machines = chosen.machine, entry.machines
        if machine is not None and machines is not None:
            note["machine"] = machine.name
            found = machines.peek(machine)
            if found is None:  # dropped by a reload since unbuilt() built it: the client retries a 503
                return _error(503, "not-ready", f"machine {machine.name}'s config is being built", label=pool,
                              note=note)
            payload = found
        answer = self._variant_answer(pool, payload, headers, note)
        if chosen.first_boot_of and answer.status in (200, 304):
            answer.first_boot_of = chosen.first_boot_of
        return answer

    def _variant_answer(self, pool: str, payload: ConfigPayload, headers: Headers, note: dict[str, Any]) -> Answer:
        """The answer with `payload`'s bytes in the version and encoding the request accepts."""
        accept = headers.getall("Accept", ())
        choice = choose_cached(", ".join(accept) if accept else None)
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
        encodings = headers.getall("Accept-Encoding", ())
        gz = accepts_gzip(", ".join(encodings) if encodings else None)
        etag = variant.gzip_etag if gz else variant.etag
        out = {"ETag": etag, "Vary": "Accept, Accept-Encoding", "Cache-Control": "no-cache",
               "X-Rendered-Config": payload.name}
        matches = headers.getall("If-None-Match", ())
        if matches and etag_matches(", ".join(matches), etag):
            return Answer(304, response_headers(out), b"", pool, variant.version, note)
        out["Content-Type"] = JSON
        if gz:
            out["Content-Encoding"] = "gzip"
        return Answer(200, response_headers(out), variant.gzip_body if gz else variant.body, pool, variant.version,
                      note)
