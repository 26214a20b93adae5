"""A reboot to repair drift takes a rollout slot like any update (fleet/drift_reboot.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from fleet.drift_reboot import reboot_refusal
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.rollout import NodeStatuses

TARGET, OLD = "rendered-worker-new", "rendered-worker-old"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _n(name: str, state: str = "Done", current: str = TARGET) -> NodeStatus:
    return NodeStatus(name, "worker", current, current, state, "", "2026-12-02T11:00:00Z")


POOL = PoolRecord("worker", current=TARGET, max_unavailable=1)

CASES = [
    ("free", POOL, [_n("a"), _n("b")], None),
    ("asker-degraded-counts-not-against-itself", POOL, [_n("a", "Degraded"), _n("b")], None),
    ("taken", POOL, [_n("a"), _n("b", "Working")], "1 of 2 nodes unavailable (maxUnavailable 1)"),
    ("two-allowed", replace(POOL, max_unavailable=2), [_n("a"), _n("b", "Working"), _n("c")], None),
    ("paused", replace(POOL, paused=True), [_n("a"), _n("b")], "pool worker is paused"),
    ("not-at-target", POOL, [_n("a", current=OLD), _n("b")], "the node is not at the pool's target"),
    ("unknown", POOL, [_n("b")], "node a is not a member of pool worker"),
]


@pytest.mark.parametrize(("pool", "statuses", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reboot_refusal(pool: PoolRecord, statuses: list[NodeStatus], expected: str | None) -> None:
    refusal = reboot_refusal("a", pool, NodeStatuses(statuses), NOW)
    assert refusal == expected if expected is None else (refusal or "").startswith(expected)
