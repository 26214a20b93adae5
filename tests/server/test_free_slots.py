"""server/handout_wait.py `free_slots`: how many held claims a count may wake, and when to count again. A claim woken
while the pool's gates hold it would only be told "stay" and woken again (a replica burnt its CPU on that for a
whole canary soak): so no slot while paused by a failure or outside the windows, during the canary wave only the
canaries still to go, and the window's opening as the time to count again."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from fleet.maintenance_windows import next_opening, parse_window
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.rollout import NodeStatuses
from fleet.rollout_gates import hold_reason
from fleet.rollout_settings import RolloutSettings
from fleet.rollout_turn import waiting
from server.handout_wait import free_slots

OLD, NEW = "rendered-worker-old", "rendered-worker-new"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)  # a Wednesday


def _n(i: int, current: str = OLD, desired: str = OLD, state: str = "Done", at: str = "2026-12-02T11:00:00Z") -> NodeStatus:
    return NodeStatus(f"n{i}", "worker", current, desired, state, "", at, registered_at=f"2026-01-{i + 1:02d}T00:00:00Z")


def _pool(**settings: object) -> PoolRecord:
    return PoolRecord("worker", current=NEW, max_unavailable=3, rollout=RolloutSettings(**settings))  # type: ignore[arg-type]


def test_no_gates_every_free_slot() -> None:
    statuses = NodeStatuses([_n(i) for i in range(10)])
    assert free_slots(_pool(), statuses, NOW) == (NEW, 3, None)
    statuses.put(_n(0, OLD, NEW, "Working"))
    assert free_slots(_pool(), statuses, NOW) == (NEW, 2, None)


def test_paused_by_a_failure_no_slot() -> None:
    statuses = NodeStatuses([_n(0, OLD, NEW, "Degraded"), *(_n(i) for i in range(1, 10))])
    assert free_slots(_pool(), statuses, NOW) == (NEW, 0, None)


def test_outside_the_windows_no_slot_until_the_next_opens() -> None:
    window = parse_window(json.loads('{"days": ["Sat"], "start": "22:00", "duration": "4h", "timeZone": "UTC"}'))
    statuses = NodeStatuses([_n(i) for i in range(10)])
    assert free_slots(_pool(windows=(window,)), statuses, NOW) == (NEW, 0, next_opening([window], NOW))


def test_canary_wave_only_the_canaries_to_go_then_the_rest_once_every_canary_is_done() -> None:
    """A canary under the health gate reports Done only after its soak (applier/health.py): its Done ends the wave,
    with no second soak counted from it."""
    record = _pool(canaries="2", soak_seconds=600)
    statuses = NodeStatuses([_n(i) for i in range(10)])  # n0 and n1 are the oldest: the canaries
    assert free_slots(record, statuses, NOW) == (NEW, 2, None)
    statuses.put(_n(0, OLD, NEW, "Working"))
    assert free_slots(record, statuses, NOW) == (NEW, 1, None)
    statuses.put(_n(1, OLD, NEW, "Working"))
    assert free_slots(record, statuses, NOW) == (NEW, 0, None)  # both updating: their reports announce the next count
    statuses.put(_n(0, NEW, NEW, at="2026-12-02T11:59:00Z"))
    assert free_slots(record, statuses, NOW) == (NEW, 0, None)  # n1 still soaking: its Done announces the next count
    statuses.put(_n(1, NEW, NEW, at="2026-12-02T11:59:30Z"))
    assert free_slots(record, statuses, NOW) == (NEW, 3, None)


def _scenes() -> list[tuple[str, PoolRecord, NodeStatuses]]:
    closed = parse_window(json.loads('{"days": ["Sat"], "start": "22:00", "duration": "4h", "timeZone": "UTC"}'))
    one_done = NodeStatuses([_n(0, NEW, NEW), *(_n(i) for i in range(1, 10))])
    return [
        ("no-gate", _pool(), NodeStatuses([_n(i) for i in range(10)])),
        ("paused-by-a-failure", _pool(), NodeStatuses([_n(0, OLD, NEW, "Degraded"), *(_n(i) for i in range(1, 10))])),
        ("window-closed", _pool(windows=(closed,)), NodeStatuses([_n(i) for i in range(10)])),
        ("canaries-to-go", _pool(canaries="2"), NodeStatuses([_n(i) for i in range(10)])),
        ("a-canary-updating", _pool(canaries="1"), NodeStatuses([_n(0, OLD, NEW, "Working"), *(_n(i) for i in range(1, 10))])),
        ("canaries-done", _pool(canaries="1"), one_done),
    ]


@pytest.mark.parametrize(("record", "statuses"), [s[1:] for s in _scenes()], ids=[s[0] for s in _scenes()])
def test_a_count_offers_a_slot_exactly_when_a_waiting_node_may_take_one(record: PoolRecord,
                                                                          statuses: NodeStatuses) -> None:
    """The gates are judged in one place (fleet/rollout_gates.py `pool_hold`): a held claim is woken for a slot
    only when the rule a claim is decided by lets some waiting node through."""
    _, free, _ = free_slots(record, statuses, NOW)
    let_through = [s.name for s in statuses if waiting(s, record) and hold_reason(s.name, record, statuses, NOW) is None]
    assert (free > 0) == bool(let_through)
