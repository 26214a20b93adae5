"""`mco serve` with a browser's event stream open: SIGTERM still stops it (the stream ends, exit 0).

aiohttp waits up to 60 s for open requests at shutdown; an event stream never finishes by itself, so the
page's broadcaster must end it. The bound below is far under that wait and far over a normal stop.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


async def test_sigterm_ends_open_event_streams(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "tests/server/cluster", tmp_path / "cluster")
    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", str(tmp_path / "cluster"), "--listen",
                             "127.0.0.1:0", "--access-log", "off"], env=ENV, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = ""
        while "serving " not in line:
            line = proc.stderr.readline()
            assert line, "mco serve exited"
        base = line.split("serving ", 1)[1].split(" ", 1)[0]
        async with aiohttp.ClientSession() as http, http.get(f"{base}/ui/events") as stream:
            assert stream.status == 200
            assert await stream.content.readuntil(b"\n\n") == b"retry: 2000\n: connected\n\n"
            proc.send_signal(signal.SIGTERM)
            assert await stream.content.read() == b""  # the server ended the stream
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
