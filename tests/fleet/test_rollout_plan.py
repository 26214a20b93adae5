"""fleet/rollout_plan.py: actions as the applier decides them, waves in the rollout order with canaries first,
starts held to maintenance windows."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from fleet.disruption_policy import DisruptionPolicy
from fleet.maintenance_windows import parse_window
from fleet.node_status import NodeStatus
from fleet.phases import PhaseEntry
from fleet.rendered import MachineConfigSpec, PoolRecord, RenderedConfig
from fleet.rollout import desired_for
from fleet.rollout_plan import DEFAULT_DURATIONS, RolloutPlan, action_of, plan_rollout, recorded_durations
from fleet.rollout_settings import RolloutSettings


def _config(name: str, *, image: str = "", motd: str = "a") -> RenderedConfig:
    """A config with one file that MCO's default policies let change without a reboot."""
    config = {"ignition": {"version": "3.4.0"},
              "storage": {"files": [{"path": "/var/lib/kubelet/config.json", "contents": {"source": f"data:,{motd}"}}]}}
    return RenderedConfig(name, "worker", MachineConfigSpec(config, os_image_url=image))


OLD, FILES, IMAGE = _config("rendered-worker-old"), _config("rendered-worker-files", motd="b"), \
    _config("rendered-worker-image", image="quay.io/example/os@sha256:" + "1" * 64)
BY_NAME = {c.name: c for c in (OLD, FILES, IMAGE)}


def _nodes(n: int) -> list[NodeStatus]:
    return [NodeStatus(f"n{i}", "worker", OLD.name, OLD.name, "Done", "", "2026-01-01T00:00:00Z",
                       registered_at=f"2026-01-{i + 1:02d}T00:00:00Z") for i in range(n)]


def test_waves_canaries_and_actions() -> None:
    record = PoolRecord("worker", current=IMAGE.name, max_unavailable=2,
                        rollout=RolloutSettings(canaries="1", soak_seconds=60))
    plan = plan_rollout(record, IMAGE, [*_nodes(5), NodeStatus("at", "worker", IMAGE.name, IMAGE.name, "Done")],
                        rendered=BY_NAME.__getitem__)
    moving = [m for m in plan.machines if m.wave is not None]
    assert [m.node for m in moving] == ["n0", "n1", "n2", "n3", "n4"]  # oldest first
    assert {m.action for m in moving} == {"os-image"} and all(m.reboot and m.drain for m in moving)
    assert [(m.node, m.wave, m.canary) for m in moving[:3]] == [("n0", 0, True), ("n1", 1, False), ("n2", 1, False)]
    update, pull = DEFAULT_DURATIONS["os-image"], DEFAULT_DURATIONS["pull"]
    assert moving[0].pull == (0, pull) and moving[0].start == pull  # the canary pulls before its slot
    canary_end = pull + update + 60  # its update, then its soak (the health gate)
    # the others pull only after the canary wave (fleet/image_pulls.py), all at once (no limit), then take slots
    assert [m.pull for m in moving[1:]] == [(canary_end, canary_end + pull)] * 4
    assert moving[1].start == canary_end + pull
    assert plan.total == canary_end + pull + 2 * (update + 60)  # two waves of two, each machine soaking too
    assert plan.to_dict()["machines"][0]["pull"] == {"start": 0, "end": pull}
    assert next(m for m in plan.machines if m.node == "at").action == "none"


def _files(name: str, files: dict[str, str], **spec: object) -> RenderedConfig:
    entries = [{"path": p, "contents": {"source": f"data:,{c}"}} for p, c in files.items()]
    config = {"ignition": {"version": "3.4.0"}, "storage": {"files": entries}}
    return RenderedConfig(name, "worker", MachineConfigSpec(config, **spec))  # type: ignore[arg-type]


REGISTRIES = "/etc/containers/registries.conf"
CA = "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"
SERVICES = {"nodeDisruptionPolicy": {"files": [
    {"path": "/etc/a.conf", "actions": [{"type": "Reload", "reload": {"serviceName": "a.service"}}]},
    {"path": "/etc/b.conf", "actions": [{"type": "Restart", "restart": {"serviceName": "b.service"}}]}]}}
