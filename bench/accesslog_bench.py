"""Benchmark: what one access-log line costs the event loop, against stdlib logging of the same JSON line.

Builds one realistic request (aiohttp's `make_mocked_request`: a config GET with Ignition's Accept and
User-Agent headers and the handler's note) and response, then calls `JsonAccessLogger.log` N times on the
`AccessLog` that `mco serve` uses (a file in a temporary directory), and, as the reference, a `json.dumps`
line through `logging.Logger.info` to a `FileHandler` (what a plain stdlib setup does on the loop). Prints,
best of `--repeat`, per line: CPU microseconds of the calling thread (`time.thread_time`: what the event
loop pays, whatever other load the machine has), CPU microseconds of the whole process (the writer thread
included) and wall microseconds on the calling thread (which waits for the GIL and for other processes).

    .venv/bin/python bench/accesslog_bench.py [--lines 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import make_mocked_request

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server.accesslog import LOG_NOTE, AccessLog, JsonAccessLogger  # noqa: E402

ACCEPT = "application/vnd.coreos.ignition+json;version=3.3.0, */*;q=0.1"


def _request() -> web.Request:
    request = make_mocked_request("GET", "/config/worker", headers={
        "Host": "10.0.0.1:22624", "Accept": ACCEPT, "User-Agent": "Ignition/2.14.0", "Accept-Encoding": "gzip"})
    request[LOG_NOTE] = {"pool": "worker", "version": "3.3.0", "rendered": "rendered-worker-0123456789abcdef"}
    return request


def _stdlib_reference(path: Path) -> logging.Logger:
    logger = logging.getLogger("bench.access.reference")
    logger.propagate = False
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return logger


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    request, response = _request(), web.Response(body=b"x" * 3504)
    tmp = Path(tempfile.mkdtemp(prefix="mco-accesslog-"))
    reference = _stdlib_reference(tmp / "reference.log")
    inf = (float("inf"),) * 3
    best = {"mco AccessLog": inf, "stdlib logging + json.dumps": inf}
    for _ in range(args.repeat):
        sink = AccessLog(open(tmp / "access.log", "wb"), close_out=True)
        log = JsonAccessLogger(sink, "").log
        own, cpu, wall = time.thread_time(), time.process_time(), time.perf_counter()
        for _ in range(args.lines):
            log(request, response, 0.0012)
        own, wall = time.thread_time() - own, time.perf_counter() - wall
        sink.close()
        cpu = time.process_time() - cpu
        best["mco AccessLog"] = min(best["mco AccessLog"], (own, cpu, wall))
        headers = request.headers
        own, cpu, wall = time.thread_time(), time.process_time(), time.perf_counter()
        for _ in range(args.lines):
            reference.info(json.dumps({
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "remote": request.remote,
                "method": request.method, "path": request.rel_url.path, "status": response.status,
                "bytes": response.body_length, "ms": 1.2, "ua": headers.get("User-Agent", ""),
                "accept": headers.get("Accept", ""), **request[LOG_NOTE]}, sort_keys=True))
        own, wall = time.thread_time() - own, time.perf_counter() - wall
        cpu = time.process_time() - cpu
        best["stdlib logging + json.dumps"] = min(best["stdlib logging + json.dumps"], (own, cpu, wall))
    lines = (tmp / "access.log").read_text().splitlines()
    assert len(lines) == args.lines and json.loads(lines[-1])["pool"] == "worker"
    print(f"{args.lines} lines, best of {args.repeat}")
    print(f"{'access log':<30}{'loop CPU µs':>12}{'process CPU µs':>16}{'loop wall µs':>14}  (per line)")
    for name, figures in best.items():
        print(f"{name:<30}" + "".join(f"{f / args.lines * 1e6:>{w}.2f}" for f, w in zip(figures, (12, 16, 14), strict=True)))
    goal = best["mco AccessLog"][0] / args.lines * 1e6
    print(f"goal < 10 µs of loop CPU per line: {'met' if goal < 10 else 'NOT met'} ({goal:.2f} µs)")
    return 0 if goal < 10 else 1


if __name__ == "__main__":
    sys.exit(main())
