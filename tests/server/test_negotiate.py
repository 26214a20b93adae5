"""Accept header -> spec version, as the MCS decides it (MCO `pkg/server/api.go`; cases from MCS api_test.go)."""

from __future__ import annotations

import pytest

from server.negotiate import MalformedAccept, UnsatisfiableVersion, choose, parse_q, parse_semver

IGN = "application/vnd.coreos.ignition+json"

# (id, header, expected version | None for the default | exception type)
# Upstream: MCO pkg/server/api.go detectSpecVersionFromAcceptHeader -- the Ignition elements are tried in q order, an
# unserved version only notes the error (400 when no element is served); the served ranges are [2.2.0, 3.0.0) -> 2.2.0,
# [3.Y.0, 3.Y+1.0) -> 3.Y.0 from 3.1.0, and [3.5.0, 4.0.0) -> 3.5.0 (the version it renders), compared with
# coreos/go-semver's LessThan (a pre-release sorts before its release); q is strconv.ParseFloat(q, 32).
CASES = [
    ("no-header", None, None),
    ("empty", "", None),
    ("curl", "*/*", None),
    ("text-plain", "text/plain", None),
    ("garbage", "an-invalid-accept-header", None),
    ("ignition-no-version", IGN, None),
    ("ignition-2.14", f"{IGN};version=3.3.0, */*;q=0.1", "3.3.0"),
    ("ignition-2.3", f"{IGN};version=3.1.0, */*;q=0.1", "3.1.0"),
    ("ignition-2.7", f"{IGN};version=3.2.0, */*;q=0.1", "3.2.0"),
    ("ignition-2.15", f"{IGN};version=3.4.0, */*;q=0.1", "3.4.0"),
    ("ignition-2.20", f"{IGN};version=3.5.0, */*;q=0.1", "3.5.0"),
    ("ignition-2.26-gets-rendered", f"{IGN};version=3.6.0, */*;q=0.1", "3.5.0"),
    ("ignition-2.1-400", f"{IGN};version=3.0.0, */*;q=0.1", MalformedAccept),
    ("patch-ignored", f"{IGN};version=3.2.7", "3.2.0"),
    ("prerelease-below-its-release", f"{IGN};version=3.4.0-experimental", "3.3.0"),
    ("prerelease-of-3.1-400", f"{IGN};version=3.1.0-rc.1", MalformedAccept),
    ("prerelease-of-3.0-is-spec-2", f"{IGN};version=3.0.0-rc", UnsatisfiableVersion),
    ("prerelease-of-4-gets-rendered", f"{IGN};version=4.0.0-alpha", "3.5.0"),
    ("metadata-ignored", f"{IGN};version=3.2.0+build.5", "3.2.0"),
    ("empty-prerelease-is-release", f"{IGN};version=3.4.0-", "3.4.0"),
    ("newer-minor-gets-rendered", f"{IGN};version=3.99.0, */*;q=0.1", "3.5.0"),
    ("next-minor-gets-rendered", f"{IGN};version=3.7.0", "3.5.0"),
    ("major-4-400", f"{IGN};version=4.0.0, */*;q=0.1", MalformedAccept),
    ("major-1-400", f"{IGN};version=1.0.0", MalformedAccept),
    ("spec-2.1-400", f"{IGN};version=2.1.0", MalformedAccept),
    ("spec-2.2-406", f"{IGN};version=2.2.0", UnsatisfiableVersion),
    ("ignition-0.x-legacy-406", f"{IGN}; version=2.4.0, {IGN}; version=1; q=0.5, */*; q=0.1", UnsatisfiableVersion),
    ("version-1-ignored", f"{IGN}; version=1", None),
    ("version-two-parts-ignored", f"{IGN};version=3.3", None),
    ("version-quoted-ignored", f'{IGN};version="3.3.0"', None),
    ("spaces", f"  {IGN} ;  version=3.2.0 ; q=0.9 ", "3.2.0"),
    ("q-order", f"{IGN};version=3.1.0;q=0.2, {IGN};version=3.4.0;q=0.8", "3.4.0"),
    ("q-order-stable", f"{IGN};version=3.1.0;q=0.5, {IGN};version=3.4.0;q=0.5", "3.1.0"),
    ("q-default-1", f"{IGN};version=3.1.0;q=0.9, {IGN};version=3.2.0", "3.2.0"),
    ("unserved-then-served", f"{IGN};version=4.0.0, {IGN};version=3.3.0;q=0.5", "3.3.0"),
    ("spec-3.0-then-served", f"{IGN};version=3.0.0, {IGN};version=3.2.0;q=0.5, */*;q=0.1", "3.2.0"),
    ("none-served-400", f"{IGN};version=3.0.0, {IGN};version=1.0.0;q=0.5, */*;q=0.1", MalformedAccept),
    ("served-before-unserved", f"{IGN};version=3.2.0;q=0.5, {IGN};version=4.0.0;q=0.1", "3.2.0"),
    ("spec-2-by-q-first-406", f"{IGN};version=2.4.0, {IGN};version=3.2.0;q=0.5", UnsatisfiableVersion),
    ("spec-3-by-q-first", f"{IGN};version=2.4.0;q=0.5, {IGN};version=3.2.0", "3.2.0"),
    ("q-float32-equal-stable", f"{IGN};version=3.1.0;q=0.3, {IGN};version=3.4.0;q=0.30000001", "3.1.0"),
    ("q-beyond-float32-is-1", f"{IGN};version=3.1.0, {IGN};version=3.4.0;q=1e39", "3.1.0"),
    ("bad-q-ignored", f"{IGN};version=3.1.0;q=abc, {IGN};version=3.4.0;q=0.5", "3.1.0"),
    ("first-version-param-wins", f"{IGN};version=3.1.0;version=3.4.0", "3.1.0"),
    ("invalid-then-valid-version", f"{IGN};version=x;version=3.4.0", "3.4.0"),
    ("other-type-same-subtype", "foo/vnd.coreos.ignition+json;version=3.2.0", "3.2.0"),
    ("wrong-subtype", "application/json;version=3.2.0", None),
    ("subtype-case-sensitive", "application/VND.COREOS.IGNITION+JSON;version=3.2.0", None),
    ("no-slash-element-skipped", f"ignition;version=3.1.0, {IGN};version=3.2.0", "3.2.0"),
    ("star-higher-q-than-ignition", f"*/*;q=1, {IGN};version=3.3.0;q=0.5", "3.3.0"),
    ("control-char-400", f"{IGN};version=3.3.0\x01", MalformedAccept),
    ("non-ascii-400", f"{IGN};version=3.3.0;é", MalformedAccept),
]


