"""Fixtures of the server tests: a real etcd cluster for the scale-out tests (tests/etcd_cluster.py) and `fleet`,
the controllers and replicas a test starts on its own key prefix of it (stopped afterwards),
`make_app`: an app over a store with its reloader started (the snapshot the routes read; the reloader kept on
the app under RELOADER for a test that polls it), and `make_client`: that app behind aiohttp's test client."""

import itertools
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from fleet.store import Store
from server.app import create_app
from server.metrics import ServerMetrics
from server.settings import ServerSettings
from server.snapshot import PayloadCache
from server.state import ServerState
from server.watch import Reloader
from tests.etcd_cluster import EtcdCluster, etcd_cluster, own_etcd_cluster  # noqa: F401 - pytest fixtures
from tests.server.scale_out import Fleet

MakeClient = Callable[..., Awaitable[TestClient]]
MakeApp = Callable[..., Awaitable[web.Application]]
RELOADER = web.AppKey("test-reloader", Reloader)
_prefixes = itertools.count()


@pytest.fixture
def make_app() -> MakeApp:
    """`await make_app(store, clock=None, **ServerSettings fields)`: the application over `store`, its reloader
    started (with `clock`, a fleet/clock.py Clock, as its time)."""
    async def make(store: Store, *, clock: Any = None, **settings: Any) -> web.Application:
        config = ServerSettings(cluster_dir=None, **settings)
        state, metrics = ServerState(), ServerMetrics()
        reloader = Reloader(state=state, store=store, cache=PayloadCache(options=config.append), metrics=metrics,
                            cluster_dir=None, leader=False)
        await reloader.start()
        app = create_app(state=state, store=store, settings=config, metrics=metrics, clock=clock)
        app[RELOADER] = reloader
        return app
    return make


@pytest.fixture
def make_client(aiohttp_client: Any, make_app: MakeApp) -> MakeClient:
    """`await make_client(store, clock=None, **ServerSettings fields)`: `make_app`'s application behind aiohttp's
    test client (every request routed)."""
    async def make(store: Store, **kwargs: Any) -> TestClient:
        return await aiohttp_client(await make_app(store, **kwargs))
    return make


@pytest.fixture
def fleet(etcd_cluster: EtcdCluster, tmp_path: Path) -> Iterator[Fleet]:  # noqa: F811 - the fixture, by name
    """tests/server/scale_out.py's Fleet on a fresh key prefix of the shared etcd cluster; every process it
    started is stopped after the test."""
    f = Fleet(etcd_cluster.url(f"fleet-{next(_prefixes)}"), tmp_path)
    try:
        yield f
    finally:
        f.stop()
