"""fleet/rollout.py: maxUnavailable, paused pools, Degraded nodes stop the rollout widening; the per-pool
counts NodeStatuses keeps as statuses change."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from fleet.node_status import NodeStatus, with_report
from fleet.rendered import PoolRecord
from fleet.rollout import (
    NodeStatuses,
    PoolCounts,
    RolloutError,
    desired_for,
    is_unavailable,
    max_unavailable_count,
)

OLD, NEW = "rendered-worker-old", "rendered-worker-new"


def _n(name: str, current: str = OLD, desired: str = OLD, state: str = "Done", pool: str = "worker") -> NodeStatus:
    return NodeStatus(name=name, pool=pool, current_config=current, desired_config=desired, state=state)


MAX = [
    ("int", 2, 10, 2), ("zero-is-one", 0, 10, 1), ("percent-rounds-down", "25%", 10, 2),
    ("percent-min-one", "10%", 3, 1), ("hundred-percent", "100%", 7, 7), ("int-string", "3", 5, 3),
]


@pytest.mark.parametrize("value,size,count", [c[1:] for c in MAX], ids=[c[0] for c in MAX])
def test_max_unavailable(value: int | str, size: int, count: int) -> None:
    assert max_unavailable_count(value, size) == count


@pytest.mark.parametrize("value", ["x", "-1", -1, "1.5%", True], ids=["word", "neg-str", "neg", "float", "bool"])
def test_max_unavailable_invalid(value: object) -> None:
    with pytest.raises(RolloutError):
        max_unavailable_count(value, 3)  # type: ignore[arg-type]


POOL = PoolRecord(name="worker", current=NEW, max_unavailable=1)
CASES = [
    ("first-node-gets-target", "a", POOL, [_n("a"), _n("b"), _n("c")], NEW),
    ("second-waits", "b", POOL, [_n("a", desired=NEW, state="Working"), _n("b"), _n("c")], OLD),
    ("updating-node-keeps-target", "a", POOL, [_n("a", desired=NEW, state="Working"), _n("b")], NEW),
    ("done-node-frees-slot", "b", POOL, [_n("a", NEW, NEW), _n("b"), _n("c")], NEW),
    ("degraded-blocks", "b", POOL, [_n("a", OLD, NEW, "Degraded"), _n("b")], OLD),
    ("degraded-at-current-blocks", "b", POOL, [_n("a", OLD, OLD, "Degraded"), _n("b")], OLD),
    ("handed-out-not-yet-working-counts", "b", POOL, [_n("a", OLD, NEW, "Done"), _n("b")], OLD),
    ("max-two", "c", PoolRecord(name="worker", current=NEW, max_unavailable=2),
     [_n("a", OLD, NEW, "Working"), _n("b"), _n("c")], NEW),
    ("max-two-full", "c", PoolRecord(name="worker", current=NEW, max_unavailable=2),
     [_n("a", OLD, NEW, "Working"), _n("b", OLD, NEW, "Working"), _n("c")], OLD),
    ("percent", "d", PoolRecord(name="worker", current=NEW, max_unavailable="50%"),
     [_n("a", OLD, NEW, "Working"), _n("b"), _n("c"), _n("d")], NEW),
    ("paused", "a", PoolRecord(name="worker", current=NEW, paused=True), [_n("a")], OLD),
    ("paused-at-target", "a", PoolRecord(name="worker", current=NEW, paused=True), [_n("a", NEW, NEW)], NEW),
    ("other-pool-ignored", "a", POOL, [_n("x", OLD, "rendered-infra-1", "Working", pool="infra"), _n("a")], NEW),
    ("unknown-node-gets-target", "z", POOL, [_n("a")], NEW),
    ("unknown-node-provisions-with-target", "z", POOL, [_n("a", OLD, NEW, "Working")], NEW),
    ("unknown-node-paused-pool", "z", PoolRecord(name="worker", current=NEW, paused=True), [], NEW),
    ("no-target", "a", PoolRecord(name="worker"), [_n("a")], OLD),
    # a node that has reported but runs no config yet is provisioning, as one never seen: it gets the target
    ("no-config-yet-slots-full", "b", POOL, [_n("a", OLD, NEW, "Working"), _n("b", "", "")], NEW),
    ("no-config-yet-paused-pool", "a", PoolRecord(name="worker", current=NEW, paused=True), [_n("a", "", "")], NEW),
    # one that ran a config and now reports none is not provisioning: the pause still holds it
    ("config-once-paused-pool", "a", PoolRecord(name="worker", current=NEW, paused=True),
     [with_report(_n("a", OLD, OLD), _n("a", "", ""))], None),
]


@pytest.mark.parametrize("node,pool,statuses,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_desired_for(node: str, pool: PoolRecord, statuses: list[NodeStatus], expected: str | None) -> None:
    assert desired_for(node, pool, statuses) == expected


# MCO pkg/controller/node/node_controller.go syncMachineConfigPool: a paused pool only has its status synced
# (syncStatusOnly); no node's desiredConfig annotation is set or taken back, so a node already targeted goes on.
PAUSED = PoolRecord(name="worker", current=NEW, paused=True)
PAUSED_CASES = [
    ("handed-not-started-keeps-target", "a", [_n("a", OLD, NEW, "Done"), _n("b")], NEW),
    ("updating-keeps-target", "a", [_n("a", OLD, NEW, "Working"), _n("b")], NEW),
    ("failing-on-target-keeps-target", "a", [_n("a", OLD, NEW, "Degraded"), _n("b")], NEW),
    ("waiting-node-gets-nothing-new", "b", [_n("a", OLD, NEW, "Working"), _n("b")], OLD),
    ("waiting-node-with-free-slots", "b", [_n("a"), _n("b")], OLD),
    ("moving-to-an-older-target-not-moved-on", "a", [_n("a", OLD, "rendered-worker-mid", "Working")], OLD),
]


@pytest.mark.parametrize("node,statuses,expected", [c[1:] for c in PAUSED_CASES], ids=[c[0] for c in PAUSED_CASES])
def test_paused_pool_hands_out_nothing_new_and_takes_back_nothing(node: str, statuses: list[NodeStatus],
                                                                  expected: str) -> None:
    assert desired_for(node, PAUSED, statuses) == expected
    assert desired_for(node, PAUSED, NodeStatuses(statuses)) == expected


MOVES = [  # (id, node, pool): a node moving between pools, or one reporting in another pool than it asks for
    ("node-from-other-pool-counts-as-new-member", "a", PoolRecord(name="worker", current=NEW, max_unavailable="50%"),
     [_n("a", OLD, "rendered-infra-1", "Working", pool="infra"), _n("b", OLD, NEW, "Working"), _n("c"), _n("d")],
     NEW),
    ("node-from-other-pool-waits-for-a-slot", "a", PoolRecord(name="worker", current=NEW, max_unavailable="50%"),
     [_n("a", OLD, "rendered-infra-1", "Working", pool="infra"), _n("b", OLD, NEW, "Working"), _n("c")], OLD),
    ("other-pool-full-does-not-block", "a", POOL,
     [_n("a", OLD, OLD), _n("x", "rendered-infra-0", "rendered-infra-1", "Working", pool="infra")], NEW),
]


@pytest.mark.parametrize("node,pool,statuses,expected", [c[1:] for c in CASES + MOVES],
                         ids=[c[0] for c in CASES + MOVES])
def test_desired_for_on_kept_counts(node: str, pool: PoolRecord, statuses: list[NodeStatus],
                                    expected: str | None) -> None:
    """The same answers when the statuses arrive one by one into a NodeStatuses (as stores keep them),
    each node first reported elsewhere and then moved, so the counts went up and down on the way."""
    kept = NodeStatuses()
    for s in statuses:
        kept.put(_n(s.name, OLD, NEW, "Degraded", pool="elsewhere"))
    for s in statuses:
        kept.put(s)
    assert desired_for(node, pool, kept) == expected


@pytest.mark.parametrize("seed", [1, 2, 3], ids=["seed-1", "seed-2", "seed-3"])
def test_ordered_list_follows_every_change(seed: int) -> None:
    """`ordered` after any mix of new reports, replaced ones and removals, read between some of them: every
    latest status in name order; a list handed out earlier never changes; no change, the same list."""
    rng = random.Random(seed)
    kept, latest = NodeStatuses(), {}
    handed: list[tuple[list[NodeStatus], list[NodeStatus]]] = []
    for step in range(3000):
        name = f"n{rng.randrange(80):02d}"
        if rng.random() < 0.05:
            kept.remove(name)
            latest.pop(name, None)
        else:
            status = replace(_n(name, rng.choice([OLD, NEW]), NEW, rng.choice(["Done", "Working"])), message=str(step))
            kept.put(status)
            latest[name] = status
        if rng.random() < 0.3:
            listed = kept.ordered()
            assert listed == [latest[n] for n in sorted(latest)]
            assert all(a is b for a, b in zip(listed, (latest[n] for n in sorted(latest)), strict=True))
            assert kept.ordered() is listed
            handed.append((listed, list(listed)))
    assert all(listed == copy for listed, copy in handed)


@pytest.mark.parametrize("seed", [1, 2, 3], ids=["seed-1", "seed-2", "seed-3"])
def test_counts_follow_every_change(seed: int) -> None:
    """After random puts and removals, each pool's counts equal a count from scratch over the statuses."""
    rng = random.Random(seed)
    kept = NodeStatuses()
    for _ in range(2000):
        name = f"n{rng.randrange(60)}"
        if rng.random() < 0.1:
            kept.remove(name)
        else:
            kept.put(_n(name, rng.choice([OLD, NEW]), rng.choice([OLD, NEW, ""]),
                        rng.choice(["Done", "Working", "Degraded"]), pool=rng.choice(["worker", "infra"])))
    statuses = list(kept)
    assert [s.name for s in statuses] == sorted(s.name for s in statuses)
    assert all(kept.get(s.name) is s for s in statuses)  # each the latest status of its node
    for pool in ("worker", "infra", "none"):
        members = [s for s in statuses if s.pool == pool]
        assert kept.counts(pool) == PoolCounts(len(members), sum(1 for s in members if is_unavailable(s)))
