"""fleet/rollout_turn.py: free slots go to the present waiting nodes in the rollout order; offline ones are passed
over and counted; the canary wave and a revert's nodes going back come first."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

import pytest

from fleet.etcd_claims import Overlay
from fleet.machine_entry import MachineEntry
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.rollout import NodeStatuses, desired_for, order_key
from fleet.rollout_settings import RolloutSettings
from fleet.rollout_turn import skipped, turn_comes, waiting

OLD, NEW = "rendered-worker-old", "rendered-worker-new"
POOL = PoolRecord(name="worker", current=NEW, max_unavailable=2)


def _n(i: int, current: str = OLD, desired: str = OLD, state: str = "Done") -> NodeStatus:
    return NodeStatus(f"n{i:02d}", "worker", current, desired, state, registered_at=f"2026-01-01T00:00:{i:02d}Z")


def test_only_the_first_present_waiting_nodes_may_take_the_free_slots() -> None:
    view = NodeStatuses(_n(i) for i in range(10))
    every = lambda s: True  # noqa: E731
    assert [i for i in range(10) if turn_comes(f"n{i:02d}", POOL, view, 2, every)] == [0, 1]
    offline = {"n00", "n02"}
    present = lambda s: s.name not in offline  # noqa: E731
    assert [i for i in range(10) if turn_comes(f"n{i:02d}", POOL, view, 2, present)] == [0, 1, 2, 3]
    assert not turn_comes("n05", POOL, view, 0, every)


def test_desired_for_hands_out_in_the_order_whoever_asks_first() -> None:
    rng = random.Random(7)
    view = NodeStatuses(_n(i) for i in range(20))
    handed: list[int] = []
    one = PoolRecord(name="worker", current=NEW, max_unavailable=1)
    for _ in range(400):  # nodes ask in random order; one slot; the node handed it finishes at once
        i = rng.randrange(20)
        if desired_for(f"n{i:02d}", one, view, present=lambda s: True) == NEW and view.get(f"n{i:02d}").desired_config != NEW:
            handed.append(i)
            view.put(_n(i, NEW, NEW))
    assert handed == sorted(handed) and len(handed) > 10


def test_skipped_counts_waiting_nodes_before_a_moved_one_canaries_aside() -> None:
    members = [_n(0), _n(1, OLD, NEW, "Working"), _n(2), _n(3, NEW, NEW), _n(4)]
    assert skipped(POOL, members) == ["n00", "n02"]
    canary_pool = PoolRecord(name="worker", current=NEW, max_unavailable=2, rollout=RolloutSettings(canaries="1"))
    moved_canary = [_n(0, OLD, NEW, "Working"), _n(1), _n(2)]
    assert skipped(canary_pool, moved_canary) == []
    assert skipped(POOL, [_n(0), _n(1)]) == []
    pulling = replace(_n(0), pull_config=NEW, pull_at="2026-01-01T00:01:00Z")  # keeps its turn while it pulls
    assert skipped(POOL, [pulling, *members[1:]]) == ["n02"]
    assert skipped(POOL, [replace(pulling, staged=NEW), *members[1:]]) == ["n00", "n02"]  # staged, yet left behind
    assert skipped(POOL, [pulling, *members[1:]], "2026-01-01T00:02:00Z") == ["n00", "n02"]  # its lease lapsed


def test_a_revert_sends_the_nodes_going_back_first() -> None:
    record = PoolRecord(name="worker", current=OLD, max_unavailable=1, reverted_from=NEW)
    view = NodeStatuses([NodeStatus("n00", "worker", "rendered-worker-older", "rendered-worker-older", "Done",
                                    registered_at="2026-01-01T00:00:00Z"),
                         NodeStatus("n09", "worker", NEW, NEW, "Done", registered_at="2026-01-01T00:00:09Z")])
    assert turn_comes("n09", record, view, 1, lambda s: True)
    assert not turn_comes("n00", record, view, 1, lambda s: True)


def _in_turn(view: NodeStatuses, free: int, present: Callable[[NodeStatus], bool]) -> list[str]:
    """The rule as the module docstring states it, read by a plain pass: every node of the order up to the
    `free`-th present waiting one."""
    order = [s.name for s in sorted((view.get(n) for n in _NAMES), key=lambda s: order_key(s, False))]  # type: ignore[arg-type]
    line = [n for n in order if waiting(view.get(n), POOL) and present(view.get(n))]  # type: ignore[arg-type]
    if free <= 0:
        return []
    last = order.index(line[free - 1]) if free <= len(line) else len(order)
    return sorted(order[:last + 1])


_NAMES = [f"n{i:02d}" for i in range(80)]


def test_the_turn_follows_each_change_and_a_claim_groups_view_leaves_the_statuses_alone() -> None:
    """The turn rule kept up to date change by change (and a claim group's view of the statuses, fleet/etcd_claims.py
    `Overlay`, read on top of it) answers as a plain pass over the order does."""
    rng = random.Random(11)
    registered = {n: f"2026-01-01T00:00:{rng.randrange(60):02d}Z" for n in _NAMES}

    def node(name: str, current: str = OLD, desired: str = OLD, state: str = "Done") -> NodeStatus:
        return NodeStatus(name, "worker", current, desired, state, registered_at=registered[name])

    view = NodeStatuses(node(n) for n in _NAMES)
    offline: set[str] = set()
    present = lambda s: s.name not in offline  # noqa: E731
    for step in range(200):  # each node handed the target, then Done at it, in a random order
        working = [n for n in _NAMES if view.get(n).state == "Working"]  # type: ignore[union-attr]
        line = [n for n in _NAMES if waiting(view.get(n), POOL)]
        if line and rng.random() < 0.2:  # a waiting node's record changes (a relabel): still in line
            name = rng.choice(sorted(offline & set(line)) or line)
            view.put(replace(node(name), message=f"relabelled at step {step}"))
        elif working and (not line or rng.random() < 0.5):
            view.put(node(rng.choice(working), NEW, NEW))
        elif line:
            view.put(node(rng.choice(line), OLD, NEW, "Working"))
        if step % 25 == 24:  # a new verdict (the server's changes every second): some nodes went offline
            offline = offline | set(rng.sample(_NAMES, 3))
            present = lambda s, gone=frozenset(offline): s.name not in gone  # noqa: E731
        free = rng.randrange(0, 6)
        assert [n for n in _NAMES if turn_comes(n, POOL, view, free, present)] == _in_turn(view, free, present)
        if step % 3 == 0:  # a claim group's view hands out one more (the next step's check, after one change of
            group = Overlay(view)  # the statuses, finds them as they are: the group's change is its own)
            line = [n for n in _NAMES if waiting(view.get(n), POOL)]
            for handed in rng.sample(line, min(1, len(line))):
                group.put(node(handed, OLD, NEW, "Working"))
                assert [n for n in _NAMES if turn_comes(n, POOL, group, free, present)] == \
                    _in_turn(group, free, present)


def _machine(node: str, rendered: str) -> MachineEntry:
    return MachineEntry(f"m-{node}", {"hostname": node}, rendered, {}, "h")


MACHINE = NEW + "-m1"  # n00's own config, from its machine document


@pytest.mark.parametrize(("before", "after", "statuses", "expected"), [
    # n00 is handed its machine's config; the document is edited back to the config n00 runs: it waits no more
    ((_machine("n00", MACHINE),), (_machine("n00", OLD),), [_n(0)], ["n00", "n01"]),
    # n00 runs its machine's config; the document is edited to another: n00 waits again, first in the order
    ((_machine("n00", MACHINE),), (_machine("n00", MACHINE + "x"),), [_n(0, MACHINE, MACHINE)], ["n00"]),
    # a machine document comes for n01 naming the config it runs: it waits no more
    ((), (_machine("n01", OLD),), [_n(0, NEW, NEW)], ["n00", "n01", "n02"]),
])
def test_the_turn_follows_a_machine_documents_change_while_the_pools_target_stays(
        before: tuple[MachineEntry, ...], after: tuple[MachineEntry, ...], statuses: list[NodeStatus],
        expected: list[str]) -> None:
    """Whether a node waits reads its own target (`PoolRecord.target_for`): a machine document edited while the
    pool's target stays moves the turn as a fresh view of the same statuses has it."""
    view = NodeStatuses(statuses + [_n(i) for i in range(len(statuses), 6)])
    names = [f"n{i:02d}" for i in range(6)]
    every = lambda s: True  # noqa: E731
    for machines in (before, after):
        record = PoolRecord(name="worker", current=NEW, max_unavailable=1, machines=machines)
        turn = [n for n in names if turn_comes(n, record, view, 1, every)]
    fresh = NodeStatuses(view.get(n) for n in names)  # type: ignore[misc]
    assert turn == [n for n in names if turn_comes(n, record, fresh, 1, every)] == expected


