"""Every fleet page over a real store (memory and directory), in process: content, errors, escaping, access."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from markupsafe import escape

from fleet.conditions import ConditionProblem
from fleet.etcd_url import parse_url
from fleet.rendered import Condition
from fleet.store import Store
from fleet.store_open import close_store, open_store
from server.app import create_app
from server.auth import AccessPolicy, parse_networks
from server.metrics import ServerMetrics
from server.settings import ServerSettings
from server.state import ServerState
from tests.fleet.stores import STORE_KINDS, store_of_kind
from tests.server.fleetpage.fleet import (
    DEGRADED_MESSAGE,
    SECRET_CONTENT,
    Rollout,
    external_urls,
    html_problems,
    mid_rollout,
)

MakeClient = Callable[..., Awaitable[TestClient]]


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Every kind of store the server runs over (etcd: a real 3-member cluster, a key prefix per test)."""
    with store_of_kind(request.param, request, tmp_path) as opened:
        yield opened


@pytest.fixture
def rollout(store: Store) -> Rollout:
    return mid_rollout(store)


@pytest.fixture
def make_client(aiohttp_client: Any) -> MakeClient:
    async def make(store: Store, **settings: Any) -> TestClient:
        config = ServerSettings(cluster_dir=None, poll_interval=0.05, **settings)
        app = create_app(state=ServerState(), store=store, settings=config, metrics=ServerMetrics())
        client: TestClient = await aiohttp_client(app)
        return client
    return make


def _pages(r: Rollout) -> list[str]:
    return ["/", "/ui/", "/ui/pools/worker", "/ui/pools/worker?state=Degraded&sort=name&order=desc",
            f"/ui/pools/worker/diff?from={r.old.name}&to={r.new.name}", "/ui/nodes/worker-2", "/ui/nodes/worker-0",
            "/ui/pools/master", "/ui/pools/nope", "/ui/pools/worker?page=x"]


async def test_every_page_is_well_formed_self_contained_and_locked_down(store: Store, rollout: Rollout,
                                                                        make_client: MakeClient) -> None:
    client = await make_client(store)
    for url in _pages(rollout):
        response = await client.get(url)
        text = await response.text()
        assert response.content_type == "text/html", url
        assert html_problems(text) == [], url
        assert external_urls(text) == [], url
        csp = response.headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "unsafe" not in csp and "http" not in csp
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert SECRET_CONTENT not in text and "content 1" not in text, url
        assert "<script>alert" not in text, url


async def test_overview_shows_counts_bar_and_conditions(store: Store, rollout: Rollout,
                                                        make_client: MakeClient) -> None:
    client = await make_client(store)
    text = await (await client.get("/ui/")).text()
    row = text[text.index('id="pool-worker"'):text.index("</tr>", text.index('id="pool-worker"'))]
    machines = len(rollout.nodes)
    assert f'<td data-label="Machines" class="num machines">{machines}</td>' in row
    assert f"1/{machines} updated" in row and "1 updating" in row and "1 degraded" in row
    assert "2 unavailable" in row  # Working + Degraded, as GET /pools counts them
    assert f'class="seg-updated" x="0" y="0" width="{1000 // machines}"' in row
    assert "NodeDegraded" in row and "&lt;script&gt;alert(1)&lt;/script&gt;" in row
    assert rollout.new.name in row
    assert '<td data-label="maxUnavailable" class="num">2</td>' in row


async def test_pool_page_lists_machines_history_and_diff_form(store: Store, rollout: Rollout,
                                                              make_client: MakeClient) -> None:
    client = await make_client(store)
    text = await (await client.get("/ui/pools/worker?state=Degraded")).text()
    assert 'id="node-worker-2"' in text and 'id="node-worker-0"' not in text
    assert "&lt;script&gt;" in text
    text = await (await client.get("/ui/pools/worker")).text()
    assert text.index('id="node-worker-2"') < text.index('id="node-worker-1"') < text.index('id="node-worker-0"')
    assert f"diff?from={rollout.old.name}&amp;to={rollout.new.name}" in text
    assert text.count("<option") >= 2 + 4 + 5  # states, sorts, orders and configs


async def test_diff_names_what_changes_and_whether_it_reboots(store: Store, rollout: Rollout,
                                                              make_client: MakeClient) -> None:
    client = await make_client(store)
    text = await (await client.get(f"/ui/pools/worker/diff?from={rollout.old.name}&to={rollout.new.name}")).text()
    assert "Reboot: <strong>yes</strong>" in text
    assert "<code>/etc/demo/file1.conf</code>" in text and "<code>nosmt</code>" in text
    assert "kernelArguments changed: reboot" in text
    text = await (await client.get(f"/ui/pools/worker/diff?from={rollout.new.name}&to={rollout.new.name}")).text()
    assert "Reboot: <strong>no</strong>" in text and "No change." in text


