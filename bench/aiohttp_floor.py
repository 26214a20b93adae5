"""The reference server of bench/server_bench.py: aiohttp's low-level `web.Server` answering `GET /config/NAME` with
the bytes of ROOT/config/NAME (read once at start), no access log, no checks: what aiohttp's public API costs
before anything of mco's, so the bench shows how much of a goal is left to mco's own code.

    python bench/aiohttp_floor.py PORT ROOT WORKERS [CERT KEY]

WORKERS processes share the port with SO_REUSEPORT (the first one's children, as `mco serve --workers`); CERT
and KEY: HTTPS with mco's own TLS context (server/tls.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import sys
from pathlib import Path

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server.tls import server_context  # noqa: E402  (mco's own TLS settings)


async def serve(port: int, root: Path, tls: ssl.SSLContext | None) -> None:
    bodies = {f"/config/{p.name}": p.read_bytes() for p in (root / "config").iterdir()}
    headers = {"Content-Type": "application/json"}

    async def handler(request: web.BaseRequest) -> web.Response:
        body = bodies.get(request.path)
        return web.Response(body=body, headers=headers) if body is not None else web.Response(status=404)

    server = web.Server(handler, access_log=None)
    await asyncio.get_running_loop().create_server(server, "127.0.0.1", port, backlog=1024, ssl=tls, reuse_port=True)
    await asyncio.Event().wait()


def main() -> None:
    tls = server_context(Path(sys.argv[4]), Path(sys.argv[5])) if len(sys.argv) > 5 else None
    children: list[int] = []
    for _ in range(int(sys.argv[3]) - 1):
        pid = os.fork()
        if pid == 0:
            children.clear()  # a child serves too; the parent forks the rest and stops them when it is stopped
            break
        children.append(pid)
    if children:
        def stop(signum: int, _frame: object) -> None:
            for child in children:
                os.kill(child, signal.SIGTERM)
            sys.exit(0)
        signal.signal(signal.SIGTERM, stop)
    asyncio.run(serve(int(sys.argv[1]), Path(sys.argv[2]), tls))


if __name__ == "__main__":
    main()
