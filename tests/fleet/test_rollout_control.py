"""fleet/rollout_control.py: resume, revert (and its pin condition), and the automatic revert, on a real store."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fleet.node_status import NodeStatus
from fleet.rendered import HistoryEntry, PoolRecord
from fleet.rollout_control import RolloutRefused, auto_revert, paused_by, resume, revert
from fleet.rollout_settings import RolloutSettings
from fleet.store import MemoryStore
from tests.builders import rendered_config

GOOD, BAD = "rendered-worker-good", "rendered-worker-bad"
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _store(*, auto: bool, nodes: list[NodeStatus]) -> MemoryStore:
    store = MemoryStore()
    for name in (GOOD, BAD):
        store.put_rendered(rendered_config(name, sources=(name,)))
    store.put_pool(PoolRecord("worker", current=BAD, history=(HistoryEntry(GOOD, "t1"), HistoryEntry(BAD, "t2")),
                              rollout=RolloutSettings(auto_revert=auto)))
    for node in nodes:
        store.put_node_status(node)
    return store


FAILING = [NodeStatus("a", "worker", GOOD, BAD, "Degraded", "broke", "2026-12-04T11:00:00Z"),
           NodeStatus("b", "worker", GOOD, GOOD, "Done", "", "2026-12-04T10:00:00Z")]


@pytest.mark.parametrize("auto,reverted", [(True, True), (False, False)], ids=["auto-revert", "pause-only"])
def test_auto_revert(auto: bool, reverted: bool) -> None:
    store = _store(auto=auto, nodes=FAILING)
    assert paused_by(store, store.get_pool("worker")) is not None
    assert auto_revert(store, now=NOW) == ({"worker": GOOD} if reverted else {})
    record = store.get_pool("worker")
    assert (record.current, record.reverted_from) == ((GOOD, BAD) if reverted else (BAD, ""))
    if reverted:
        assert paused_by(store, record) is None  # the failure was on the old target
        assert record.sources == (GOOD,) and record.history[-1].name == GOOD
        pinned = record.condition("RolloutPinned")
        assert pinned is not None and pinned.status == "True"
        assert auto_revert(store, now=NOW) == {}  # once


def test_resume_forgets_earlier_failures_only() -> None:
    store = _store(auto=False, nodes=FAILING)
    record = resume(store, "worker", now=NOW)
    assert record.resumed_at == "2026-12-04T12:00:00Z" and paused_by(store, record) is None
    store.put_node_status(NodeStatus("b", "worker", GOOD, BAD, "Degraded", "later", "2026-12-04T12:05:00Z"))
    pause = paused_by(store, store.get_pool("worker"))
    assert pause is not None and pause.node == "b"


def test_revert_refused_when_a_node_never_ran_an_earlier_config() -> None:
    store = _store(auto=True, nodes=[*FAILING, NodeStatus("c", "worker", BAD, BAD, "Done", "", "t3")])
    with pytest.raises(RolloutRefused):
        revert(store, "worker", now=NOW)
    assert auto_revert(store, now=NOW) == {}  # it stays paused
    assert store.get_pool("worker").current == BAD
