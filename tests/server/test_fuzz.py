"""Seeded fuzz over raw sockets (tests/server/fuzzcases.py): every case answered without a 5xx (505 for
an unsupported HTTP version is the one allowed), nearly every case answered before the read deadline, and the
server healthy afterwards.

Bounded for CI: 2,000 cases from a fixed seed, 16 at a time. How long the event loop ever runs without reaching
its heartbeat is a measure, not a test: bench/server_soak.py runs 100,000+ of these cases and fails on any
stretch over 100 ms (figures in bench/README.md).
"""

from __future__ import annotations

import collections
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from server.settings import Limits, ServerSettings
from tests.server.fuzzcases import cases, first_status
from tests.server.live import LiveServer, exchange, status_of

SEED = int(os.environ.get("MCO_FUZZ_SEED", "18"))
COUNT = int(os.environ.get("MCO_FUZZ_CASES", "2000"))


def test_fuzz_cases_get_no_5xx_and_leave_the_server_healthy(tmp_path: Path) -> None:
    from fleet.directory_store import DirectoryStore
    from tests.server.live import demo_store

    store = DirectoryStore(tmp_path / "store")
    source = demo_store()
    for name in source.list_rendered():
        store.put_rendered(source.get_rendered(name))
    for pool in source.list_pools():
        store.put_pool(source.get_pool(pool))
    settings = ServerSettings(cluster_dir=None, store_dir=tmp_path / "store", listen=("127.0.0.1", 0),
                              access_log=None, limits=Limits(read_timeout=1.0))
    outcomes: collections.Counter[tuple[str, int]] = collections.Counter()
    with LiveServer(settings, store) as live:
        port = live.port()

        def run(case: tuple[str, bytes]) -> tuple[str, int]:
            return case[0], first_status(port, case[1])

        with ThreadPoolExecutor(16) as pool:
            for kind, status in pool.map(run, ((c.kind, c.data) for c in cases(SEED, COUNT))):
                outcomes[(kind, status)] += 1
        healthy = status_of(exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
    server_errors = {k: n for k, n in outcomes.items() if k[1] >= 500 and k[1] != 505}
    assert not server_errors, server_errors
    assert healthy == 200
    assert sum(outcomes.values()) == COUNT
    answered = sum(n for (_, status), n in outcomes.items() if status)
    assert answered > COUNT * 0.9, outcomes  # the rest: incomplete heads closed by the read deadline
    assert not list((tmp_path / "store").rglob("*\n*")), "a name with a newline reached the store"
