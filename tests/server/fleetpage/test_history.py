"""The bounded report history and the store wrapper that feeds it."""

from __future__ import annotations

import pytest

from fleet.rendered import NodeStatus
from fleet.store import MemoryStore, Store
from server.fleetpage import history
from server.fleetpage.history import RecordingStore, ReportHistory


def _report(node: str, i: int, state: str = "Working", message: str = "") -> NodeStatus:
    return NodeStatus(node, "worker", "a", "b", state, message or f"step {i}", f"2026-12-03T10:{i // 60:02d}:{i % 60:02d}Z")


def test_keeps_distinct_reports_newest_first_and_bounded() -> None:
    h = ReportHistory()
    for i in range(history.PER_NODE + 5):
        assert h.record(_report("n1", i))
    kept = h.reports("n1")
    assert len(kept) == history.PER_NODE
    assert kept[0].message == f"step {history.PER_NODE + 4}"
    assert kept[-1].message == "step 5"


@pytest.mark.parametrize(("second", "kept"), [
    (_report("n1", 1, message="same"), False),
    (_report("n1", 2, state="Done", message="same"), True),
    (_report("n1", 0, state="Done", message="other"), True),
], ids=["repeat-later", "state-changed", "same-second-new-content"])
def test_repeats_are_not_new_entries(second: NodeStatus, kept: bool) -> None:
    h = ReportHistory()
    h.record(_report("n1", 0, message="same"))
    assert h.record(second) is kept
    assert len(h.reports("n1")) == 1 + kept


def test_forgets_the_least_recently_changed_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "MAX_NODES", 3)
    h = ReportHistory()
    for node in ("a", "b", "c"):
        h.record(_report(node, 0))
    h.record(_report("a", 1))  # a moved: b is now the oldest
    h.record(_report("d", 0))
    assert h.reports("b") == []
    assert [len(h.reports(n)) for n in ("a", "c", "d")] == [2, 1, 1]


def test_recording_store_records_and_pokes() -> None:
    pokes: list[int] = []
    inner = MemoryStore()
    store = RecordingStore(inner, ReportHistory(), on_report=lambda: pokes.append(1))
    store.put_node_status(_report("n1", 0))
    store.put_node_status(_report("n1", 1))
    assert inner.get_node_status("n1").message == "step 1"
    assert [r.message for r in store.history.reports("n1")] == ["step 1", "step 0"]
    assert pokes == [1, 1]


def test_observe_learns_what_other_writers_stored() -> None:
    h = ReportHistory()
    assert h.observe([_report("n1", 0), _report("n2", 0)])
    assert not h.observe([_report("n1", 0), _report("n2", 0)])
    assert h.observe([_report("n1", 1)])
    assert len(h.reports("n1")) == 2


def test_recording_store_writes_out_every_store_method() -> None:
    """A protocol method left to `__getattr__` would store reports that the history never sees."""
    members = {name for name in vars(Store) if not name.startswith("_")}
    assert members and members <= set(vars(RecordingStore))


def test_a_claimed_hand_out_is_recorded() -> None:
    store = RecordingStore(MemoryStore(), ReportHistory())
    handed = store.claim_node("n1", lambda statuses: _report("n1", 0, message="handed out"))
    assert handed is not None and store.get_node_status("n1") == handed
    assert store.claim_node("n1", lambda statuses: None) is None
    assert [r.message for r in store.history.reports("n1")] == ["handed out"]
