"""The `/config/<pool>` shortcut (server/app.py `config_first`, which `mco serve` puts in front of aiohttp's router)
answers exactly as the routed handler does where the rules bite: a pool with a token and the --allow/--deny rules
refuse (or serve) the same requests with the same status, body and headers. Clients connect from 127.0.0.1 and
from 127.0.0.2 (both this machine's loopback) so an address rule can refuse one of them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from multidict import CIMultiDict

from fleet.store import MemoryStore
from server.app import config_first
from server.auth import AccessPolicy, parse_networks
from tests.builders import rendered_config
from tests.server.conftest import MakeApp, MakeClient
from tests.server.helpers import ACCEPT_33, SOURCES, ignition_config, publish
from tests.serving import mco_serve

TOKEN = "s3cret"
REFUSED_SOURCE = "127.0.0.2"
CLUSTER = Path(__file__).parent / "cluster"
# (authorization header values, source address, pool, method) -> the status the rules give
REQUESTS: list[tuple[tuple[str, ...], str, str, str, int]] = [
    ((), "127.0.0.1", "worker", "GET", 403),
    (("Bearer wrong",), "127.0.0.1", "worker", "GET", 403),
    (("Basic " + TOKEN,), "127.0.0.1", "worker", "GET", 403),
    ((f"Bearer {TOKEN}", f"Bearer {TOKEN}"), "127.0.0.1", "worker", "GET", 400),  # sent twice: unreadable
    ((f"Bearer {TOKEN}",), "127.0.0.1", "worker", "GET", 200),
    ((f"Bearer {TOKEN}",), "127.0.0.1", "worker", "HEAD", 200),
    ((), "127.0.0.1", "worker", "HEAD", 403),
    ((), "127.0.0.1", "master", "GET", 200),
    ((f"Bearer {TOKEN}",), REFUSED_SOURCE, "worker", "GET", 403),  # the address rule comes first
    ((), REFUSED_SOURCE, "master", "GET", 403),
    ((), REFUSED_SOURCE, "master", "HEAD", 403),
    ((), REFUSED_SOURCE, "nope", "GET", 403),  # refused before the pool is looked up
    ((), "127.0.0.1", "nope", "GET", 404),
]
POLICIES = {
    "deny": dict(deny=parse_networks([REFUSED_SOURCE + "/32"], option="--deny")),
    "allow": dict(allow=parse_networks(["127.0.0.1/32"], option="--allow")),
}


@pytest.fixture
def store() -> MemoryStore:
    s = MemoryStore()
    publish(s, rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=2)))
    publish(s, rendered_config(pool="master", sources=SOURCES, config=ignition_config("3.3.0")))
    return s


@asynccontextmanager
async def shortcut_only(app: web.Application) -> AsyncIterator[str]:
    """The app's `config_first` alone as the handler of aiohttp's low-level `web.Server` on 127.0.0.1 (any request
    it would pass to the router fails the test); yields the base URL."""
    async def router(request: web.BaseRequest) -> web.StreamResponse:
        raise AssertionError(f"{request.method} {request.path} reached the router")

    runner = web.ServerRunner(web.Server(config_first(app, router)))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        host, port = runner.addresses[0][:2]
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


async def answer(base: str, authorization: tuple[str, ...], source: str, pool: str, method: str) -> dict[str, Any]:
    """Status, body and headers (but the date) of one request sent from `source`."""
    headers = CIMultiDict([("Accept", ACCEPT_33), *(("Authorization", a) for a in authorization)])
    connector = aiohttp.TCPConnector(local_addr=(source, 0), force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session, \
            session.request(method, f"{base}/config/{pool}", headers=headers) as response:
        body = await response.read()
        kept = {k: v for k, v in response.headers.items() if k not in ("Date", "Connection", "Keep-Alive")}
        return {"status": response.status, "body": body, "headers": kept}


@pytest.mark.parametrize("rule", sorted(POLICIES))
async def test_the_shortcut_refuses_exactly_as_the_router(make_app: MakeApp, make_client: MakeClient,
                                                         store: MemoryStore, rule: str) -> None:
    policy = AccessPolicy(tokens={"worker": (TOKEN,)}, **POLICIES[rule])
    routed = await make_client(store, policy=policy)
    routed_base = str(routed.make_url("")).rstrip("/")
    async with shortcut_only(await make_app(store, policy=policy)) as shortcut:
        for authorization, source, pool, method, status in REQUESTS:
            via_router = await answer(routed_base, authorization, source, pool, method)
            via_shortcut = await answer(shortcut, authorization, source, pool, method)
            case = (authorization, source, pool, method)
            assert via_router["status"] == status, (case, via_router)
            assert via_shortcut == via_router, case
            if status != 200:
                assert b"storage" not in via_shortcut["body"], case  # no config bytes in a refusal


async def test_mco_serve_answers_through_its_shortcut_as_the_router_does(make_client: MakeClient, store: MemoryStore,
                                                                       tmp_path: Path) -> None:
    """The real `mco serve` (its composition puts `config_first` before the router) with a pool token and a
    --deny rule: every refusal is the routed app's, byte for byte, and what the rules let through is served."""
    routed = await make_client(store, policy=AccessPolicy(tokens={"worker": (TOKEN,)}, **POLICIES["deny"]))
    routed_base = str(routed.make_url("")).rstrip("/")
    token_file = tmp_path / "worker.token"
    token_file.write_text(TOKEN + "\n")
    with mco_serve(str(CLUSTER), "--store", str(tmp_path / "store"), "--token", f"worker={token_file}",
                   "--deny", REFUSED_SOURCE + "/32") as served:
        for authorization, source, pool, method, status in REQUESTS:
            case = (authorization, source, pool, method)
            got = await answer(served.url, authorization, source, pool, method)
            assert got["status"] == status, (case, got)
            if status != 200:  # a served body is the cluster's config, not the in-process store's
                expected = await answer(routed_base, authorization, source, pool, method)
                assert (got["body"], got["headers"]) == (expected["body"], expected["headers"]), case
