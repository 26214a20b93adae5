"""A node record's update timeline: phases appended in order, repeats ignored, a new update starting a new
timeline with the old one kept (bounded), and the record round trip."""

from __future__ import annotations

from fleet.node_status import NodeStatus, with_report
from fleet.phases import TIMELINE_LIMIT, UPDATES_LIMIT, PhaseEntry, advance


def _entry(phase: str, at: int, config: str = "rendered-worker-b", detail: str = "") -> PhaseEntry:
    return PhaseEntry(phase, f"2026-12-04T10:00:{at:02d}Z", config, detail)


def test_phases_append_and_repeats_add_nothing() -> None:
    timeline, updates = advance((), (), _entry("prepared", 0))
    timeline, updates = advance(timeline, updates, _entry("written", 1))
    timeline, updates = advance(timeline, updates, _entry("written", 2))  # the same phase reported again
    timeline, updates = advance(timeline, updates, _entry("reboot-requested", 3, detail="boot-a"))
    assert [e.phase for e in timeline] == ["prepared", "written", "reboot-requested"] and updates == ()
    assert timeline[1].at.endswith(":01Z")


def test_a_new_update_starts_a_new_timeline_and_keeps_the_old() -> None:
    first, _ = advance((), (), _entry("prepared", 0))
    first, _ = advance(first, (), _entry("done", 1))
    timeline, updates = advance(first, (), _entry("prepared", 2, config="rendered-worker-c"))
    assert timeline == (_entry("prepared", 2, config="rendered-worker-c"),) and updates == (first,)
    other, more = advance(timeline, updates, _entry("degraded", 3, config="rendered-worker-d", detail="written"))
    assert other[0].phase == "degraded" and more == (timeline, first)  # a lost `prepared`: another config


def test_bounds() -> None:
    timeline: tuple[PhaseEntry, ...] = ()
    for i in range(40):
        timeline, _ = advance(timeline, (), _entry("written" if i % 2 else "reboot-requested", i, detail=str(i)))
    assert len(timeline) == TIMELINE_LIMIT and timeline[0].detail == "0" and timeline[-1].detail == "39"
    updates: tuple[tuple[PhaseEntry, ...], ...] = ()
    timeline = ()
    for i in range(10):
        timeline, updates = advance(timeline, updates, _entry("prepared", i, config=f"c{i}"))
    assert len(updates) == UPDATES_LIMIT and updates[0][0].config == "c8"


def test_with_report_carries_the_timeline_and_round_trips() -> None:
    base = NodeStatus("n1", "worker", "rendered-worker-a", "rendered-worker-b", "Working", "applying", "t0")
    record = with_report(None, NodeStatus(**{**_fields(base), "timeline": (_entry("prepared", 0),)}))
    record = with_report(record, NodeStatus(**{**_fields(base), "timeline": (_entry("written", 1),)}))
    record = with_report(record, base)  # a report entering no phase keeps the timeline
    assert [e.phase for e in record.timeline] == ["prepared", "written"] and record.phase == _entry("written", 1)
    assert NodeStatus.from_dict(record.to_dict()) == record


def _fields(status: NodeStatus) -> dict:
    return {f: getattr(status, f) for f in NodeStatus.__slots__ if f not in ("history", "timeline", "updates")}
