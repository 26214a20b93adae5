"""The preview of a rollout (`mco rollout plan`): for each machine of a pool, what moving to a target means for it,
its wave, and when it is expected to start and end. Pure: the caller passes the statuses and rendered configs.

The rules are the rollout's own: the action is the applier's decision (`fleet/disruption.py` over `fleet/diff.py`,
under the cluster's disruption policy); the order is `fleet/rollout.py` `order_key`; the canaries are
`fleet/rollout_gates.py` `canaries`; at most `maxUnavailable` machines move at once. Canaries go first and the
rest starts when the last canary has ended. A machine already at the target has action `none` and no
wave; one being provisioned (it never ran a config: fleet/rollout.py `provisioning`) has action `provision` and no
wave either: the rollout hands it the target as it asks, without a slot. Expected durations per action come from `durations` (seconds; `DEFAULT_DURATIONS` when the fleet has
recorded none; `recorded_durations` reads the fleet's: medians over the nodes' finished update timelines, up to
the health gate), plus the pool's soak time, for which the health gate holds each machine's slot, and
each machine takes the first free slot, in order. With maintenance windows and `now` (when
the rollout would begin), a machine whose slot frees outside every window starts when the next one opens; one
already started finishes.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import median
from typing import Any

from fleet.clock import parse_timestamp, timestamp
from fleet.diff import diff_rendered
from fleet.disruption import disruption
from fleet.disruption_policy import DisruptionPolicy
from fleet.maintenance_windows import is_open, next_opening
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord, RenderedConfig
from fleet.rollout import NodeStatuses, max_unavailable_count, provisioning
from fleet.rollout_gates import canaries

# What each action is expected to take, in seconds, when no duration was recorded for it (stated in the output).
DEFAULT_DURATIONS: Mapping[str, float] = {"none": 5, "files": 10, "reload": 15, "restart": 30, "reboot": 300,
                                          "os-image": 600, "provision": 600}
ACTIONS = tuple(DEFAULT_DURATIONS)


@dataclass(frozen=True)
class MachinePlan:
    """One machine's part of the rollout."""

    node: str
    current: str
    action: str           # one of ACTIONS ("provision": a machine that never ran a config, `provisioning`)
    units: tuple[str, ...]  # services reloaded or restarted
    drain: bool
    reboot: bool
    wave: int | None      # None: nothing to do, or being provisioned (the target at once, no slot)
    canary: bool
    start: float          # seconds after the rollout starts
    end: float

    def to_dict(self) -> dict[str, Any]:
        """JSON form (`mco rollout plan -o json`)."""
        return {"node": self.node, "currentConfig": self.current, "action": self.action, "units": list(self.units),
                "drain": self.drain, "reboot": self.reboot, "wave": self.wave, "canary": self.canary,
                "start": self.start, "end": self.end}


@dataclass(frozen=True)
class RolloutPlan:
    """The whole preview."""

    pool: str
    target: str
    machines: tuple[MachinePlan, ...]
    total: float
    durations: Mapping[str, float]
    recorded: tuple[str, ...]  # actions whose duration was recorded by the fleet (the others are defaults)
    begins: str = ""           # when the rollout was taken to begin (RFC 3339; "" : times are only relative)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"pool": self.pool, "target": self.target, "begins": self.begins,
                "machines": [m.to_dict() for m in self.machines],
                "total": self.total, "durations": {a: {"seconds": self.durations[a], "source": "recorded"
                                                       if a in self.recorded else "default"} for a in ACTIONS}}


def action_of(old: RenderedConfig, new: RenderedConfig, policy: DisruptionPolicy | None) -> tuple[str, tuple[str, ...],
                                                                                                bool, bool]:
    """(action, units, drain, reboot) for moving a machine from `old` to `new`, as the applier decides it and
    carries it out: `units` names every service it restarts, then every one it reloads (a registries.conf change,
    MCO's Special action, reloads crio.service); `action` is the strongest of them."""
    changes = diff_rendered(old.spec, new.spec)
    verdict = disruption(changes, policy)
    if verdict.reboot:
        action = "os-image" if "osImageURL" in changes.os_changes else "reboot"
        return action, (), verdict.drain, True
    special = ("crio.service",) if any(a.type == "Special" for a in verdict.actions) else ()  # applier/writing.py
    units = tuple(dict.fromkeys((*verdict.restart_units, *verdict.reload_units, *special)))
    if verdict.verdict in ("restart", "reload"):
        return verdict.verdict, units, verdict.drain, False
    return ("files" if changes.files or changes.units or changes.passwd else "none"), (), verdict.drain, False


