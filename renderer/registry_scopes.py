"""Registry scopes: which strings are valid sources, mirrors and registries.conf scopes, when one scope lies
inside another, and the repository name of an image reference. Pure functions over strings.

Rules from `openshift/runtime-utils` `pkg/registries/registries.go` (`ScopeIsNestedInsideScope`,
`IsValidRegistriesConfScope`) and the source and mirror patterns MCO
`pkg/controller/container-runtime-config/helpers.go` keeps in `sourceRegex` / `mirrorRegex` (the same as the
`openshift/api` ImageDigestMirrorSet schema). They are written out by hand rather than as regular expressions:
Python's engine backtracks, and these strings come from manifests.

    host       label ("." label)* [":" digits]      label: letters, digits, "-", not first or last
    component  run (sep run)*                        run: [a-z0-9]+   sep: "." | "_" | "__" | "-"+
    mirror     host ("/" component)*
    source     mirror | "*" ("." label)+
"""

from __future__ import annotations

import unicodedata

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_DIGITS = frozenset("0123456789")


def _label(text: str) -> bool:
    return bool(text) and text[0] in _ALNUM and text[-1] in _ALNUM and all(c in _ALNUM or c == "-" for c in text)


def _host(text: str) -> bool:
    name, colon, port = text.partition(":")
    if colon and (not port or not set(port) <= _DIGITS):
        return False
    return all(_label(part) for part in name.split("."))


def _component(text: str) -> bool:
    i, n = 0, len(text)
    while True:
        start = i
        while i < n and text[i] in _LOWER:
            i += 1
        if i == start:
            return False
        if i == n:
            return True
        if text.startswith("__", i):
            i += 2
        elif text[i] in "._":
            i += 1
        elif text[i] == "-":
            while i < n and text[i] == "-":
                i += 1
        else:
            return False


def valid_mirror(text: str) -> bool:
    """A mirror: host[:port] followed by lowercase path components (no wildcard)."""
    host, *path = text.split("/")
    return _host(host) and all(_component(part) for part in path)


def valid_source(text: str) -> bool:
    """A mirror source: as a mirror, or a wildcard domain `*.example.com`."""
    if text.startswith("*"):
        return text.startswith("*.") and all(_label(part) for part in text[2:].split("."))
    return valid_mirror(text)


def valid_conf_scope(scope: str) -> bool:
    """A registries.conf prefix: anything without `*`, or `*.` followed by no `/`, `@`, `:` or `*`."""
    if not scope:
        return False
    if "*" not in scope:
        return True
    return scope.startswith("*.") and not any(c in scope[2:] for c in "/@:*")


def nested(sub: str, sup: str) -> bool:
    """Whether scope `sub` lies inside scope `sup`: equal, a namespace or repository below it, or a host (or
    sub-domain wildcard) under a wildcard `*.domain` (the host part only: `quay/bar.foo` is not under `*.foo`)."""
    if sub == sup:
        return True
    if len(sub) > len(sup) and sub.startswith(sup) and sub[len(sup)] == "/":
        return True
    if not sup.startswith("*."):
        return False
    if ":" in sub:
        host = sub.split(":", 1)[0]
        return host.endswith(sup[1:]) and "/" not in host
    return sub.split("/", 1)[0].endswith(sup[1:])


def _hostname_char(c: str, dash: bool = False) -> bool:
    return c in _ALNUM or unicodedata.category(c)[0] in "LS" or (dash and c == "-")


def _octets(text: str) -> int:
    """Its length in UTF-8 bytes, as Go counts it (a lone surrogate YAML can write: three, as Go's U+FFFD)."""
    return len(text.encode("utf-8", "surrogatepass"))


def api_hostname(text: str) -> bool:
    """The API server's `format: hostname` (go-openapi strfmt `IsHostname`, RFC 1123 as its HostnamePattern reads
    it): one label (a character, then an optional `-` and up to 62 more), or labels ending in a top-level label
    of 2 to 63 letters; letters, digits and Unicode letters and symbols; at most 255 octets, labels of 63 (Go's
    `len` counts UTF-8 bytes, the pattern's repetitions characters)."""
    labels = text.split(".")
    if not text or _octets(text) > 255 or any(_octets(label) > 63 for label in labels):
        return False
    if len(labels) == 1:
        rest = text[2:] if text[1:2] == "-" else text[1:]
        return _hostname_char(text[0]) and len(rest) <= 62 and all(_hostname_char(c) for c in rest)
    *names, top = labels
    return 2 <= len(top) and all(unicodedata.category(c)[0] == "L" for c in top) and \
        all(name and _hostname_char(name[0]) and _hostname_char(name[-1]) and
            all(_hostname_char(c, dash=True) for c in name[1:-1]) for name in names)


def _tag(text: str) -> bool:
    return 0 < len(text) <= 128 and (text[0] in _ALNUM or text[0] == "_") and \
        all(c in _ALNUM or c in "_.-" for c in text)


_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}  # go-digest's algorithms
_HEX = frozenset("0123456789abcdef")


def _digest(text: str) -> bool:
    """go-digest `digest.Parse` (which docker/reference `Parse` calls): a known algorithm and exactly its length of
    lower-case hex."""
    algorithm, colon, encoded = text.partition(":")
    return bool(colon) and len(encoded) == _DIGEST_LENGTHS.get(algorithm, -1) and set(encoded) <= _HEX


def repository(reference: str) -> tuple[str, bool] | None:
    """(the repository name, whether it has a digest) of a fully qualified image reference, or None where
    `reference.ParseNamed` (containers/image docker/reference) refuses it: it needs a registry host and is
    not shortened (`docker.io/busybox` is `docker.io/library/busybox`)."""
    name, at, digest = reference.partition("@")
    if at and not _digest(digest):
        return None
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1:]
        if not _tag(tag):
            return None
    host, *path = name.split("/")
    if not path or not ("." in host or ":" in host or host == "localhost") or not _host(host):
        return None
    if not all(_component(part) for part in path) or len(name) > 255:
        return None
    if host == "docker.io" and len(path) == 1:
        return None
    return name, bool(at)
