"""The preview of a rollout (`mco rollout plan`): for each machine of a pool, what moving to a target means for it,
its wave, and when it is expected to start and end. Pure: the caller passes the statuses and rendered configs.

The rules are the rollout's own: the action is the applier's decision (`fleet/disruption.py` over `fleet/diff.py`,
under the cluster's disruption policy); the order is the turn's (`fleet/rollout_turn.py` `order_of`: machines
going back from a reverted config first, then `fleet/rollout.py` `order_key`); the canaries are
`fleet/rollout_gates.py` `canaries`. A machine is handed the target while fewer than `maxUnavailable` others are
unavailable (`fleet/rollout.py` `is_unavailable`), and only in its turn: so machines unavailable before the rollout
(Degraded, or updating to another config) hold their slots, and the first wave gets only the slots left (MCO
getCandidateMachines: maxUnavailable minus the unavailable); such a machine moves in its turn, in the slot it holds
(`_Slots`). A machine already handed the target is under way from the start. Canaries go first and the rest starts
when the last canary has ended. A wave is the machines handed the target at the same moment. A machine already at
the target has action `none` and no wave; one being provisioned (it never ran a config: fleet/rollout.py
`provisioning`) has action `provision` and no wave either: the rollout hands it the target as it asks, without a
slot, and it counts as unavailable until it ends. Expected durations per action come from `durations` (seconds;
`DEFAULT_DURATIONS` when the fleet has recorded none; `recorded_durations` reads the fleet's: medians over the
nodes' finished update timelines, up to the health gate), plus the pool's soak time, for which the health gate
holds each machine's slot, and each machine takes the first free slot, in order. With maintenance windows and
`now` (when the rollout would begin), a machine whose slot frees outside every window starts when the next one
opens; one already started finishes. A machine whose update changes its OS image (action `os-image`), that has not
staged it and is available (one unavailable holds a slot already and pulls in it) pulls it first (`pull`: the
agent's claims say `prestage=1`, so its slot waits for the image), as many at once as the pool's
`max-concurrent-pulls` allows, in order, windows or not; during the canary wave only the canaries pull
(fleet/image_pulls.py), so the rest pull once it has ended. The pull takes `durations["pull"]`; the slots are
given by the turn rule (`_schedule`), so a ready machine behind one still pulling may start first.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
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
from fleet.rollout import NodeStatuses, is_unavailable, max_unavailable_count, provisioning
from fleet.rollout_gates import canaries, pool_hold
from fleet.rollout_turn import order_of

# What each action is expected to take, in seconds, when no duration was recorded for it (stated in the output);
# "pull": pulling a new OS image before the slot (the "os-image" update, in its slot, then needs no pull).
DEFAULT_DURATIONS: Mapping[str, float] = {"none": 5, "files": 10, "reload": 15, "restart": 30, "reboot": 300,
                                          "os-image": 600, "provision": 600, "pull": 300}
ACTIONS = tuple(a for a in DEFAULT_DURATIONS if a != "pull")  # what a machine's update may be


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
    pull: tuple[float, float] | None = None  # when it pulls the new OS image, before its slot (None: no pull)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (`mco rollout plan -o json`)."""
        return {"node": self.node, "currentConfig": self.current, "action": self.action, "units": list(self.units),
                "drain": self.drain, "reboot": self.reboot, "wave": self.wave, "canary": self.canary,
                "start": self.start, "end": self.end,
                "pull": {"start": self.pull[0], "end": self.pull[1]} if self.pull is not None else None}


@dataclass(frozen=True)
class PlanHold:
    """What holds the pool's rollout when the plan is made: `spec.paused` (kind "paused"), the automatic pause
    ("rolloutPause") or a closed maintenance window ("window"); the canary wave is the plan's own first wave."""

    kind: str
    reason: str
    opens: str = ""  # a closed window: when the next opens (RFC 3339)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"kind": self.kind, "reason": self.reason, "opens": self.opens or None}