@pytest.mark.parametrize(("offline", "asked_again"), [
    (set(), []),
    ({f"n{i:02d}" for i in range(30)}, []),  # offline before where the turn starts: never asked again
    ({f"n{i:02d}" for i in range(30)} | {"n31"}, ["n31"]),  # offline inside the turn: asked again (may be back)
])
def test_a_decision_asks_again_only_offline_nodes_from_where_the_turn_starts(offline: set[str],
                                                                            asked_again: list[str]) -> None:
    """After a change, with the same presence verdict, a decision asks again only the offline nodes at or after
    the first one in line: those before it cannot change whose turn it is, and asking them all made each claim's
    decision cost in proportion to the nodes offline."""
    names = _NAMES
    view = NodeStatuses(_n(i) for i in range(len(names)))
    asked: list[str] = []

    def present(status: NodeStatus) -> bool:
        asked.append(status.name)
        return status.name not in offline

    first = [n for n in names if turn_comes(n, POOL, view, 2, present)]
    for step in range(3):  # changes the mirror applies, each followed by a claim's decision
        asked.clear()
        view.put(replace(_n(len(names) - 1), message=f"report {step}"))
        assert [n for n in names if turn_comes(n, POOL, view, 2, present)] == first
        assert sorted(set(asked)) == asked_again
    assert first == _in_turn(view, 2, lambda s: s.name not in offline)


