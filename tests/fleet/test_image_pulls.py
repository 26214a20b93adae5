"""fleet/image_pulls.py: which waiting nodes may pull the pool's new OS image before their slot, and how the pool's
gates bound it: no pull while the pool is paused (by its manifest or by the rollout), only the canaries during the
canary wave, pulls as usual while a maintenance window is closed; the pull limit in the rollout order."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from fleet.image_pulls import may_pull
from fleet.maintenance_windows import parse_window
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.rollout import NodeStatuses
from fleet.rollout_settings import RolloutSettings

OLD, NEW = "rendered-worker-old", "rendered-worker-new"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)  # a Wednesday, 12:00 UTC
SAT_NIGHT = parse_window({"days": ["Sat"], "start": "22:00", "duration": "4h", "timeZone": "UTC"})


def _n(name: str, current: str = OLD, desired: str = OLD, state: str = "Done", *, registered: str) -> NodeStatus:
    return NodeStatus(name, "worker", current, desired, state, "" if state == "Done" else f"{name} broke",
                      "2026-12-02T11:00:00Z", (), registered)


def _nodes(*extra: NodeStatus) -> list[NodeStatus]:
    """Four waiting nodes, registered a, b, c, d (the rollout order), and `extra`."""
    return [*(_n(name, registered=f"2026-11-0{i + 1}T00:00:00Z") for i, name in enumerate("abcd")), *extra]


def _pool(**settings: object) -> PoolRecord:
    return PoolRecord("worker", current=NEW, max_unavailable=1, rollout=RolloutSettings(**settings))  # type: ignore[arg-type]


BROKEN = _n("x", OLD, NEW, "Degraded", registered="2026-10-01T00:00:00Z")  # failed on the target: pauses the pool
CANARY_X = replace(_n("x", OLD, NEW, "Working", registered="2026-10-01T00:00:00Z"), labels={"canary": "yes"})

CASES = [  # (id, pool, nodes, the nodes that may pull)
    ("no-limit", _pool(), _nodes(), "abcd"),
    ("limit-in-order", _pool(max_concurrent_pulls=2), _nodes(), "ab"),
    ("limit-counts-pulling", _pool(max_concurrent_pulls=2),
     [replace(n, pull_config=NEW, pull_at="2026-12-02T11:59:00Z") if n.name == "c" else n for n in _nodes()], "ac"),
    ("staged-need-none", _pool(max_concurrent_pulls=1),
     [replace(n, staged=NEW) if n.name == "a" else n for n in _nodes()], "b"),
    ("unavailable-pull-in-their-slot", _pool(),  # Degraded at its config / updating to another: a slot held already
     [replace(n, state="Degraded") if n.name == "a" else replace(n, desired_config="rendered-worker-other", state="Working")
      if n.name == "b" else n for n in _nodes()], "cd"),
    ("spec-paused", replace(_pool(), paused=True), _nodes(), ""),
    ("paused-by-rollout", _pool(), _nodes(BROKEN), ""),
    ("paused-by-rollout-limit", _pool(max_concurrent_pulls=2), _nodes(BROKEN), ""),
    ("paused-while-pulling", replace(_pool(), paused=True),  # a lost answer is not answered again once paused
     [replace(n, pull_config=NEW, pull_at="2026-12-02T11:59:00Z") if n.name == "a" else n for n in _nodes()], ""),
    ("pulling-asks-again", _pool(max_concurrent_pulls=1),  # the limit reached by its own pull: the same permission
     [replace(n, pull_config=NEW, pull_at="2026-12-02T11:59:00Z") if n.name == "a" else n for n in _nodes()], "a"),
    ("auto-pause-off", _pool(auto_pause=False), _nodes(BROKEN), "abcd"),
    ("canary-wave-count", _pool(canaries="2"), _nodes(), "ab"),
    ("canary-wave-count-limit", _pool(canaries="2", max_concurrent_pulls=1), _nodes(), "a"),
    ("canary-wave-canaries-pulling", _pool(canaries="2", max_concurrent_pulls=3),  # a share is free: not for c
     [replace(n, pull_config=NEW, pull_at="2026-12-02T11:59:00Z") if n.name in "ab" else n for n in _nodes()], "ab"),
    ("canary-wave-selector", _pool(canary_selector={"canary": "yes"}),
     [*_nodes(CANARY_X), replace(_n("e", registered="2026-11-09T00:00:00Z"), labels={"canary": "yes"})], "e"),
    ("canaries-done", _pool(canaries="1"),
     [_n("a", NEW, NEW, registered="2026-11-01T00:00:00Z"), *_nodes()[1:]], "bcd"),
    ("window-closed", _pool(windows=(SAT_NIGHT,)), _nodes(), "abcd"),
    ("window-closed-limit", _pool(windows=(SAT_NIGHT,), max_concurrent_pulls=1), _nodes(), "a"),
    ("window-closed-canary-wave", _pool(windows=(SAT_NIGHT,), canaries="2"), _nodes(), "ab"),
    ("window-closed-canary-wave-limit", _pool(windows=(SAT_NIGHT,), canaries="2", max_concurrent_pulls=1),
     _nodes(), "a"),
]


@pytest.mark.parametrize("record,nodes,pulling", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_who_may_pull(record: PoolRecord, nodes: list[NodeStatus], pulling: str) -> None:
    statuses = NodeStatuses(nodes)
    allowed = "".join(n.name for n in nodes if n.name in "abcde"
                      and may_pull(n.name, record, statuses, NOW, lambda status: True))
    assert allowed == pulling
