"""fleet/rollout_control.py: resume, revert (and its pin condition), and the automatic revert, on a real store."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from fleet.node_status import NodeStatus
from fleet.rendered import HistoryEntry, PoolRecord
from fleet.rollout import NodeStatuses
from fleet.rollout_control import RolloutRefused, auto_revert, paused_by, record_pause, resume, revert
from fleet.rollout_settings import RolloutSettings
from fleet.store import MemoryStore, Store, T
from tests.builders import rendered_config

GOOD, BAD = "rendered-worker-good", "rendered-worker-bad"
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _store(*, auto: bool, nodes: list[NodeStatus]) -> MemoryStore:
    store = MemoryStore()
    _fill(store, auto=auto, nodes=nodes)
    return store


def _fill(store: Store, *, auto: bool, nodes: list[NodeStatus]) -> None:
    for name in (GOOD, BAD):
        store.put_rendered(rendered_config(name, sources=(name,)))
    store.put_pool(PoolRecord("worker", current=BAD, history=(HistoryEntry(GOOD, "t1"), HistoryEntry(BAD, "t2")),
                              rollout=RolloutSettings(auto_revert=auto)))
    for node in nodes:
        store.put_node_status(node)


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


@pytest.mark.parametrize("nodes", [[], FAILING], ids=["nothing-failed", "failed-on-the-old-target"])
def test_resume_refused_when_not_paused(nodes: list[NodeStatus]) -> None:
    """As `kubectl rollout resume` refuses a rollout that is not paused ("is not paused", exit 1): nothing written."""
    store = _store(auto=False, nodes=nodes)
    if nodes:
        store.put_pool(replace(store.get_pool("worker"), current=GOOD))  # the failure was on another target
    before = store.get_pool("worker")
    with pytest.raises(RolloutRefused, match="not paused"):
        resume(store, "worker", now=NOW)
    assert store.get_pool("worker") == before


def test_revert_refused_when_a_node_never_ran_an_earlier_config() -> None:
    store = _store(auto=True, nodes=[*FAILING, NodeStatus("c", "worker", BAD, BAD, "Done", "", "t3")])
    with pytest.raises(RolloutRefused):
        revert(store, "worker", now=NOW)
    assert auto_revert(store, now=NOW) == {}  # it stays paused
    assert store.get_pool("worker").current == BAD


T0, T1 = "2026-12-04T11:30:00Z", "2026-12-04T11:30:01Z"


def _report(name: str, state: str, at: str, current: str = GOOD, desired: str = BAD) -> NodeStatus:
    return NodeStatus(name, "worker", current, desired, state, f"{name}: health check app failed" if state != "Done"
                      else "", at)


# (id, reports in the order the store takes them, the node the pause names after them (None: not paused))
FIRST_NODE = [
    ("one-failure", [_report("b", "Degraded", T0)], "b"),
    # two canaries fail within the same second: the one stored first keeps the pause (derived from the reports
    # alone, the tie went by name, so the pause moved to "a" once its report landed)
    ("same-second-keeps-first", [_report("b", "Degraded", T0), _report("a", "Degraded", T0)], "b"),
    # a report with an earlier stamp landing later (another replica's clock) does not take the pause over
    ("earlier-stamp-later", [_report("b", "Degraded", T1), _report("a", "Degraded", T0)], "b"),
    # the node that stopped the rollout retries (Working) or fails anew: the pause holds, still naming it
    ("first-retries", [_report("b", "Degraded", T0), _report("a", "Degraded", T1), _report("b", "Working", T1)], "b"),
    ("failure-elsewhere", [_report("b", "Degraded", T0, GOOD, GOOD)], None),
    ("working-only", [_report("b", "Working", T0)], None),
]


@pytest.mark.parametrize("reports,node", [c[1:] for c in FIRST_NODE], ids=[c[0] for c in FIRST_NODE])
def test_pause_keeps_its_first_node(store: Store, reports: list[NodeStatus], node: str | None) -> None:
    _fill(store, auto=False, nodes=[])
    for report in reports:
        record_pause(store, report)
        store.put_node_status(report)
    pause = paused_by(store, store.get_pool("worker"))
    assert (pause.node if pause is not None else None) == node
    if pause is not None:
        first = next(r for r in reports if r.name == node)
        assert (pause.reason, pause.since) == (f"Degraded: {first.message}", first.reported_at)
        assert store.get_pool("worker").pause == replace(pause, target=BAD)  # recorded, not only derived


def test_pause_recorded_is_the_one_readers_derived(store: Store) -> None:
    """Two nodes failing within one second, stored in the server's order (the report, then the pause): b's report
    is stored first, a's before b records. Readers derived a (same second: the name decides), and the pause b
    records is that one, so what /pools showed does not change once it is recorded."""
    _fill(store, auto=False, nodes=[])
    first, second = _report("b", "Degraded", T0), _report("a", "Degraded", T0)
    store.put_node_status(first)
    store.put_node_status(second)
    shown = paused_by(store, store.get_pool("worker"))
    assert shown is not None and shown.node == "a" and store.get_pool("worker").pause is None  # derived
    assert record_pause(store, first) == shown
    assert record_pause(store, second) is None  # recorded once
    assert store.get_pool("worker").pause == shown


class MirrorBehind(MemoryStore):
    """A store whose reads of the statuses do not show its last write yet, as an etcd replica's mirror lags the
    replica's own write until the watch delivers it."""

    hidden = ""

    def put_node_status(self, status: NodeStatus) -> None:
        super().put_node_status(status)
        self.hidden = status.name

    def read_statuses(self, read: Callable[[NodeStatuses], T]) -> T:
        with self._lock:
            return read(NodeStatuses(s for s in self._nodes.ordered() if s.name != self.hidden))