def test_the_caches_stay_bounded_as_the_target_and_the_canaries_move() -> None:
    """One cache of the line per pool and need, and of the order per pool, whatever the target, the canaries and
    the config a revert left: a long-lived mirror sees a new target per rollout, and each cache holds arrays the
    size of the pool."""
    view = NodeStatuses(_n(i) for i in range(20))
    every = lambda s: True  # noqa: E731
    sizes = []
    for t in range(40):
        record = PoolRecord(name="worker", current=f"rendered-worker-{t}", max_unavailable=2,
                            reverted_from=f"rendered-worker-{t + 1}" if t % 2 else "")
        canaries = {f"n{i:02d}" for i in range(t % 7 + 1)}
        assert turn_comes("n00", record, view, 2, every, only=canaries)
        assert turn_comes("n00", record, view, 2, every)
        sizes.append(len(view.memo))
    assert sizes == [sizes[0]] * 40


OLDER = "rendered-worker-older"


def _turn_on(record: PoolRecord, view: NodeStatuses, free: int, present: Callable[[NodeStatus], bool]) -> list[str]:
    """The nodes `turn_comes` lets through on `view`, and the same on a fresh view of the same statuses (the
    rule as documented: no cache carried over from earlier changes)."""
    names = sorted(s.name for s in view)
    fresh = NodeStatuses(view.get(n) for n in names)  # type: ignore[misc]
    cached = [n for n in names if turn_comes(n, record, view, free, present)]
    assert cached == [n for n in names if turn_comes(n, record, fresh, free, present)]
    return cached