def held_by(record: PoolRecord, statuses: NodeStatuses, now: datetime) -> PlanHold | None:
    """What holds the pool's rollout at `now`, as the rollout judges it: `spec.paused` first (fleet/rollout.py
    `desired_for`), then its gates in their one order (fleet/rollout_gates.py `pool_hold`)."""
    if record.paused:
        return PlanHold("paused", "spec.paused is true in the pool's manifest: no machine is handed the target until "
                        "it is set false (a machine being provisioned still is)")
    hold = pool_hold(record, statuses, now)
    if hold is None or hold.kind == "canaries":
        return None
    return PlanHold(hold.kind, hold.reason, timestamp(hold.opens) if hold.opens is not None else "")


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
    waits_for: tuple[str, ...] = ()  # machines unavailable before it that it stalls on until they are available
    hold: PlanHold | None = None     # what holds the pool at `begins` (the machines: as they go once it is lifted)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"pool": self.pool, "target": self.target, "begins": self.begins, "waitsFor": list(self.waits_for),
                "hold": self.hold.to_dict() if self.hold is not None else None,
                "machines": [m.to_dict() for m in self.machines],
                "total": self.total, "durations": {a: {"seconds": self.durations[a], "source": "recorded"
                                                       if a in self.recorded else "default"}
                                                 for a in DEFAULT_DURATIONS}}


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
    without a reboot (none, files, reload, restart). `pull`: from the permission to pull (`NodeStatus.pull_at`)
    to the `image-staged` report before the slot, for the config the node was last let pull."""
    spans: dict[str, list[float]] = {}
    for status in statuses:
        let = parse_timestamp(status.pull_at) if status.pull_at else None
        for timeline in (status.timeline, *status.updates):
            first = next((i for i, e in enumerate(timeline) if e.phase == "prepared"), len(timeline))
            staged = next((parse_timestamp(e.at) for e in timeline[:first]  # before the slot: applier/prestage.py
                           if e.phase == "image-staged" and e.config == status.pull_config), None)
            if let is not None and staged is not None and staged >= let:
                spans.setdefault("pull", []).append((staged - let).total_seconds())
            if len(timeline) - first < 2 or timeline[-1].phase != "done":
                continue
            gated = next((e for e in timeline[first:] if e.phase == "health-checked"), timeline[-1])
            start, end = parse_timestamp(timeline[first].at), parse_timestamp(gated.at)
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


class _Slots:
    """maxUnavailable over time, as the rollout counts it (fleet/rollout.py `desired_for`): a machine may be handed
    the target while fewer than `limit` others are unavailable (`is_unavailable`). `running`: the ends of the
    updates under way; `held`: the machines unavailable before the rollout (Degraded, or updating to another
    config), which hold their slot until they move in their turn, in it (the rule leaves a machine's own
    unavailability out). When they fill every slot and nothing else can free one, the rollout stalls until one
    becomes available: the plan takes the first in order to (`waits_for`)."""

    def __init__(self, limit: int, held: Iterable[str]) -> None:
        self.limit, self.held = limit, dict.fromkeys(held)  # in the rollout order
        self.running, self.waits_for = list[float](), list[str]()

    def free(self, at: float) -> int:
        """Slots free at `at` for a machine that holds none (the updates ended by then have given theirs back)."""
        while self.running and self.running[0] <= at:
            heapq.heappop(self.running)
        return self.limit - len(self.running) - len(self.held)

    def take(self, node: str, end: float) -> None:
        """`node` updates until `end`, in a slot (its own, when it held one)."""
        self.held.pop(node, None)
        heapq.heappush(self.running, end)

    def stalled(self) -> bool:
        """Nothing runs and the held machines fill the slots: the first of them is taken as available again."""
        if self.running or not self.held:
            return False
        first = next(iter(self.held))
        self.waits_for.append(first)
        del self.held[first]
        return True


def _schedule(group: Sequence[MachinePlan], begin: float, ready: Mapping[str, float], slots: _Slots,
              record: PoolRecord, now: datetime | None) -> dict[str, float]:
    """When each machine of `group` (in the rollout order) is handed the target, from `begin`, by the turn rule
    (fleet/rollout_turn.py): with `n` slots free, the first `n` machines still waiting may take them, each once it
    is ready (`ready`: its OS image pulled) and a maintenance window is open; a machine not ready keeps its place,
    and one behind it within the `n` may go first. Event by event: an update ends, a pull ends, a window opens."""
    waiting, starts, at = list(group), dict[str, float](), begin
    while waiting:
        opens = in_window(record, at, now)
        moved = False
        if opens <= at:
            free, place = slots.free(at), 0
            for machine in list(waiting):
                own = 1 if machine.node in slots.held else 0
                if place >= free + own:
                    break
                if ready.get(machine.node, begin) <= at:
                    starts[machine.node] = at
                    slots.take(machine.node, at + machine.end)
                    waiting.remove(machine)
                    free -= 1 - own
                    moved = True
                else:
                    place += 1
        later = [t for t in (opens if opens > at else None, slots.running[0] if slots.running else None,
                             *(ready.get(m.node, begin) for m in waiting)) if t is not None and t > at]
        if later:
            at = min(later)
        elif not moved and not slots.stalled():
            raise RuntimeError("rollout plan: no slot, nothing running and nothing held")  # (maxUnavailable >= 1)
    return starts


class _Pulls:
    """The pool's `max-concurrent-pulls` over time (0: no limit): a machine pulls once a share is free, in order."""

    def __init__(self, limit: int, took: float) -> None:
        self.limit, self.took, self.running = limit, took, list[float]()

    def take(self, at: float) -> tuple[float, float]:
        """(start, end) of a pull that may begin from `at`."""
        if self.limit and len(self.running) >= self.limit:
            at = max(at, heapq.heappop(self.running))
        if self.limit:
            heapq.heappush(self.running, at + self.took)
        return at, at + self.took


