"""Accept header -> Ignition spec version, the first step of serving `/config/{pool}`.

The parse and the choice follow the OpenShift machine-config server (`api.go: parseAcceptHeader`,
`detectSpecVersionFromAcceptHeader`; MCO `pkg/server/api.go`) step by step:

1. Split the header on `,`, each element on `;`, trim spaces. An element counts only if its first part
   contains `/` (type/subtype split at the first `/`).
2. Parameters: only `version=<X.Y.Z>` (the first one that is a valid semantic version, so the legacy
   `version=1` is ignored) and `q=<float>` (the first valid float; 1.0 when absent).
3. Stable sort by q, descending. The first element whose subtype is `vnd.coreos.ignition+json` and that
   carries a version decides; later ones are never consulted.
4. That version: 3.x with a minor we know -> `3.<minor>.0` (patch and pre-release ignored); 3.x newer than
   our newest -> our newest; 2.x >= 2.2.0 -> 2.2.0; anything else (1.x, 2.0, 2.1, 4.x, ...) -> 400.
5. No element carrying an Ignition version (curl's `*/*`, no header, garbage) -> the default.

Where we differ from the MCS, on purpose (a client error is a 4xx naming the field, never a blanket one):
- The MCS's one error (step 4) stays **400**. A header with control or non-ASCII characters is also 400.
- What the MCS would serve but we cannot is **406**: spec 2.2.0 (this project has no spec-2 translator),
  and, later in payload.py, a config that the requested version cannot express.
- The default for "no Ignition entry" is not 2.2.0 but `default` (the caller passes the rendered config's
  own spec version unless settings name another), since spec 2 is not served at all.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from ignition.versions import LATEST, SUPPORTED_VERSIONS
from server.errors import ServerError

IGNITION_SUBTYPE = "vnd.coreos.ignition+json"

# coreos/go-semver: MAJOR.MINOR.PATCH[-prerelease][+metadata]; numbers as strconv.ParseInt reads them.
_NUM = r"[+-]?[0-9]+"
_IDENT = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_SEMVER_RE = re.compile(rf"^({_NUM})\.({_NUM})\.({_NUM})(?:-({_IDENT}))?(?:\+({_IDENT}))?$")
# strconv.ParseFloat: decimal or hex floats, inf/infinity/nan; no underscores without a base prefix.
_FLOAT_RE = re.compile(r"^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)$", re.I)
_BAD_CHARS_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\U0010ffff]")


class NegotiationError(ServerError):
    """The Accept header cannot be answered; `status` is the HTTP status, `path` names the header."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(f"header Accept: {message}")
        self.path = "header Accept"
        self.message = message


class MalformedAccept(NegotiationError):
    """The header is not something we can read as the MCS reads it (HTTP 400)."""

    status = 400


class UnsatisfiableVersion(NegotiationError):
    """The client asks for a spec version we cannot produce (HTTP 406)."""

    status = 406

    def __init__(self, message: str, requested: str) -> None:
        super().__init__(message)
        self.requested = requested


@dataclass(frozen=True)
class MediaRange:
    """One parsed element of the Accept header."""

    type: str
    subtype: str
    version: tuple[int, int, int] | None
    version_text: str | None
    q: float


@dataclass(frozen=True)
class Choice:
    """The outcome: the version to serve (`None` = the caller's default) or the error to answer with."""

    version: str | None
    error: NegotiationError | None = None


def parse_semver(text: str) -> tuple[int, int, int] | None:
    """`3.3.0` -> (3, 3, 0); None for anything go-semver would reject (such as `1` or `3.3`)."""
    m = _SEMVER_RE.match(text)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def parse_q(text: str) -> float | None:
    """A q value as Go's strconv.ParseFloat reads it, or None when it does not parse."""
    if _FLOAT_RE.match(text):
        return float(text)
    if re.match(r"^[+-]?0[xX]", text):
        try:
            return float.fromhex(text)
        except ValueError:
            return None
    return None


def parse_accept(header: str) -> list[MediaRange]:
    """Every element of the header that has a type/subtype, in header order (MCS step 1 and 2)."""
    ranges: list[MediaRange] = []
    for element in header.split(","):
        parts = element.split(";")
        mime = parts[0].strip()
        if "/" not in mime:
            continue
        type_, subtype = mime.split("/", 1)
        version: tuple[int, int, int] | None = None
        version_text: str | None = None
        q: float | None = None
        for param in parts[1:]:
            key, sep, value = param.strip().partition("=")
            if not sep:
                continue
            if key == "version" and version is None:
                version = parse_semver(value)
                version_text = value if version is not None else None
            elif key == "q" and q is None:
                q = parse_q(value)
        ranges.append(MediaRange(type_, subtype, version, version_text, 1.0 if q is None else q))
    return ranges


def _sort_key(r: MediaRange) -> float:
    # Go's sort with `a.q > b.q` leaves NaN where it was relative to others; treat NaN as lowest instead.
    return -r.q if not math.isnan(r.q) else math.inf


def choose(header: str | None) -> Choice:
    """Apply the MCS rules (module docstring) to one Accept header value."""
    if header is None:
        return Choice(None)
    if _BAD_CHARS_RE.search(header):
        return Choice(None, MalformedAccept("contains control or non-ASCII characters"))
    for r in sorted(parse_accept(header), key=_sort_key):
        if r.subtype != IGNITION_SUBTYPE or r.version is None:
            continue
        major, minor, _patch = r.version
        requested = r.version_text or ""
        if major == 3 and minor >= 0:
            served = f"3.{minor}.0"
            if served in SUPPORTED_VERSIONS:
                return Choice(served)
            return Choice(LATEST)  # a newer 3.x client gets our newest spec
        if major == 2 and (minor, _patch) >= (2, 0):
            return Choice(None, UnsatisfiableVersion(
                f"version {requested} asks for spec 2.2.0, which this server does not produce "
                f"(it serves {SUPPORTED_VERSIONS[0]} to {LATEST})", requested))
        return Choice(None, MalformedAccept(
            f"unsupported Ignition spec version {requested} (served: {SUPPORTED_VERSIONS[0]} to {LATEST})"))
    return Choice(None)


@lru_cache(maxsize=512)
def choose_cached(header: str | None) -> Choice:
    """`choose`, memoised: the same few Accept headers arrive from every machine of a fleet."""
    return choose(header)