@pytest.mark.parametrize(("url", "status", "says"), [
    ("/ui/pools/worker?state=bad", 400, "query state:"),
    ("/ui/pools/worker?colour=red", 400, "query colour:"),
    ("/ui/pools/Worker", 400, "path pool:"),
    ("/ui/pools/nope", 404, "pools/nope"),
    ("/ui/nodes/nope", 404, "nodes/nope"),
    ("/ui/nodes/UPPER", 400, "path name:"),
    ("/ui/pools/worker/diff?from=x", 400, "query to:"),
    ("/ui/pools/worker/diff?from=a&to=b&x=1", 400, "query x:"),
    ("/ui/pools/worker/diff?from=rendered-worker-a&to=rendered-worker-b", 404, "rendered/rendered-worker-a"),
    ("/ui/static/other.js", 404, ""),
], ids=["state", "unknown-param", "pool-name", "unknown-pool", "unknown-node", "node-name", "diff-missing-to",
        "diff-unknown-param", "diff-unknown-config", "static-unknown"])
async def test_client_errors_name_the_field(store: Store, rollout: Rollout, make_client: MakeClient,
                                            url: str, status: int, says: str) -> None:
    client = await make_client(store)
    response = await client.get(url)
    assert response.status == status
    assert says in await response.text()


async def test_diff_refuses_a_config_of_another_pool(store: Store, rollout: Rollout, make_client: MakeClient) -> None:
    client = await make_client(store)
    master = store.get_pool("master").current
    response = await client.get(f"/ui/pools/worker/diff?from={master}&to={rollout.new.name}")
    assert response.status == 404
    assert "query from: not a rendered config of pool worker" in await response.text()


async def test_machine_page_shows_the_exact_cause_and_reports_over_time(store: Store, rollout: Rollout,
                                                                        make_client: MakeClient) -> None:
    client = await make_client(store)
    text = await (await client.get("/ui/nodes/worker-2")).text()
    cause = text[text.index('id="cause"'):text.index("</section>", text.index('id="cause"'))]
    assert str(escape(DEGRADED_MESSAGE)) in cause and "&lt;script&gt;" in cause
    for state, message in (("Working", "retrying"), ("Done", "")):
        body = {"pool": "worker", "currentConfig": rollout.new.name if state == "Done" else rollout.old.name,
                "desiredConfig": rollout.new.name, "state": state, "message": message}
        assert (await client.post("/nodes/worker-2/status", json=body)).status == 200
    text = await (await client.get("/ui/nodes/worker-2")).text()
    reports = text[text.index('id="reports"'):]
    assert reports.count("<tr>") == 1 + 3  # header, then the seen, retrying and done reports
    assert reports.index("state-done") < reports.index("retrying") < reports.index("rolled back")
    assert 'id="cause"' not in text


async def test_paging_a_large_pool(store: Store, make_client: MakeClient) -> None:
    mid_rollout(store, done_old=247)
    client = await make_client(store)
    text = await (await client.get("/ui/pools/worker?sort=name")).text()
    assert "Machines 1–100 of 250" in text and text.count('class="machine ') == 100
    assert 'href="?sort=name&amp;page=2#machines" rel="next"' in text
    text = await (await client.get("/ui/pools/worker?sort=name&page=3")).text()
    assert "Machines 201–250 of 250" in text and text.count('class="machine ') == 50


async def test_events_say_changed_when_a_report_arrives(store: Store, rollout: Rollout,
                                                        make_client: MakeClient) -> None:
    client = await make_client(store)
    events = await client.get("/ui/events")
    assert events.headers["Content-Type"] == "text/event-stream"
    assert (await events.content.readuntil(b"\n\n")).startswith(b"retry:")
    await asyncio.sleep(0.2)  # let the watcher take its first listing
    body = {"pool": "worker", "currentConfig": rollout.new.name, "desiredConfig": rollout.new.name, "state": "Done"}
    assert (await client.post("/nodes/worker-1/status", json=body)).status == 200
    chunk = await asyncio.wait_for(events.content.readuntil(b"\n\n"), 30)
    while chunk.startswith(b":"):
        chunk = await asyncio.wait_for(events.content.readuntil(b"\n\n"), 30)
    assert chunk == b"event: change\ndata: 1\n\n"
    events.close()


# -- access ------------------------------------------------------------------------------------------------


async def test_address_rules_apply(store: Store, rollout: Rollout, make_client: MakeClient) -> None:
    client = await make_client(store, policy=AccessPolicy(deny=parse_networks(["127.0.0.0/8", "::1"], option="t")))
    for url in ("/", "/ui/pools/worker", "/ui/nodes/worker-2", "/ui/events"):
        response = await client.get(url)
        assert response.status == 403, url
        assert "worker-2" not in await response.text()