# (change, new files, policy, expected (action, units, drain, reboot)): MCO pkg/daemon/update.go
# calculatePostConfigChangeNodeDisruptionAction under the default policies of pkg/apihelpers (and a user's), as
# the applier carries them out (applier/writing.py: a Special action reloads crio.service)
ACTIONS = [
    ("kubelet-auth-none", {"/var/lib/kubelet/config.json": "b"}, None, ("files", (), False, False)),
    ("policy-json-reload-crio", {"/etc/containers/policy.json": "b"}, None, ("reload", ("crio.service",), False, False)),
    ("registries-special-reloads-crio", {REGISTRIES: "b"}, None, ("reload", ("crio.service",), True, False)),
    ("user-ca-restarts", {CA: "b"}, None,
     ("restart", ("coreos-update-ca-trust.service", "crio.service"), False, False)),
    ("other-anchor-reboots", {"/etc/pki/ca-trust/source/anchors/x.crt": "b"}, None, ("reboot", (), True, True)),
    ("no-policy-reboots", {"/etc/motd": "b"}, None, ("reboot", (), True, True)),
    ("reload-and-restart-name-both", {"/etc/a.conf": "b", "/etc/b.conf": "b"}, SERVICES,
     ("restart", ("b.service", "a.service"), False, False)),
]


@pytest.mark.parametrize(("new", "policy", "expected"), [c[1:] for c in ACTIONS], ids=[c[0] for c in ACTIONS])
def test_action_of(new: dict[str, str], policy: dict[str, object] | None,
                   expected: tuple[str, tuple[str, ...], bool, bool]) -> None:
    old = _files("rendered-worker-old", {p: "a" for p in new})
    assert action_of(old, _files("rendered-worker-new", new), DisruptionPolicy.from_dict(policy)) == expected


def test_starts_wait_for_the_window() -> None:
    window = parse_window({"days": ["Sat"], "start": "22:00", "duration": "1h", "timeZone": "UTC"})
    record = PoolRecord("worker", current=FILES.name, max_unavailable=1, rollout=RolloutSettings(windows=(window,)))
    now = datetime(2026, 12, 5, 22, 59, 50, tzinfo=UTC)  # ten seconds before the window closes
    plan = plan_rollout(record, FILES, _nodes(2), rendered=BY_NAME.__getitem__, now=now)
    first, second = plan.machines
    assert (first.action, first.start, first.end) == ("files", 0, DEFAULT_DURATIONS["files"])
    assert second.start == 7 * 24 * 3600 - 3590  # the next Saturday 22:00; the first machine finished past 23:00
    assert plan.begins == "2026-12-05T22:59:50Z"


def _timeline(*phases: tuple[str, str]) -> tuple[PhaseEntry, ...]:
    return tuple(PhaseEntry(phase, f"2026-12-01T00:{at}Z", "rendered-worker-x") for phase, at in phases)


def test_pulls_before_the_slot_within_the_pull_limit() -> None:
    """maxUnavailable 2, `max-concurrent-pulls` 1: n0 pulls first and keeps its turn; n1 staged the image already
    and, second in line with two slots free, takes one at once (the server hands it out while n0 pulls); n2 pulls
    once n0's pull ended and starts when n1's update frees a slot. A machine whose target keeps its OS image pulls
    nothing."""
    update, pull = DEFAULT_DURATIONS["os-image"], DEFAULT_DURATIONS["pull"]
    record = PoolRecord("worker", current=IMAGE.name, max_unavailable=2, rollout=RolloutSettings(max_concurrent_pulls=1))
    nodes = _nodes(3)
    nodes[1] = replace(nodes[1], staged=IMAGE.name)
    plan = plan_rollout(record, IMAGE, nodes, rendered=BY_NAME.__getitem__)
    assert [(m.node, m.pull, m.start) for m in plan.machines] == [
        ("n0", (0, pull), pull), ("n1", None, 0), ("n2", (pull, 2 * pull), max(2 * pull, update))]
    plan = plan_rollout(replace(record, current=FILES.name), FILES, _nodes(2), rendered=BY_NAME.__getitem__)
    assert [m.pull for m in plan.machines] == [None, None]


