"""fleet/etcd_claims.py on a real 3-member cluster: a group's outcomes are final only once its transaction is
written (a "stay" decided behind a hand-out that was not written is decided again), and a group's failure
reaches each waiting claim as its own exception instance."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from fleet.etcd_claims import ClaimGroups
from fleet.etcd_groups import Member, own_copy
from fleet.etcd_store import EtcdStore
from fleet.node_status import NodeStatus
from fleet.rollout import NodeStatuses
from fleet.store import NotLeader, StoreError
from tests.etcd_cluster import EtcdCluster
from tests.fleet.stores import etcd_store, run_group


@pytest.fixture
def etcd(etcd_cluster: EtcdCluster) -> Iterator[EtcdStore]:
    with etcd_store(etcd_cluster) as opened:
        yield opened


Decide = Callable[[NodeStatuses], "NodeStatus | None"]


def _node(name: str, desired: str = "rendered-worker-old", state: str = "Done") -> NodeStatus:
    return NodeStatus(name, "worker", "rendered-worker-old", desired, state, "", "2026-01-01T00:00:00Z")


def test_a_stay_behind_a_hand_out_that_was_not_written_is_decided_again(etcd: EtcdStore) -> None:
    """Group [a, b], one slot. First attempt: a takes the slot, so b is told "stay"; but a's record moves before
    the transaction, which fails. Second attempt: a refuses, so b takes the slot: its first "stay" was not final."""
    for name in ("node-a", "node-b"):
        etcd.put_node_status(_node(name))
    calls = {"node-a": 0, "node-b": 0}

    def decide_a(view: NodeStatuses) -> NodeStatus | None:
        calls["node-a"] += 1
        if calls["node-a"] == 1:
            etcd.put_node_status(replace(_node("node-a"), message="rebooted"))  # written meanwhile elsewhere
            return _node("node-a", desired="rendered-worker-new")
        raise ValueError("node-a is not in this pool any more")

    def decide_b(view: NodeStatuses) -> NodeStatus | None:
        calls["node-b"] += 1
        return None if view.counts("worker").unavailable >= 1 else _node("node-b", desired="rendered-worker-new")

    decides: list[Decide] = [decide_a, decide_b]
    a, b = run_group(etcd, ClaimGroups(etcd, attempts=5), decides)
    assert calls == {"node-a": 2, "node-b": 2}
    with pytest.raises(ValueError, match="not in this pool"):
        a.outcome.result()
    assert b.outcome.result() == _node("node-b", desired="rendered-worker-new")
    assert etcd.get_node_status("node-b") == _node("node-b", desired="rendered-worker-new")


def test_a_group_that_keeps_losing_fails_every_claim_with_its_own_error(etcd: EtcdStore) -> None:
    etcd.put_node_status(_node("node-a"))

    def always_moved(view: NodeStatuses) -> NodeStatus | None:
        etcd.put_node_status(_node("node-a", state="Working"))
        return _node("node-a", desired="rendered-worker-new")

    def refused(view: NodeStatuses) -> NodeStatus | None:
        raise ValueError("node-r belongs to pool infra")

    decides: list[Decide] = [always_moved, lambda view: None, refused]
    claims = run_group(etcd, ClaimGroups(etcd, attempts=2), decides)
    errors = [claim.outcome.exception() for claim in claims]
    assert all(isinstance(e, StoreError) and e.path == "nodes" for e in errors[:2])
    assert errors[0] is not errors[1]
    assert isinstance(errors[2], ValueError)  # a refusal stands: it is not "too many hand-outs"


@pytest.mark.parametrize("failure", [
    NotLeader("controller", "this controller is no longer the leader"),
    StoreError("etcd", "no answer from etcd in time"),
    RuntimeError("a bug"),
], ids=["store-error-subclass", "store-error", "other"])
def test_a_copy_for_each_claim_keeps_what_the_server_answers_by(failure: Exception) -> None:
    copy = own_copy(failure)
    assert copy is not failure and copy.__cause__ is failure
    assert type(copy) is (type(failure) if isinstance(failure, StoreError) else StoreError)
    if isinstance(failure, StoreError):
        assert isinstance(copy, StoreError)  # for mypy
        assert (copy.path, copy.message, str(copy)) == (failure.path, failure.message, str(failure))


def test_a_claim_whose_caller_stopped_waiting_is_not_decided(etcd: EtcdStore) -> None:
    """A replica's handler gives up past the store's deadline (the future is cancelled): the group skips that claim,
    so no hand-out is recorded for a node that was answered 503."""
    etcd.put_node_status(_node("node-a"))
    decided: list[str] = []

    def hand_out(view: NodeStatuses) -> NodeStatus | None:
        decided.append("node-a")
        return _node("node-a", desired="rendered-worker-new")

    async def run() -> bool:
        loop = asyncio.get_running_loop()
        member: Member[Decide, NodeStatus] = Member(hand_out, loop.create_future())
        member.outcome.cancel()
        await ClaimGroups(etcd, attempts=2)._run([member])
        return member.outcome.cancelled()

    assert etcd.conn.call(run)
    assert decided == [] and etcd.get_node_status("node-a") == _node("node-a")
