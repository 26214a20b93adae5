"""The page's view models: progress bar layout, ages, RenderDegraded problems, and counts equal to GET /pools."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fleet.conditions import ConditionProblem
from fleet.node_status import NodeStatus
from fleet.rendered import Condition, PoolRecord
from server.fleetpage.views import BAR_WIDTH, age, bar, machine_row, pool_row
from server.status import pool_summary, tally

NOW = datetime(2026, 12, 3, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize("parts", [
    [("updated", 1), ("updating", 1), ("degraded", 1), ("waiting", 0)],
    [("updated", 9999), ("updating", 0), ("degraded", 1), ("waiting", 0)],
    [("updated", 0), ("updating", 0), ("degraded", 0), ("waiting", 7)],
    [("updated", 3), ("updating", 5), ("degraded", 2), ("waiting", 13)],
], ids=["thirds", "one-in-ten-thousand", "all-waiting", "mixed"])
def test_bar_covers_the_width_in_order_without_gaps(parts: list[tuple[str, int]]) -> None:
    segments = bar(parts)
    assert [s.kind for s in segments] == [k for k, n in parts if n]
    assert [s.count for s in segments] == [n for _, n in parts if n]
    assert segments[0].x == 0
    for a, b in zip(segments, segments[1:], strict=False):
        assert b.x == a.x + a.width
    assert segments[-1].x + segments[-1].width == BAR_WIDTH
    total = sum(n for _, n in parts)
    done = 0
    for s in segments:  # each edge sits where its cumulative share says
        done += s.count
        assert s.x + s.width == done * BAR_WIDTH // total


def test_bar_of_an_empty_pool_is_empty() -> None:
    assert bar([("updated", 0), ("waiting", 0)]) == ()


@pytest.mark.parametrize(("stamp", "expected"), [
    ("2026-12-03T11:59:18Z", "42s"),
    ("2026-12-03T11:55:00Z", "5m"),
    ("2026-12-03T09:00:00Z", "3h"),
    ("2026-12-01T12:00:00Z", "2d"),
    ("2026-12-03T12:00:05Z", "0s"),
    ("", "-"),
    ("yesterday", "-"),
], ids=["seconds", "minutes", "hours", "days", "clock-skew", "empty", "not-a-time"])
def test_age(stamp: str, expected: str) -> None:
    assert age(stamp, NOW) == expected


def _node(name: str, state: str, current: str, desired: str, pool: str = "worker") -> NodeStatus:
    return NodeStatus(name, pool, current, desired, state, f"{name} says {state}", "2026-12-03T11:00:00Z")


NODES = [
    _node("a", "Done", "new", "new"),
    _node("b", "Done", "old", "old"),
    _node("c", "Working", "old", "new"),
    _node("d", "Degraded", "old", "new"),
    _node("e", "Done", "old", "new"),
    _node("x", "Done", "other", "other", pool="master"),
]


def test_pool_row_counts_are_those_of_get_pools() -> None:
    record = PoolRecord("worker", current="new", max_unavailable="20%", paused=True)
    row = pool_row(record, tally("worker", NODES))
    api = pool_summary(record, tally("worker", NODES))["status"]
    assert (row.machines, row.updated, row.degraded, row.unavailable) == (
        api["machineCount"], api["updatedMachineCount"], api["degradedMachineCount"],
        api["unavailableMachineCount"])
    assert (row.updating, row.waiting) == (1, 2)
    assert [(s.kind, s.count) for s in row.bar] == [("updated", 1), ("updating", 1), ("degraded", 1),
                                                     ("waiting", 2)]
    assert (row.max_unavailable, row.paused, row.target) == ("20%", True, "new")
    assert {c.type for c in row.alerts} == {"NodeDegraded", "Degraded"}


PROBLEMS = (ConditionProblem("path not absolute", "manifests/50-x.yaml", 12, 9, "$.spec.config.storage.files.0.path"),
            ConditionProblem("must be a list", "manifests/51-y.yaml", 3, None, "$.spec.kernelArguments"))


@pytest.mark.parametrize(("status", "problems", "shown"), [
    ("True", PROBLEMS, PROBLEMS),
    ("True", (), ()),
    ("False", PROBLEMS, ()),
], ids=["recorded", "record-from-before-problems", "not-degraded"])
def test_render_degraded_shows_the_problems_recorded_with_it(status: str, problems: tuple[ConditionProblem, ...],
                                                             shown: tuple[ConditionProblem, ...]) -> None:
    message = "Failed to render configuration for pool worker: a: b; c: d"
    record = PoolRecord("worker", current="new",
                        conditions=(Condition("RenderDegraded", status, "", message, problems=problems),))
    row = pool_row(record, tally("worker", []))
    render = next(c for c in row.conditions if c.type == "RenderDegraded")
    assert render.problems == shown and render.message == message
    assert [p.where for p in shown] == ["manifests/50-x.yaml:12:9", "manifests/51-y.yaml:3"][:len(shown)]


@pytest.mark.parametrize(("node", "at_target"), [
    (_node("a", "Done", "new", "new"), True),
    (_node("c", "Working", "old", "new"), False),
    (_node("b", "Done", "old", "old"), False),
], ids=["updated", "updating", "behind"])
def test_machine_row(node: NodeStatus, at_target: bool) -> None:
    row = machine_row(node, "new", NOW)
    assert (row.name, row.state, row.current, row.desired, row.age, row.at_target) == (
        node.name, node.state, node.current_config, node.desired_config, "1h", at_target)
