"""A pathological request head is answered at once and never freezes the event loop.

The server parses no HTTP itself (aiohttp's llhttp parser does); these heads used to send a hand-written
backtracking regex into exponential time (9 s for 258 bytes, forever for 52 KB): the answer would not come
within the exchange's 10 s. How long the loop ever runs without its heartbeat is measured in bench/server_soak.py,
not asserted here.
"""

from __future__ import annotations

import pytest

from server.settings import ServerSettings
from tests.server.helpers import ACCEPT_33
from tests.server.live import LiveServer, exchange, status_of


def _control_byte_head() -> bytes:
    """24 ordinary header lines, then one holding a control byte: 258 bytes."""
    head = b"GET /config/worker HTTP/1.1\r\n" + b"".join(b"X-%02d: v\r\n" % i for i in range(24))
    last = b"X: a\x01"
    pad = 258 - len(head) - len(last) - 4
    return head + last + b"b" * pad + b"\r\n\r\n"


def _obs_fold_head() -> bytes:
    """32 header lines with long whitespace runs, then an obs-fold continuation line: ~52 KB."""
    lines = [b"GET /config/worker HTTP/1.1", b"Host: x"]
    lines += [b"X-%02d:" % i + b" " * 1600 + b"v" for i in range(32)]
    lines.append(b" \t folded")
    return b"\r\n".join(lines) + b"\r\n\r\n"


HEADS = [
    pytest.param(_control_byte_head(), id="24-lines-then-control-byte"),
    pytest.param(_obs_fold_head(), id="obs-fold-52k"),
    pytest.param(b"GET /config/worker HTTP/1.1\r\nHost: x\r\n" + b"X-A:" + b" \t" * 3000 + b"\x7f\r\n\r\n",
                 id="whitespace-run-then-del"),
]


@pytest.fixture(scope="module")
def live() -> LiveServer:
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log=None)
    with LiveServer(settings) as server:
        yield server


def test_heads_have_the_sizes_that_froze_a_hand_written_parser() -> None:
    assert len(_control_byte_head()) == 258
    assert 51_000 < len(_obs_fold_head()) < 53_000


@pytest.mark.parametrize("head", HEADS)
def test_pathological_head_is_refused_without_stalling(live: LiveServer, head: bytes) -> None:
    answer = exchange(live.port(), head)
    assert 400 <= status_of(answer) < 500, answer[:200]
    ok = exchange(live.port(), f"GET /config/worker HTTP/1.1\r\nHost: x\r\nAccept: {ACCEPT_33}\r\n"
                               "Connection: close\r\n\r\n".encode())
    assert status_of(ok) == 200


def test_bytes_of_a_new_version_are_built_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Translating and gzipping a large config on the loop would stall every connection: a thread does it."""
    import threading

    from server.payload import ConfigPayload

    threads: list[str] = []
    build = ConfigPayload._build

    def recorded(self: ConfigPayload, version: str) -> object:
        threads.append(threading.current_thread().name)
        return build(self, version)

    monkeypatch.setattr(ConfigPayload, "_build", recorded)
    settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log=None)
    with LiveServer(settings) as live:
        for version in ("3.2.0", "3.4.0", "3.2.0"):
            ign = f"application/vnd.coreos.ignition+json;version={version}"
            for close in ("", "Connection: close\r\n"):  # the cached answers, and the aiohttp route
                answer = exchange(live.port(), f"GET /config/big HTTP/1.1\r\nHost: x\r\nAccept: {ign}\r\n"
                                               f"{close}\r\n".encode())
                assert status_of(answer) == 200
    assert len(threads) == 2  # once per version
    assert "live-server" not in threads