def test_recorded_pulls_run_from_the_permission_to_the_image_staged_before_the_slot() -> None:
    """`pull`: from `pull_at` (the claim that let the node pull) to its `image-staged` report of that config,
    before the update's `prepared`; the update itself counts from `prepared`."""
    image = [PhaseEntry(phase, f"2026-01-01T00:{at}:00Z", IMAGE.name)
             for phase, at in (("image-staged", "04"), ("prepared", "10"), ("done", "30"))]
    staged_only = (PhaseEntry("image-staged", "2026-01-01T00:02:00Z", IMAGE.name),)
    nodes = [NodeStatus("n0", "worker", IMAGE.name, IMAGE.name, "Done", timeline=tuple(image),
                        pull_config=IMAGE.name, pull_at="2026-01-01T00:00:00Z", staged=IMAGE.name),
             NodeStatus("n1", "worker", OLD.name, OLD.name, "Done", timeline=staged_only,
                        pull_config=IMAGE.name, pull_at="2026-01-01T00:00:00Z", staged=IMAGE.name),
             NodeStatus("n2", "worker", OLD.name, OLD.name, "Done", timeline=staged_only,  # no permission recorded
                        staged=IMAGE.name)]
    found = recorded_durations(nodes)
    assert found["pull"] == 180 and found["os-image"] == 1200  # (240 and 120 s); 20 minutes from prepared
    plan = plan_rollout(PoolRecord("worker", current=IMAGE.name), IMAGE, _nodes(1), rendered=BY_NAME.__getitem__,
                        durations=found)
    assert plan.to_dict()["durations"]["pull"] == {"seconds": 180, "source": "recorded"}


def test_durations_are_medians_of_finished_timelines() -> None:
    reboot = [_timeline(("prepared", "00:00"), ("reboot-requested", "00:10"), ("done", f"0{m}:00")) for m in (2, 4, 9)]
    files = _timeline(("prepared", "00:00"), ("written", "00:05"), ("done", "00:20"))
    unfinished = _timeline(("prepared", "00:00"), ("reboot-requested", "00:10"))
    nodes = [NodeStatus(f"n{i}", "worker", OLD.name, OLD.name, "Done", timeline=t)
             for i, t in enumerate([*reboot[:2], files, unfinished])]
    nodes.append(NodeStatus("old", "worker", OLD.name, OLD.name, "Done", updates=(reboot[2],)))
    found = recorded_durations(nodes)
    assert found["reboot"] == 240 and found["files"] == found["restart"] == found["none"] == 20
    assert "os-image" not in found
    record = PoolRecord("worker", current=FILES.name, max_unavailable=1)
    plan = plan_rollout(record, FILES, _nodes(2), rendered=BY_NAME.__getitem__, durations=found)
    assert plan.total == 40 and "files" in plan.recorded and "os-image" not in plan.recorded
    assert plan.to_dict()["durations"]["files"] == {"seconds": 20, "source": "recorded"}


def test_recorded_durations_end_where_the_health_gate_begins_and_the_plan_adds_the_pools_soak() -> None:
    """A timeline recorded under another soak (10 minutes of `health-checked`) counts up to the gate: the plan adds
    this pool's own soak to every machine."""
    gated = _timeline(("prepared", "00:00"), ("written", "00:05"), ("health-checked", "00:20"), ("done", "10:20"))
    found = recorded_durations([NodeStatus("n0", "worker", OLD.name, OLD.name, "Done", timeline=gated)])
    assert found["files"] == 20
    record = PoolRecord("worker", current=FILES.name, max_unavailable=1, rollout=RolloutSettings(soak_seconds=30))
    plan = plan_rollout(record, FILES, _nodes(2), rendered=BY_NAME.__getitem__, durations=found)
    assert [(m.start, m.end) for m in plan.machines] == [(0, 50), (50, 100)]


