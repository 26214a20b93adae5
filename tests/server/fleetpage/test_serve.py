"""`mco serve` with a browser's event stream open: SIGTERM still stops it (the stream ends, exit 0).

aiohttp waits up to 60 s for open requests at shutdown; an event stream never finishes by itself, so the
page's broadcaster must end it. The bound below is far under that wait and far over a normal stop.
"""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import aiohttp

from tests.serving import mco_serve

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent


async def test_sigterm_ends_open_event_streams(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "tests/server/cluster", tmp_path / "cluster")
    with mco_serve(str(tmp_path / "cluster")) as served:
        base, proc = served.url, served.proc
        async with aiohttp.ClientSession() as http, http.get(f"{base}/ui/events") as stream:
            assert stream.status == 200
            assert await stream.content.readuntil(b"\n\n") == b"retry: 2000\n: connected\n\n"
            proc.send_signal(signal.SIGTERM)
            assert await stream.content.read() == b""  # the server ended the stream
        assert proc.wait(timeout=30) == 0