def plan_rollout(record: PoolRecord, target: RenderedConfig, statuses: Sequence[NodeStatus], *,
                 rendered: Callable[[str], RenderedConfig], policy: DisruptionPolicy | None = None,
                 durations: Mapping[str, float] | None = None, now: datetime | None = None) -> RolloutPlan:
    """The preview of moving the pool's machines to `target` (rules in the module docstring). `record` carries the
    pool's settings (maxUnavailable, canaries, soak, pause) as they will be when the rollout runs. With `now`, the
    plan says what holds the pool then (`held_by`); its machines are planned as they go once the hold is lifted."""
    view = statuses if isinstance(statuses, NodeStatuses) else NodeStatuses(statuses)
    recorded = tuple(a for a in DEFAULT_DURATIONS if durations and a in durations)
    took = {**DEFAULT_DURATIONS, **(durations or {})}
    ordered = [s for n in order_of(record, view)[0] if (s := view.get(n)) is not None]
    chosen = set(canaries(record, view))
    soak = float(record.rollout.soak_seconds)
    cache: dict[str, RenderedConfig] = {}

    def config(name: str) -> RenderedConfig:
        if name not in cache:
            cache[name] = rendered(name)
        return cache[name]

    machines: dict[str, MachinePlan] = {}
    waiting: list[MachinePlan] = []
    going: list[MachinePlan] = []  # handed the target before the plan: under way from 0, in the slot they hold
    pulling: set[str] = set()
    for status in ordered:
        canary = status.name in chosen
        if status.current_config == target.name:
            machines[status.name] = MachinePlan(status.name, status.current_config, "none", (), False, False, None,
                                                canary, 0.0, 0.0)
        elif provisioning(status):  # handed the target as it asks, without a slot (fleet/rollout.py `desired_for`)
            machines[status.name] = MachinePlan(status.name, "", "provision", (), False, False, None, canary, 0.0,
                                                float(took["provision"]) + soak)
        else:
            action, units, drain, reboot = action_of(config(status.current_config), target, policy)
            machine = MachinePlan(status.name, status.current_config, action, units, drain, reboot, 0, canary, 0.0,
                                  float(took[action]) + soak)
            (going if status.desired_config == target.name else waiting).append(machine)
            machines[status.name] = machine
            if action == "os-image" and status.staged != target.name and not is_unavailable(status):
                pulling.add(status.name)  # the agent pulls it before its slot (server/node_routes.py `prestage`)
    begins: dict[str, float] = {m.node: 0.0 for m in going}
    under_way = [m for m in machines.values() if m.action == "provision" or m.node in begins]  # from 0
    slots = _Slots(max_unavailable_count(record.max_unavailable, len(ordered)),
                   (s.name for s in ordered if is_unavailable(s) and s.name not in begins and not provisioning(s)))
    for m in under_way:  # unavailable until they end
        slots.take(m.node, m.end)
    canaries_end = max((m.end for m in under_way if m.canary), default=0.0)
    pulls = _Pulls(record.rollout.max_concurrent_pulls, float(took["pull"]))
    pulled: dict[str, tuple[float, float]] = {}
    for group in ([m for m in waiting if m.canary], [m for m in waiting if not m.canary]):
        at = 0.0 if group and group[0].canary else canaries_end
        for machine in group:  # the canary wave lets only the canaries pull (fleet/image_pulls.py)
            if machine.node in pulling:
                pulled[machine.node] = pulls.take(at)
        starts = _schedule(group, at, {n: end for n, (_, end) in pulled.items()}, slots, record, now)
        begins.update(starts)
        canaries_end = max([canaries_end, *(starts[m.node] + m.end for m in group if m.canary)])
    waves = {b: i for i, b in enumerate(sorted(set(begins.values())))}
    for name, begin in begins.items():
        m = machines[name]
        machines[name] = replace(m, wave=waves[begin], start=begin, end=begin + m.end, pull=pulled.get(name))
    plan = tuple(machines[s.name] for s in ordered)
    total = max((m.end for m in plan), default=0.0)
    return RolloutPlan(record.name, target.name, plan, total, took, recorded, timestamp(now) if now else "",
                       tuple(slots.waits_for), held_by(record, view, now) if now is not None else None)
