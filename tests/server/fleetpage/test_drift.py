"""The overview's "Recent drift" section: machines with a drift event in the last day, newest first; older
drift and machines of pools the visitor may not see stay off it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from fleet.clock import timestamp
from fleet.drift_events import DriftEvent
from fleet.store import MemoryStore
from server.auth import AccessPolicy
from tests.server.conftest import MakeClient
from tests.server.fleetpage.fleet import mid_rollout


def _ago(hours: float) -> str:
    return timestamp(datetime.now(UTC) - timedelta(hours=hours))


def _drift(store: MemoryStore, node: str, *events: tuple[str, str, float, bool]) -> None:
    store.put_node_status(replace(store.get_node_status(node), drift=tuple(
        DriftEvent(kind, path, "sha256-a", "sha256-b", _ago(hours), repaired) for kind, path, hours, repaired in events)))


async def test_overview_shows_recent_drift_newest_first(make_client: MakeClient) -> None:
    store = MemoryStore()
    mid_rollout(store)
    _drift(store, "worker-1", ("file", "/etc/audit/rules.d/99-mco.rules", 3, True),
           ("file", "/etc/audit/rules.d/99-mco.rules", 30, True))
    _drift(store, "worker-2", ("unit", "auditd.service", 0.5, False))
    _drift(store, "worker-3", ("kargs", "fips=1", 48, True))  # two days ago: not recent
    html = await (await make_client(store)).get("/")
    text = await html.text()
    section = text[text.index('id="drift"'):]
    assert section.index('id="drift-worker-2"') < section.index('id="drift-worker-1"')
    assert 'id="drift-worker-3"' not in section
    row = section[section.index('id="drift-worker-1"'):section.index("</tr>", section.index('id="drift-worker-1"'))]
    assert "/etc/audit/rules.d/99-mco.rules" in row and ">yes<" in row and ">1<" in row  # one event in the day


async def test_no_section_without_recent_drift_or_for_hidden_pools(make_client: MakeClient) -> None:
    store = MemoryStore()
    mid_rollout(store)
    assert 'id="drift"' not in await (await (await make_client(store)).get("/")).text()
    _drift(store, "worker-1", ("file", "/etc/motd", 1, True))
    hidden = await make_client(store, policy=AccessPolicy(tokens={"worker": ("t",)}))
    assert 'id="drift"' not in await (await hidden.get("/")).text()
