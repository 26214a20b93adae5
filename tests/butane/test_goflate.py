"""Go's gzip at BestCompression, reimplemented: byte-identical to Go's compress/gzip (Butane's compressor).

Two known outputs of Go's gzip are pinned here; with the Go toolchain installed (Debian's golang-go, a
test dependency) every input is also compressed by Go itself (tests/butane/gogzip) and compared.
"""

from __future__ import annotations

import base64
import gzip
import os
import random
import subprocess
from pathlib import Path

import pytest

from butane.goflate import gzip_best
from tests.tools import real_tool

GO_KNOWN = [
    ("hello", b"hello world", "H4sIAAAAAAAC/8pIzcnJVyjPL8pJAQQAAP//hRFKDQsAAAA="),
    (
        "welcome",
        b"Welcome <user> & friends!\n" * 3,
        "H4sIAAAAAAAC/wpPzUnOz01VsCktTi2yU1BTSCvKTM1LKVbkIkcGEAAA///TzfVTTgAAAA==",
    ),
]


@pytest.mark.parametrize(("name", "data", "expected"), GO_KNOWN, ids=[k[0] for k in GO_KNOWN])
def test_known_go_output(name: str, data: bytes, expected: str) -> None:
    assert base64.b64encode(gzip_best(data)).decode() == expected


def _inputs() -> list[tuple[str, bytes]]:
    rng = random.Random(20261202)
    source = (Path(__file__).resolve().parents[2] / "butane" / "transpile.py").read_bytes()
    return [
        ("empty", b""),
        ("one-byte", b"a"),
        ("repeats", b"abc" * 300),
        ("source-code", source),
        ("random-binary", bytes(rng.randrange(256) for _ in range(3000))),
        ("small-alphabet-1k", bytes(rng.choice(b"ab \n") for _ in range(1000))),
        ("long-run", b"x" * 40000),
        ("window-shift-150k", bytes(rng.choice(b"abcdefgh\n ") for _ in range(150_000))),
        ("unit-file", b"[Unit]\nDescription=Example\n\n[Service]\nExecStart=/usr/bin/true\n" * 20),
    ]


INPUTS = _inputs()


@pytest.mark.parametrize(("name", "data"), INPUTS, ids=[i[0] for i in INPUTS])
def test_round_trips(name: str, data: bytes) -> None:
    out = gzip_best(data)
    assert out[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    assert gzip.decompress(out) == data


@pytest.fixture(scope="module")
def go_gzip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = real_tool("go")
    out = tmp_path_factory.mktemp("gogzip") / "gogzip"
    env = {
        **os.environ,
        "GOCACHE": str(out.parent / "cache"),
        "GOPATH": str(out.parent / "gopath"),
        "GO111MODULE": "off",
    }
    source = Path(__file__).resolve().parent / "gogzip" / "main.go"
    subprocess.run([str(go), "build", "-o", str(out), str(source)], check=True, env=env, timeout=300)
    return out


@pytest.mark.realtool
@pytest.mark.parametrize(("name", "data"), INPUTS, ids=[i[0] for i in INPUTS])
def test_identical_to_go(go_gzip: Path, name: str, data: bytes) -> None:
    expected = subprocess.run([str(go_gzip)], input=data, capture_output=True, check=True, timeout=60).stdout
    assert gzip_best(data) == expected
