"""A port of the checks in Go's `net/url.Parse` that Ignition relies on: scheme, opaque part, host, port, escapes.

Only what decides "unable to parse url" and which scheme a source has; the parsed pieces are returned so the
S3/ARN rules can look at the opaque part and the query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ignition.errors import IgnitionError

_CTL = re.compile(r"[\x00-\x1f\x7f]")
_HEX = frozenset("0123456789abcdefABCDEF")
_PLAIN = re.compile(r"[A-Za-z0-9._~-]*")
_HOST_OK = frozenset("!$&'()*+,;=:[]<>\"-_.~")
_USERINFO_OK = frozenset("-._:~!$&'()*+,;=%@")


class URLError(IgnitionError, ValueError):
    """Go's url.Parse failed."""


@dataclass(frozen=True)
class GoURL:
    """The parts of a parsed URL Ignition looks at."""

    scheme: str
    opaque: str
    host: str
    path: str
    raw_query: str


def _is_alnum(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or ("0" <= c <= "9")


def _unescape(s: str, mode: str) -> str:
    """Go's url.unescape error checks for mode "path", "host", "zone", "userinfo", "fragment", "query"."""
    if "%" not in s and (mode not in ("host", "zone") or _PLAIN.fullmatch(s)):
        return s
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c == "%":
            if i + 2 >= n or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                raise URLError(f"invalid URL escape {s[i:i + 3]!r}")
            if mode == "host" and int(s[i + 1], 16) < 8 and s[i : i + 3] != "%25":
                raise URLError(f"invalid URL escape {s[i:i + 3]!r}")
            if mode == "zone":
                v = int(s[i + 1 : i + 3], 16)
                ch = chr(v)
                if s[i : i + 3] != "%25" and ch != " " and _should_escape_host(ch):
                    raise URLError(f"invalid URL escape {s[i:i + 3]!r}")
            i += 3
            continue
        if mode in ("host", "zone") and ord(c) < 0x80 and _should_escape_host(c):
            raise URLError(f"invalid character {c!r} in host name")
        i += 1
    return s


def _should_escape_host(c: str) -> bool:
    return not (_is_alnum(c) or c in _HOST_OK)


def _valid_optional_port(port: str) -> bool:
    if port == "":
        return True
    if port[0] != ":":
        return False
    return all("0" <= b <= "9" for b in port[1:])


def _parse_host(host: str) -> str:
    if host.startswith("["):
        i = host.rfind("]")
        if i < 0:
            raise URLError("missing ']' in host")
        colon_port = host[i + 1 :]
        if not _valid_optional_port(colon_port):
            raise URLError(f"invalid port {colon_port!r} after host")
        zone = host[:i].find("%25")
        if zone >= 0:
            _unescape(host[:zone], "host")
            _unescape(host[zone:i], "zone")
            _unescape(host[i:], "host")
            return host
    else:
        i = host.rfind(":")
        if i != -1:
            colon_port = host[i:]
            if not _valid_optional_port(colon_port):
                raise URLError(f"invalid port {colon_port!r} after host")
    return _unescape(host, "host")


def _parse_authority(authority: str) -> str:
    i = authority.rfind("@")
    host = _parse_host(authority if i < 0 else authority[i + 1 :])
    if i >= 0:
        userinfo = authority[:i]
        if not all(_is_alnum(c) or c in _USERINFO_OK for c in userinfo):
            raise URLError("net/url: invalid userinfo")
        for part in userinfo.split(":", 1):
            _unescape(part, "userinfo")
    return host


def _get_scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if ("a" <= c <= "z") or ("A" <= c <= "Z"):
            continue
        if ("0" <= c <= "9") or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def is_opaque_with_scheme(raw_url: str, scheme: str) -> bool:
    """True when parse(raw_url) succeeds with lower-case `scheme` and an opaque rest (`data:,x`, `data:;base64,x`).

    The cheap test the common data URL takes: no fragment, no control character, and the rest does not
    start with "/" -- exactly the case where parse returns right after splitting off the scheme."""
    n = len(scheme)
    return (raw_url.startswith(scheme) and raw_url[n : n + 1] == ":" and raw_url[n + 1 : n + 2] != "/"
            and "#" not in raw_url and _CTL.search(raw_url) is None)


def parse(raw_url: str) -> GoURL:
    """Go's `url.Parse`; raises URLError where Go returns an error."""
    u, _, frag = raw_url.partition("#")
    if _CTL.search(u):
        raise URLError("net/url: invalid control character in URL")
    if u == "*":
        return GoURL("", "", "", "*", "")
    scheme, rest = _get_scheme(u)
    scheme = scheme.lower()
    raw_query = ""
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest, _, raw_query = rest.partition("?")
    host = ""
    opaque = ""
    if not rest.startswith("/"):
        if scheme != "":
            if frag:
                _unescape(frag, "fragment")
            return GoURL(scheme, rest, "", "", raw_query)
        segment = rest.split("/", 1)[0]
        if ":" in segment:
            raise URLError("first path segment in URL cannot contain colon")
    if (scheme != "" or not rest.startswith("///")) and rest.startswith("//"):
        authority, rest = rest[2:], ""
        i = authority.find("/")
        if i >= 0:
            authority, rest = authority[:i], authority[i:]
        host = _parse_authority(authority)
    _unescape(rest, "path")
    if frag:
        _unescape(frag, "fragment")
    return GoURL(scheme, opaque, host, rest, raw_query)


def _query_unescape(s: str) -> str | None:
    try:
        _unescape(s, "query")
    except URLError:
        return None
    from urllib.parse import unquote_to_bytes

    return unquote_to_bytes(s.replace("+", " ")).decode("utf-8", "replace")


def query_values(raw_query: str) -> dict[str, list[str]]:
    """Go's `url.ParseQuery`, keeping the pairs it can decode (what `u.Query()` returns)."""
    out: dict[str, list[str]] = {}
    query = raw_query
    while query != "":
        key, _, query = query.partition("&")
        if ";" in key or key == "":
            continue
        k, _, v = key.partition("=")
        dk = _query_unescape(k)
        if dk is None:
            continue
        dv = _query_unescape(v)
        if dv is None:
            continue
        out.setdefault(dk, []).append(dv)
    return out