def recorded_durations(statuses: Iterable[NodeStatus]) -> dict[str, float]:
    """Median seconds per action over the finished updates in the nodes' timelines (fleet/phases.py: `prepared` to
    the health gate's first `health-checked`, else to `done`: the soak is the pool's own, added by `plan_rollout`,
    and pools soak differently). A timeline says which kind of update it was, not which units it touched: one
    with `image-staged` is `os-image`, one with `reboot-requested` is `reboot`, any other stands for every action
    without a reboot (none, files, reload, restart)."""
    spans: dict[str, list[float]] = {}
    for status in statuses:
        for timeline in (status.timeline, *status.updates):
            if len(timeline) < 2 or timeline[0].phase != "prepared" or timeline[-1].phase != "done":
                continue
            gated = next((e for e in timeline if e.phase == "health-checked"), timeline[-1])
            start, end = parse_timestamp(timeline[0].at), parse_timestamp(gated.at)
            if start is None or end is None or end < start:
                continue
            phases = {e.phase for e in timeline}
            kind = "os-image" if "image-staged" in phases else "reboot" if "reboot-requested" in phases else "files"
            spans.setdefault(kind, []).append((end - start).total_seconds())
    found = {kind: float(median(seconds)) for kind, seconds in spans.items()}
    if "files" in found:
        found.update({a: found["files"] for a in ("none", "reload", "restart")})
    return found


def in_window(record: PoolRecord, offset: float, now: datetime | None) -> float:
    """`offset` seconds after `now`, or the opening of the pool's next window when none is open then."""
    if now is None or not record.rollout.windows:
        return offset
    at = now + timedelta(seconds=offset)
    if is_open(record.rollout.windows, at):
        return offset
    opens = next_opening(record.rollout.windows, at)
    return offset if opens is None else (opens - now).total_seconds()


def plan_rollout(record: PoolRecord, target: RenderedConfig, statuses: Sequence[NodeStatus], *,
                 rendered: Callable[[str], RenderedConfig], policy: DisruptionPolicy | None = None,
                 durations: Mapping[str, float] | None = None, now: datetime | None = None) -> RolloutPlan:
    """The preview of moving the pool's machines to `target` (rules in the module docstring). `record` carries the
    pool's settings (maxUnavailable, canaries, soak) as they will be when the rollout runs."""
    view = statuses if isinstance(statuses, NodeStatuses) else NodeStatuses(statuses)
    recorded = tuple(a for a in ACTIONS if durations and a in durations)
    took = {**DEFAULT_DURATIONS, **(durations or {})}
    ordered = [view.get(s.name) or s for s in view.in_order(record.name, newest_first=record.rollout.newest_first)]
    chosen = set(canaries(record, view))
    slots = max_unavailable_count(record.max_unavailable, len(ordered))
    soak = float(record.rollout.soak_seconds)
    cache: dict[str, RenderedConfig] = {}

    def config(name: str) -> RenderedConfig:
        if name not in cache:
            cache[name] = rendered(name)
        return cache[name]

    pending: list[tuple[MachinePlan, bool]] = []
    for status in ordered:
        if status.current_config == target.name:
            pending.append((MachinePlan(status.name, status.current_config, "none", (), False, False, None,
                                        status.name in chosen, 0.0, 0.0), False))
            continue
        if provisioning(status):  # handed the target as it asks, without a slot (fleet/rollout.py `desired_for`)
            pending.append((MachinePlan(status.name, "", "provision", (), False, False, None, status.name in chosen,
                                        0.0, float(took["provision"]) + soak), False))
            continue
        action, units, drain, reboot = action_of(config(status.current_config), target, policy)
        pending.append((MachinePlan(status.name, status.current_config, action, units, drain, reboot, 0,
                                    status.name in chosen, 0.0, 0.0), True))
    planned: dict[str, MachinePlan] = {}
    start_at = 0.0
    wave_base = 0
    for group in ([m for m, moves in pending if moves and m.canary], [m for m, moves in pending if moves and not m.canary]):
        free = [start_at] * slots
        heapq.heapify(free)
        end_of_group = start_at
        for i, machine in enumerate(group):
            begin = in_window(record, heapq.heappop(free), now)
            end = begin + float(took[machine.action]) + soak
            heapq.heappush(free, end)
            planned[machine.node] = MachinePlan(machine.node, machine.current, machine.action, machine.units,
                                                machine.drain, machine.reboot, wave_base + i // slots, machine.canary,
                                                begin, end)
            end_of_group = max(end_of_group, end)
        if group:
            wave_base += -(-len(group) // slots)
            start_at = end_of_group
    machines = tuple(planned.get(m.node, m) for m, _ in pending)
    total = max((m.end for m in machines), default=0.0)
    return RolloutPlan(record.name, target.name, machines, total, took, recorded, timestamp(now) if now else "")