async def test_tokens_ask_and_open_only_their_pool(store: Store, rollout: Rollout, make_client: MakeClient) -> None:
    client = await make_client(store, policy=AccessPolicy(tokens={"worker": ("w-secret=1",)}))
    text = await (await client.get("/ui/")).text()
    assert 'id="pool-master"' in text and 'id="pool-worker"' not in text
    assert "1 pool needs a token" in text and 'action="/ui/token"' in text
    assert html_problems(text) == []
    for url in ("/ui/pools/worker", "/ui/nodes/worker-2", f"/ui/pools/worker/diff?from={rollout.old.name}&to="
                f"{rollout.new.name}"):
        response = await client.get(url)
        assert response.status == 403, url
        text = await response.text()
        assert html_problems(text) == []
        assert "needs a token" in text and "worker-2" not in text.replace('name="next" value="/ui/nodes/worker-2"', "")
        assert (await client.get(url, headers={"Authorization": "Bearer w-secret=1"})).status == 200
        assert (await client.get(url, headers={"Authorization": "Bearer nope"})).status == 403
    refused = await client.post("/ui/token", data={"token": "nope", "next": "/ui/pools/worker"},
                                allow_redirects=False)
    assert refused.status == 403 and "Set-Cookie" not in refused.headers
    accepted = await client.post("/ui/token", data={"token": "w-secret=1", "next": "/ui/pools/worker?state=Done"},
                                 allow_redirects=False)
    assert accepted.status == 303 and accepted.headers["Location"] == "/ui/pools/worker?state=Done"
    cookie = accepted.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert (await client.get("/ui/pools/worker")).status == 200  # the client keeps the cookie
    assert 'id="pool-worker"' in await (await client.get("/ui/")).text()
    out = await client.post("/ui/logout", allow_redirects=False)
    assert out.status == 303
    assert (await client.get("/ui/pools/worker")).status == 403


async def test_with_tokens_an_unknown_machine_is_no_probe(store: Store, rollout: Rollout,
                                                          make_client: MakeClient) -> None:
    """A 404 for an unknown name next to a 403 for a known one would tell a stranger which machines exist."""
    client = await make_client(store, policy=AccessPolicy(tokens={"worker": ("w-secret=1",)}))
    for name in ("worker-2", "no-such-machine"):
        assert (await client.get(f"/ui/nodes/{name}")).status == 403, name
        assert (await client.get(f"/ui/nodes/{name}", headers={"Authorization": "Bearer nope"})).status == 403
    opened = await client.get("/ui/nodes/no-such-machine", headers={"Authorization": "Bearer w-secret=1"})
    assert opened.status == 404


@pytest.mark.parametrize("target", ["//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:x"],
                         ids=["scheme-relative", "absolute", "backslash", "javascript"])
async def test_token_form_never_redirects_away(store: Store, rollout: Rollout, make_client: MakeClient,
                                               target: str) -> None:
    client = await make_client(store, policy=AccessPolicy(all_pools_tokens=("t",)))
    response = await client.post("/ui/token", data={"token": "t", "next": target}, allow_redirects=False)
    assert response.status == 303 and response.headers["Location"] == "/ui/"


async def test_render_degraded_shows_each_problem_with_file_line_and_path(store: Store, rollout: Rollout,
                                                                           make_client: MakeClient) -> None:
    problems = (ConditionProblem("path not absolute", "manifests/50-chrony.yaml", 12, 9,
                                 "$.spec.config.storage.files.0.path"),
                ConditionProblem("must be a <list>", "manifests/60-<karg>.yaml", 3, None, "$.spec.kernelArguments"))
    record = store.get_pool("worker")
    degraded = Condition("RenderDegraded", "True", "", "Failed to render configuration for pool worker: (text)",
                         "2026-12-03T11:00:00Z", problems)
    store.put_pool(replace(record, conditions=(degraded,)))
    client = await make_client(store)
    for url in ("/ui/", "/ui/pools/worker"):
        text = await (await client.get(url)).text()
        assert html_problems(text) == []
        for p in problems:
            assert (f'<li><code class="where">{escape(p.where)}</code> <code class="field">{p.field}</code>: '
                    f'<span class="msg">{escape(p.message)}</span></li>') in text, url
        assert "(text)" not in text.split('<ul class="conditions">', 1)[1].split("RenderDegraded", 1)[1][:500]


async def test_a_replica_shows_what_the_writer_stored(etcd_cluster: Any, make_client: MakeClient) -> None:
    """`mco serve --store etcd://` replicas read from their watch-fed mirror: the page shows the same rollout."""
    url = parse_url(etcd_cluster.url(f"fleetpage-replica-{os.getpid()}"))
    writer = open_store(url)
    try:
        rollout = mid_rollout(writer)
    finally:
        close_store(writer)
    replica = open_store(url, follow=True)  # its first range read sees every write above
    try:
        client = await make_client(replica)
        text = await (await client.get("/ui/")).text()
        assert f"1/{len(rollout.nodes)} updated" in text and "1 degraded" in text
        text = await (await client.get("/ui/pools/worker?state=Degraded")).text()
        assert 'id="node-worker-2"' in text and str(escape(DEGRADED_MESSAGE)) in text
    finally:
        close_store(replica)