@pytest.mark.parametrize(("header", "expected"), [(h, e) for _, h, e in CASES], ids=[c[0] for c in CASES])
def test_choose(header: str | None, expected: object) -> None:
    choice = choose(header)
    if isinstance(expected, type):
        assert isinstance(choice.error, expected)
        assert choice.error.status == (406 if expected is UnsatisfiableVersion else 400)
        assert choice.version is None
    else:
        assert choice.error is None
        assert choice.version == expected


@pytest.mark.parametrize(("text", "value"), [
    ("3.3.0", (3, 3, 0, True)), ("3.3.0-experimental", (3, 3, 0, False)), ("3.3.0+build.1", (3, 3, 0, True)),
    ("3.3.0-", (3, 3, 0, True)), ("3.+1.0", None), ("1", None), ("3.3", None), ("v3.3.0", None), ("3.3.0.1", None),
    ("", None), ("3.x.0", None),
], ids=lambda v: repr(v))
def test_parse_semver(text: str, value: object) -> None:
    assert parse_semver(text) == value


@pytest.mark.parametrize(("text", "value"), [
    ("0.5", 0.5), ("1", 1.0), ("0.25e1", 2.5), (".5", 0.5), ("abc", None), ("1_0", None), ("", None),
    ("1e39", None), ("inf", float("inf")),
    # Go's ErrRange for a value float() reads as inf; a hex float needs its binary exponent (strconv.ParseFloat)
    ("1e400", None), ("0x1", None), ("0x1.8p1", 3.0), ("1.", 1.0),
    # long attacker text: read in one pass (the patterns split a text one way only), refused or read
    ("1" * 8000 + "x", None), ("0." + "0" * 8000 + "5", 0.0),
], ids=lambda v: repr(v)[:40])
def test_parse_q(text: str, value: float | None) -> None:
    assert parse_q(text) == value


def test_q_is_a_float32() -> None:
    """strconv.ParseFloat(q, 32): 0.3 and 0.30000001 are the same float32 (api.go parseAcceptHeader)."""
    assert parse_q("0.3") == parse_q("0.30000001") != 0.3
