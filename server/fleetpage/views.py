"""What the pages show, computed from pool records and node reports (pure: no I/O, no HTML).

The counts and conditions come from `server.status.pool_summary`, the very rules behind `GET /pools`,
so the page and the API never disagree. A condition's message is cut at `MESSAGE_SHOWN` characters (a
NodeDegraded message names every degraded machine; the pool page lists them, filtered by state). The progress bar splits a pool's machines into disjoint parts:
updated (Done at the target), updating (Working), degraded (Degraded) and waiting (Done elsewhere).
Only names and states are shown: rendered configs appear by name, never with their contents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fleet.clock import parse_timestamp, system_clock, timestamp
from fleet.conditions import ConditionProblem
from fleet.node_status import NodeStatus, Transition
from fleet.rendered import PoolRecord
from fleet.rollout_gates import window_closed
from server.status import PoolTally, pool_summary

STATE_ORDER = {"Degraded": 0, "Working": 1, "Done": 2}  # the default sort puts trouble first
MESSAGE_SHOWN = 300
BAR_WIDTH = 1000  # the SVG bar's viewBox width; segments are laid out in these units


@dataclass(frozen=True)
class Segment:
    """One part of a progress bar: `kind` names its CSS class; x and width are in BAR_WIDTH units."""

    kind: str
    count: int
    x: int
    width: int


@dataclass(frozen=True)
class ConditionView:
    """A pool condition; `problems` are a RenderDegraded condition's problems as the renderer recorded them
    (file, line, column, field path, message: fleet/conditions.py), empty in a record from before them."""

    type: str
    status: str
    reason: str
    message: str
    since: str
    problems: tuple[ConditionProblem, ...] = ()


@dataclass(frozen=True)
class PoolRow:
    """One pool as the overview and the pool page show it."""

    name: str
    target: str
    configuration: str
    machines: int
    updated: int
    updating: int
    degraded: int
    unavailable: int
    waiting: int
    max_unavailable: str
    paused: bool
    conditions: tuple[ConditionView, ...]
    bar: tuple[Segment, ...]
    rollout: str = ""  # paused by the rollout (which node, why), outside its maintenance windows, or pinned

    @property
    def alerts(self) -> tuple[ConditionView, ...]:
        """The conditions worth a look: degraded ones that are True."""
        return tuple(c for c in self.conditions if c.status == "True" and "Degraded" in c.type)


@dataclass(frozen=True)
class MachineRow:
    """One machine's last report, with its age in words."""

    name: str
    pool: str
    state: str
    current: str
    desired: str
    message: str
    reported_at: str
    age: str
    at_target: bool


def age(value: str, now: datetime) -> str:
    """`42s`, `5m`, `3h`, `2d` since `value`; `-` when unknown."""
    then = parse_timestamp(value)
    if then is None:
        return "-"
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def bar(parts: Sequence[tuple[str, int]]) -> tuple[Segment, ...]:
    """Lay out the non-empty parts left to right; widths add up to BAR_WIDTH exactly."""
    total = sum(count for _, count in parts)
    segments: list[Segment] = []
    x = done = 0
    for kind, count in parts:
        if count <= 0:
            continue
        done += count
        end = done * BAR_WIDTH // total
        segments.append(Segment(kind, count, x, end - x))
        x = end
    return tuple(segments)


def _shown(message: str) -> str:
    return message if len(message) <= MESSAGE_SHOWN else message[:MESSAGE_SHOWN - 1] + "…"


def _problems(record: PoolRecord, condition: Mapping[str, Any]) -> tuple[ConditionProblem, ...]:
    """The problems of a true RenderDegraded condition, as recorded with it (the message is not parsed)."""
    if condition.get("type") != "RenderDegraded" or condition.get("status") != "True":
        return ()
    recorded = record.condition("RenderDegraded")
    return recorded.problems if recorded is not None else ()


def rollout_note(record: PoolRecord, status: Mapping[str, Any], now: datetime | None = None) -> str:
    """What holds or pins the pool's rollout, in words ("" : nothing): the automatic pause, a closed
    maintenance window (when the next opens), a revert's pin."""
    pause = status.get("rolloutPause")
    if pause:
        return f"paused by the rollout: node {pause['node']} ({_shown(pause['reason'])}) since {pause['since']}"
    opens = window_closed(record, now or system_clock())
    if opens is not None and status["updatedMachineCount"] < status["machineCount"]:
        return f"outside the maintenance windows; the next opens at {timestamp(opens)}"
    if record.reverted_from:
        return f"pinned by a revert (the manifests still render {record.reverted_from})"
    return ""


def pool_row(record: PoolRecord, counted: PoolTally, now: datetime | None = None) -> PoolRow:
    """The row of one pool, from its record and the tally of its machines' reports (`now`: for its maintenance
    windows)."""
    status = pool_summary(record, counted)["status"]
    target = record.current or ""
    updated = status["updatedMachineCount"]
    degraded = status["degradedMachineCount"]
    updating = counted.states()["Working"]
    machines = status["machineCount"]
    waiting = machines - updated - degraded - updating
    conditions = tuple(ConditionView(str(c["type"]), str(c["status"]), str(c["reason"]), _shown(str(c["message"])),
                                     str(c["lastTransitionTime"]), _problems(record, c)) for c in status["conditions"])
    return PoolRow(name=record.name, target=target, configuration=str(status["configuration"]["name"] or ""),
                   machines=machines, updated=updated, updating=updating, degraded=degraded,
                   unavailable=status["unavailableMachineCount"], waiting=waiting,
                   max_unavailable=str(record.max_unavailable), paused=record.paused, conditions=conditions,
                   rollout=rollout_note(record, status, now), bar=bar((("updated", updated), ("updating", updating), ("degraded", degraded),
                            ("waiting", waiting))))


def machine_row(node: NodeStatus, target: str, now: datetime) -> MachineRow:
    """One machine's row; `target` is its pool's current target."""
    return MachineRow(name=node.name, pool=node.pool, state=node.state, current=node.current_config,
                      desired=node.desired_config, message=node.message, reported_at=node.reported_at,
                      age=age(node.reported_at, now),
                      at_target=bool(target) and node.current_config == node.desired_config == target)


def report_rows(node: NodeStatus, target: str, now: datetime) -> list[MachineRow]:
    """The machine's reports over time, newest first (its record's history: each when first reported)."""
    return [_transition_row(node, t, target, now) for t in node.transitions()]


def _transition_row(node: NodeStatus, t: Transition, target: str, now: datetime) -> MachineRow:
    return MachineRow(name=node.name, pool=node.pool, state=t.state, current=t.current_config,
                      desired=t.desired_config, message=t.message, reported_at=t.reported_at,
                      age=age(t.reported_at, now),
                      at_target=bool(target) and t.current_config == t.desired_config == target)