def test_a_machine_being_provisioned_takes_the_target_at_once_without_a_slot() -> None:
    """A machine that reported but never ran a config is handed the target as it asks (fleet/rollout.py
    `desired_for`, no slot): the plan gives it no wave and no drain or reboot of a running machine."""
    record = PoolRecord("worker", current=FILES.name, max_unavailable=1)
    new = NodeStatus("new", "worker", "", "", "Done", registered_at="2025-12-01T00:00:00Z")  # the oldest: first
    fleet = [*_nodes(2), new]
    assert desired_for("new", record, fleet, now=datetime(2026, 12, 1, tzinfo=UTC)) == FILES.name
    plan = plan_rollout(record, FILES, fleet, rendered=BY_NAME.__getitem__)
    by_node = {m.node: m for m in plan.machines}
    got = by_node["new"]
    assert (got.action, got.wave, got.start, got.drain, got.reboot) == ("provision", None, 0.0, False, False)
    assert got.end == DEFAULT_DURATIONS["provision"]
    assert [by_node["n0"].wave, by_node["n1"].wave] == [0, 1]  # the slots go to the machines that ran a config


def _rollout_waves(record: PoolRecord, statuses: list[NodeStatus]) -> list[set[str]]:
    """What the rollout does, in rounds of equal updates: every node is asked (fleet/rollout.py `desired_for`, every
    node online: the turn rule) until none more is handed the target, then every node handed it reports Done."""
    now = datetime(2026, 12, 1, tzinfo=UTC)
    view = {s.name: s for s in statuses}
    target = record.current
    waves: list[set[str]] = []
    for _ in range(len(statuses) + 1):
        wave: set[str] = set()
        while True:
            handed = {n for n, s in view.items() if s.desired_config != target and s.current_config != target
                      and desired_for(n, record, list(view.values()), now=now, present=lambda _s: True) == target}
            if not handed:
                break
            for name in sorted(handed)[:1]:  # one at a time: each hand-out counts against the next
                s = view[name]
                view[name] = NodeStatus(name, s.pool, s.current_config, target, "Working", "", s.reported_at,
                                        registered_at=s.registered_at)
                wave.add(name)
        if not wave:
            break
        for name, s in view.items():
            if s.desired_config == target:
                view[name] = NodeStatus(name, s.pool, target, target, "Done", "", s.reported_at,
                                        registered_at=s.registered_at)
        waves.append(wave)
    return waves


def _planned_waves(plan: RolloutPlan) -> list[set[str]]:
    waves: dict[int, set[str]] = {}
    for m in plan.machines:
        if m.wave is not None:
            waves.setdefault(m.wave, set()).add(m.node)
    return [waves[w] for w in sorted(waves)]


def test_machines_already_unavailable_keep_their_slots() -> None:
    """A machine Degraded at its config and one updating to another config count against maxUnavailable, as in
    the rollout (fleet/rollout.py `is_unavailable`; MCO getCandidateMachines: maxUnavailable minus the unavailable):
    the first wave gets the slots left; each of them moves in its turn, in the slot it holds."""
    nodes = _nodes(6)
    nodes[2] = replace(nodes[2], state="Degraded", message="disk full")
    nodes[4] = replace(nodes[4], desired_config="rendered-worker-other", state="Working")
    record = PoolRecord("worker", current=FILES.name, max_unavailable=3)
    plan = plan_rollout(record, FILES, nodes, rendered=BY_NAME.__getitem__)
    expected = [{"n0"}, {"n1", "n2"}, {"n3", "n4", "n5"}]  # n2 and n4 move in the slots they hold
    assert _rollout_waves(record, nodes) == expected
    assert _planned_waves(plan) == expected
    took = DEFAULT_DURATIONS["files"]
    assert [(m.start, m.end) for m in plan.machines] == [(0, took), *[(took, 2 * took)] * 2, *[(2 * took, 3 * took)] * 3]
    assert plan.waits_for == ()