def test_pause_names_the_earliest_failure_though_the_read_lags_its_own_write() -> None:
    store = MirrorBehind()
    _fill(store, auto=False, nodes=[])
    store.put_node_status(_report("b", "Degraded", "2026-12-04T12:00:05Z"))  # failed later, stored and read first
    store.hidden = ""
    first = _report("a", "Degraded", "2026-12-04T12:00:00Z")
    store.put_node_status(first)  # this replica's read does not show it yet
    recorded = record_pause(store, first)
    assert recorded is not None and recorded.node == "a"


class RenderLandsFirst(MemoryStore):
    """A render turns auto-pause off between record_pause's read and its compare-and-swap."""

    def update_pool(self, pool: str, change: Callable[[PoolRecord | None], PoolRecord | None]) -> PoolRecord | None:
        self.put_pool(replace(self.get_pool(pool), rollout=RolloutSettings(auto_pause=False)))
        return super().update_pool(pool, change)


def test_no_pause_is_recorded_on_a_record_whose_auto_pause_went_off() -> None:
    store = RenderLandsFirst()
    _fill(store, auto=False, nodes=[])
    failed = _report("a", "Degraded", T0)
    store.put_node_status(failed)
    assert record_pause(store, failed) is None
    assert store.get_pool("worker").pause is None


@pytest.mark.parametrize("clear", ["resume", "revert"])
def test_resume_and_revert_clear_the_recorded_pause(store: Store, clear: str) -> None:
    _fill(store, auto=False, nodes=[NodeStatus("c", "worker", GOOD, GOOD, "Done", "", T0)])
    record_pause(store, _report("b", "Degraded", T0))
    store.put_node_status(_report("b", "Degraded", T0))
    assert store.get_pool("worker").pause is not None
    if clear == "resume":
        resume(store, "worker", now=NOW)
        later = "2026-12-04T12:05:00Z"
        record_pause(store, _report("a", "Degraded", later))  # a failure after the resume pauses it again
        pause = paused_by(store, store.get_pool("worker"))
        assert pause is not None and (pause.node, pause.since) == ("a", later)
    else:
        record = revert(store, "worker", now=NOW)
        assert record.pause is None and paused_by(store, record) is None


def test_concurrent_failures_record_one_pause(store: Store) -> None:
    """Eight nodes failing at once, each through its own thread: exactly one records the pause, and it stays."""
    _fill(store, auto=False, nodes=[])
    reports = [_report(f"n{i}", "Degraded", T0) for i in range(8)]
    with ThreadPoolExecutor(len(reports)) as pool:
        recorded = list(pool.map(lambda r: record_pause(store, r), reports))
    won = [p for p in recorded if p is not None]
    assert len(won) == 1
    for report in reports:
        store.put_node_status(report)
    assert paused_by(store, store.get_pool("worker")) == won[0]
