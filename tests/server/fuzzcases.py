"""Seeded hostile and ordinary requests for the server fuzz test and bench/server_soak.py.

Each case is the raw bytes sent on a fresh connection. Kinds (picked by the seeded generator):
ordinary config requests (Accept, Accept-Encoding, If-None-Match, HEAD), pathological heads (many
header lines, long whitespace runs, obs-folds, control bytes anywhere), random mutations of a valid
head, node reports with hostile bodies (deep nesting, Content-Encoding on a plain body, bad names,
non-ASCII tokens), over-long names and odd HTTP versions.
"""

from __future__ import annotations

import json
import random
import socket
from collections.abc import Iterator
from dataclasses import dataclass

IGN = "application/vnd.coreos.ignition+json"
POOLS = ("worker", "big", "master", "nope", "Worker", "a" * 300)
ACCEPTS = (f"{IGN};version=3.3.0, */*;q=0.1", f"{IGN};version=3.4.0", f"{IGN};version=2.2.0",
           f"{IGN};version=4.0.0", "*/*", "", f"{IGN};version=3.1.0;q=0.5, {IGN};version=3.3.0")
ENCODINGS = ("gzip", "GZIP", "gzip;q=0", "identity", "*", "deflate, gzip;q=0.5", "gzip;Q=0.000", "")
CONTROL = bytes([*range(0, 9), *range(10, 32), 127])


@dataclass(frozen=True)
class Case:
    """One request: its kind (for reports) and its bytes."""

    kind: str
    data: bytes


def _head(method: str, target: str, headers: list[tuple[str, str]], version: str = "1.1") -> bytes:
    lines = [f"{method} {target} HTTP/{version}", "Host: fuzz"] + [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")


def ordinary(rng: random.Random) -> Case:
    headers = [("Accept", rng.choice(ACCEPTS)), ("Accept-Encoding", rng.choice(ENCODINGS))]
    if rng.random() < 0.2:
        headers.append(("If-None-Match", rng.choice(("*", '"x"', 'W/"y", "z"'))))
    return Case("ordinary", _head(rng.choice(("GET", "HEAD")), f"/config/{rng.choice(POOLS)}", headers))


def many_lines(rng: random.Random) -> Case:
    count = rng.randint(20, 140)
    lines = b"".join(b"X-%03d: %s\r\n" % (i, b" " * rng.randint(0, 40) + b"v") for i in range(count))
    tail = rng.choice((b"", b"X-Last: a\x01b\r\n", b" folded\r\n", b"X-Last:" + b" " * 3000 + b"\x7f\r\n"))
    return Case("many-lines", b"GET /config/worker HTTP/1.1\r\nHost: fuzz\r\n" + lines + tail + b"\r\n")


def whitespace_run(rng: random.Random) -> Case:
    run = bytes(rng.choice(b" \t") for _ in range(rng.randint(100, 6000)))
    where = rng.choice(("value", "before-colon", "line-start", "request-line"))
    if where == "value":
        line = b"X-Space:" + run + b"v" + rng.choice((b"", b"\x01", b" "))
    elif where == "before-colon":
        line = b"X-Space" + run + b": v"
    elif where == "line-start":
        line = run + b"X: v"
    else:
        return Case("whitespace", b"GET" + run + b"/config/worker HTTP/1.1\r\nHost: fuzz\r\n\r\n")
    return Case("whitespace", b"GET /config/worker HTTP/1.1\r\nHost: fuzz\r\n" + line + b"\r\n\r\n")


def obs_fold(rng: random.Random) -> Case:
    lines = [b"X-%02d:" % i + b" " * rng.randint(0, 1600) + b"v" for i in range(rng.randint(1, 32))]
    lines.insert(rng.randrange(len(lines) + 1), rng.choice((b" ", b"\t", b" \t ")) + b"folded")
    return Case("obs-fold", b"GET /config/worker HTTP/1.1\r\nHost: fuzz\r\n" + b"\r\n".join(lines) + b"\r\n\r\n")


def control_bytes(rng: random.Random) -> Case:
    data = bytearray(ordinary(rng).data)
    for _ in range(rng.randint(1, 3)):
        data.insert(rng.randrange(len(data) - 4), rng.choice(CONTROL))
    return Case("control", bytes(data))


def mutated(rng: random.Random) -> Case:
    data = bytearray(ordinary(rng).data)
    for _ in range(rng.randint(1, 8)):
        op, at = rng.random(), rng.randrange(len(data) - 4)
        if op < 0.4:
            data[at] = rng.randrange(256)
        elif op < 0.7:
            data.insert(at, rng.randrange(256))
        else:
            del data[at]
    if not data.endswith(b"\r\n\r\n"):
        data += b"\r\n\r\n"
    return Case("mutated", bytes(data))


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def report(rng: random.Random) -> Case:
    node = rng.choice(("node-1", "node-2", "Bad_Node", "a" * 300, "nl%0A"))
    body_kind = rng.choice(("ok", "deep", "pool", "garbage", "types", "utf8"))
    if body_kind == "ok":
        body = json.dumps({"pool": "worker", "currentConfig": "", "desiredConfig": "", "state": "Done"}).encode()
    elif body_kind == "deep":
        body = b'{"pool":' + _nested(rng.randint(1000, 60000)) + b"}"
    elif body_kind == "pool":
        body = json.dumps({"pool": rng.choice(("Bad Pool", "a" * 300, "x\n", "../etc")), "currentConfig": "",
                           "desiredConfig": "", "state": "Done"}).encode()
    elif body_kind == "garbage":
        body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    elif body_kind == "types":
        body = json.dumps({"pool": 1, "currentConfig": [], "desiredConfig": {}, "state": None}).encode()
    else:
        body = '{"pool": "w\u00f6rker", "currentConfig": "", "desiredConfig": "", "state": "Done"}'.encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    if rng.random() < 0.3:
        headers.append(("Content-Encoding", rng.choice(("gzip", "deflate", "br", "zstd", "x-unknown"))))
    if rng.random() < 0.3:
        headers.append(("Authorization", rng.choice(("Bearer t\u00f6ken", "Bearer \udcff", "Bearer a", "Basic x"))))
    return Case("report", _head("POST", f"/nodes/{node}/status", headers)[:-2] + b"\r\n" + body)


def other_routes(rng: random.Random) -> Case:
    target = rng.choice(("/pools", "/pools/worker", "/pools/NOPE", "/healthz", "/metrics", "/rendered/x",
                         "/nodes/node-1/desired?pool=worker", "/nodes/" + "a" * 300 + "/desired",
                         "/rendered/" + "b" * 300, "/nodes/n%0A/desired"))
    version = rng.choice(("1.1", "1.1", "1.0", "2.0", "1.2"))
    headers = [("Authorization", "Bearer x")] * rng.randint(0, 2)
    return Case("routes", _head(rng.choice(("GET", "HEAD", "POST", "DELETE")), target, headers, version))


KINDS = (ordinary, many_lines, whitespace_run, obs_fold, control_bytes, mutated, report, other_routes)


def cases(seed: int, count: int) -> Iterator[Case]:
    """`count` cases from `seed` (the same seed gives the same bytes)."""
    rng = random.Random(seed)
    for _ in range(count):
        yield rng.choice(KINDS)(rng)


def first_status(port: int, data: bytes, *, timeout: float = 5.0, host: str = "127.0.0.1") -> int:
    """Send one case on a fresh connection; the status of the first response (0: closed without one)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass  # answered and closed before reading everything: read what it said
        out = b""
        while b"\r\n" not in out:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            out += chunk
    parts = out.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        return 0
    return int(parts[1])