def test_a_node_before_where_the_turn_starts_that_waits_again_pulls_the_turn_back() -> None:
    """A node the turn had passed (handed the target) that waits again (its desired config set back) is first in
    the order again: with one slot free, the turn ends at it, as a fresh view has it."""
    view = NodeStatuses([_n(0, OLD, NEW, "Working")] + [_n(i) for i in range(1, 6)])
    every = lambda s: True  # noqa: E731
    assert _turn_on(POOL, view, 1, every) == ["n00", "n01"]
    view.put(_n(0))
    assert _turn_on(POOL, view, 1, every) == ["n00"]


def test_a_node_passed_over_offline_that_is_back_at_the_next_verdict_pulls_the_turn_back() -> None:
    """A node passed over while offline, present at the next verdict (the server's changes every second), takes
    its place back: the turn ends at it, not one node further."""
    view = NodeStatuses(_n(i) for i in range(6))
    assert _turn_on(POOL, view, 1, lambda s: s.name != "n00") == ["n00", "n01"]
    assert _turn_on(POOL, view, 1, lambda s: True) == ["n00"]
    view.put(replace(_n(5), message="a report"))  # and after a change of another node
    assert _turn_on(POOL, view, 1, lambda s: s.name != "n01") == ["n00"]


def test_a_node_that_starts_going_back_moves_to_the_front_of_a_reverts_order() -> None:
    """During a revert the nodes going back come first: a waiting node whose desired config becomes the one the
    revert left joins them, though the sort order of the pool did not change."""
    record = PoolRecord(name="worker", current=OLD, max_unavailable=1, reverted_from=NEW)
    view = NodeStatuses([_n(i, OLDER, OLDER) for i in range(4)] + [_n(4, NEW, NEW), _n(5, NEW, NEW)])
    every = lambda s: True  # noqa: E731
    assert _turn_on(record, view, 1, every) == ["n04"]
    view.put(_n(2, OLDER, NEW, "Working"))
    assert _turn_on(record, view, 1, every) == ["n02"]
    view.put(_n(2, OLDER, OLDER))  # and back out of the front
    assert _turn_on(record, view, 1, every) == ["n04"]


@pytest.mark.parametrize("seed", range(6))
def test_the_cached_turn_answers_as_a_fresh_view_over_random_changes(seed: int) -> None:
    """Random changes of configs, states and presence (a new verdict now and then), during a rollout or a revert,
    with or without canaries: the long-lived view's answer is the fresh view's after every change."""
    rng = random.Random(seed)
    records = [POOL, PoolRecord(name="worker", current=OLD, max_unavailable=2, reverted_from=NEW),
               PoolRecord(name="worker", current=NEW, max_unavailable=2, rollout=RolloutSettings(canaries="2"))]
    names = [f"n{i:02d}" for i in range(12)]
    configs = [OLDER, OLD, NEW]
    view = NodeStatuses(_n(i, rng.choice(configs), rng.choice(configs)) for i in range(12))
    offline: frozenset[str] = frozenset()
    for step in range(150):
        i = rng.randrange(12)
        view.put(replace(_n(i, rng.choice(configs), rng.choice(configs), rng.choice(["Done", "Working"])),
                         message=f"step {step}"))
        if rng.random() < 0.3:
            offline = frozenset(rng.sample(names, rng.randrange(4)))
        record = records[seed % 3]
        only = set(names[:4]) if rng.random() < 0.3 else None
        for free in range(4):
            present = lambda s, gone=offline: s.name not in gone  # noqa: E731
            fresh = NodeStatuses(view.get(n) for n in names)  # type: ignore[misc]
            assert [n for n in names if turn_comes(n, record, view, free, present, only=only)] == \
                [n for n in names if turn_comes(n, record, fresh, free, present, only=only)], (step, free)
