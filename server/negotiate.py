"""Accept header -> Ignition spec version, the first step of serving `/config/{pool}`.

The parse and the choice follow the OpenShift machine-config server (`api.go: parseAcceptHeader`,
`detectSpecVersionFromAcceptHeader`; MCO `pkg/server/api.go`) step by step:

1. Split the header on `,`, each element on `;`, trim spaces. An element counts only if its first part
   contains `/` (type/subtype split at the first `/`).
2. Parameters: only `version=<X.Y.Z>` (the first one that coreos/go-semver parses, so the legacy
   `version=1` is ignored) and `q=<float>` (the first that strconv.ParseFloat reads as a float32; 1 when
   absent).
3. Stable sort by q, descending. The elements whose subtype is `vnd.coreos.ignition+json` and that carry a
   version are tried in that order; the first whose version the MCS serves decides.
4. Versions compare as go-semver compares them (a pre-release sorts before its release: `3.4.0-rc` is
   below `3.4.0`). The MCS serves 3.1.0 up to the version it renders (3.5.0, the MCO's
   `InternalMCOIgnitionVersion`): `[3.Y.0, next)` -> `3.Y.0`, `[3.5.0, 4.0.0)` -> 3.5.0, and
   `[2.2.0, 3.0.0)` -> 2.2.0. Any other version (1.x, 2.0, 2.1, 3.0, 4.x) is not served: the next element
   is tried, and when none is served the answer is 400.
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
import struct
from dataclasses import dataclass
from functools import lru_cache

from ignition.config_version import parse_semver as go_semver
from ignition.versions import SUPPORTED_VERSIONS
from renderer.merge_machineconfigs import IGNITION_VERSION as RENDERED_VERSION
from server.errors import ServerError

IGNITION_SUBTYPE = "vnd.coreos.ignition+json"
SPEC2 = "2.2.0"

# A version as coreos/go-semver orders it: (major, minor, patch, released); metadata does not count.
Order = tuple[int, int, int, bool]

# strconv.ParseFloat: decimal floats, hex floats with their binary exponent, inf/infinity/nan (no underscores
# without a base prefix). Each pattern splits a text one way only (the digits before a point, the point and what
# follows it, the exponent), so a failing match never backtracks: a q value is attacker text.
_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX_RE = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_SPECIAL_RE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.I)
_FLOAT32_MAX = 3.4028234663852886e38
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
    version: Order | None
    version_text: str | None
    q: float


@dataclass(frozen=True)
class Choice:
    """The outcome: the version to serve (`None` = the caller's default) or the error to answer with."""

    version: str | None
    error: NegotiationError | None = None


def parse_semver(text: str) -> Order | None:
    """`3.3.0` -> (3, 3, 0, True), `3.3.0-rc.1` -> (3, 3, 0, False): the order go-semver's `LessThan` uses (a
    pre-release sorts before its release); None for anything go-semver rejects (such as `1` or `3.3`)."""
    parsed = go_semver(text)
    if parsed is None:
        return None
    major, minor, patch, pre, _metadata = parsed
    return major, minor, patch, pre == ""


def _release(version: str) -> Order:
    """The order of a released version string of ours (`3.1.0`)."""
    order = parse_semver(version)
    assert order is not None and order[3], version
    return order


# The spec-3 versions the MCS serves, newest first: 3.1.0 up to the version it renders (api.go
# detectSpecVersionFromAcceptHeader has no case for 3.0; its newest case runs up to 4.0.0).
MCS_SPEC3: tuple[str, ...] = tuple(sorted(
    (v for v in SUPPORTED_VERSIONS if _release("3.1.0") <= _release(v) <= _release(RENDERED_VERSION)),
    key=_release, reverse=True))
_SPEC2_FROM, _SPEC3_FROM, _SPEC4_FROM = _release(SPEC2), _release("3.0.0"), _release("4.0.0")


def mcs_version(version: Order) -> str | None:
    """The spec version the MCS serves for an Accept `version=` (api.go detectSpecVersionFromAcceptHeader), or
    None when it serves none: `[3.Y.0, next)` -> 3.Y.0 (the newest up to 4.0.0), `[2.2.0, 3.0.0)` -> 2.2.0."""
    if _SPEC2_FROM <= version < _SPEC3_FROM:
        return SPEC2
    if version >= _SPEC4_FROM:
        return None
    return next((v for v in MCS_SPEC3 if version >= _release(v)), None)


def parse_q(text: str) -> float | None:
    """A q value as Go's strconv.ParseFloat(text, 32) reads it (a float32: beyond its range is an error), or
    None when it does not parse."""
    if _SPECIAL_RE.fullmatch(text):
        return float(text)
    if _DECIMAL_RE.fullmatch(text):
        value = float(text)
    elif _HEX_RE.fullmatch(text):
        value = float.fromhex(text)
    else:
        return None
    if not math.isfinite(value) or abs(value) > _FLOAT32_MAX:
        return None  # out of float32's range: Go's ErrRange (1e400 too, which float() reads as inf)
    return struct.unpack("f", struct.pack("f", value))[0]


def parse_accept(header: str) -> list[MediaRange]:
    """Every element of the header that has a type/subtype, in header order (MCS step 1 and 2)."""
    ranges: list[MediaRange] = []
    for element in header.split(","):
        parts = element.split(";")
        mime = parts[0].strip()
        if "/" not in mime:
            continue
        type_, subtype = mime.split("/", 1)
        version: Order | None = None
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
    served_range = f"{MCS_SPEC3[-1]} to {MCS_SPEC3[0]}"
    unserved: list[str] = []
    for r in sorted(parse_accept(header), key=_sort_key):
        if r.subtype != IGNITION_SUBTYPE or r.version is None:
            continue
        requested = r.version_text or ""
        served = mcs_version(r.version)
        if served is None:  # the MCS notes the error and tries the next element
            unserved.append(requested)
        elif served == SPEC2:
            return Choice(None, UnsatisfiableVersion(
                f"version {requested} asks for spec {SPEC2}, which this server does not produce "
                f"(it serves {served_range})", requested))
        else:
            return Choice(served)
    if unserved:
        return Choice(None, MalformedAccept(
            f"unsupported Ignition spec version {', '.join(unserved)} (served: {served_range})"))
    return Choice(None)


@lru_cache(maxsize=512)
def choose_cached(header: str | None) -> Choice:
    """`choose`, memoised: the same few Accept headers arrive from every machine of a fleet."""
    return choose(header)