def test_machines_unavailable_filling_max_unavailable_stall_the_rollout_and_the_plan_says_for_whom() -> None:
    """maxUnavailable 1 and a machine Degraded at its config: the rollout hands nothing (its turn never comes: the
    machine before it has no slot); the plan names the machine it waits for and the times once it is available."""
    nodes = _nodes(3)
    nodes[1] = replace(nodes[1], state="Degraded", message="disk full")
    record = PoolRecord("worker", current=FILES.name, max_unavailable=1)
    assert _rollout_waves(record, nodes) == []
    plan = plan_rollout(record, FILES, nodes, rendered=BY_NAME.__getitem__)
    assert plan.waits_for == ("n1",)
    assert plan.to_dict()["waitsFor"] == ["n1"]
    assert _planned_waves(plan) == [{"n0"}, {"n1"}, {"n2"}]


NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def test_a_paused_pool_is_planned_held_and_as_it_would_go_once_resumed() -> None:
    """`spec.paused`: the rollout hands nothing but to a machine being provisioned (fleet/rollout.py `desired_for`);
    the plan says so and why, and plans the rest as it would go once the pool is resumed."""
    new = NodeStatus("new", "worker", "", "", "Done", registered_at="2025-12-01T00:00:00Z")
    fleet = [*_nodes(2), new]
    record = PoolRecord("worker", current=FILES.name, max_unavailable=1, paused=True)
    assert [desired_for(s.name, record, fleet, now=NOW) for s in fleet] == [OLD.name, OLD.name, FILES.name]
    plan = plan_rollout(record, FILES, fleet, rendered=BY_NAME.__getitem__, now=NOW)
    assert plan.hold is not None and plan.hold.kind == "paused" and "spec.paused" in plan.hold.reason
    assert plan.to_dict()["hold"] == {"kind": "paused", "reason": plan.hold.reason, "opens": None}
    resumed = plan_rollout(replace(record, paused=False), FILES, fleet, rendered=BY_NAME.__getitem__, now=NOW)
    assert resumed.hold is None and resumed.to_dict()["hold"] is None
    assert plan.machines == resumed.machines


def test_a_pool_the_rollout_paused_is_planned_held_with_the_node_and_why() -> None:
    record = PoolRecord("worker", current=FILES.name, max_unavailable=2)
    nodes = _nodes(4)
    nodes[0] = replace(nodes[0], desired_config=FILES.name, state="Degraded", message="health check app failed",
                       reported_at="2026-12-01T11:00:00Z")
    assert desired_for("n1", record, nodes, now=NOW) == OLD.name  # paused by the rollout: nothing new
    plan = plan_rollout(record, FILES, nodes, rendered=BY_NAME.__getitem__, now=NOW)
    assert plan.hold is not None and plan.hold.kind == "rolloutPause"
    assert "node n0 failed" in plan.hold.reason and "health check app failed" in plan.hold.reason
    assert [m.wave for m in plan.machines] == [0, 0, 1, 1]  # once resumed: n0 under way, then in order


def test_a_pool_outside_its_windows_is_planned_held_until_the_next_opens() -> None:
    window = parse_window({"days": ["Sat"], "start": "22:00", "duration": "1h", "timeZone": "UTC"})
    record = PoolRecord("worker", current=FILES.name, max_unavailable=1, rollout=RolloutSettings(windows=(window,)))
    now = datetime(2026, 12, 5, 12, tzinfo=UTC)  # Saturday noon: the window opens in ten hours
    assert desired_for("n0", record, _nodes(1), now=now) == OLD.name
    plan = plan_rollout(record, FILES, _nodes(1), rendered=BY_NAME.__getitem__, now=now)
    assert plan.hold is not None and plan.hold.kind == "window"
    assert plan.to_dict()["hold"]["opens"] == "2026-12-05T22:00:00Z"
    assert plan.machines[0].start == 10 * 3600
