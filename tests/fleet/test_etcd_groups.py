"""fleet/etcd_groups.py: requests made at once on the loop are each run exactly once, in groups no larger than the
size, with no more groups in flight than the leaders allowed, and a failed group answers each member with its own
error; on a real cluster, concurrent reports of many nodes from many threads through the store's report groups
all land with their histories."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from fleet.etcd_groups import Groups, Member
from fleet.etcd_store import EtcdStore
from fleet.node_status import NodeStatus, with_report
from fleet.store import NotFound, StoreError
from tests.etcd_cluster import EtcdCluster
from tests.fleet.stores import etcd_store


class _Doubling(Groups[int, int]):
    """Answers each request with twice its number, counting groups in flight (a round trip is a short sleep);
    a group holding `fail` fails whole."""

    def __init__(self, size: int, leaders: int, fail: int = -1) -> None:
        super().__init__(size, leaders)
        self.runs: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.fail = fail

    async def _run(self, group: list[Member[int, int]]) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        self.runs.extend(m.item for m in group)
        await asyncio.sleep(0.002)
        self.in_flight -= 1
        if any(m.item == self.fail for m in group):
            raise StoreError("nodes", "the transaction failed")
        for member in group:
            member.finish(member.item * 2)


async def _submit_all(groups: _Doubling, items: range) -> list[int | BaseException | None]:
    answers = await asyncio.gather(*(groups.submit(i) for i in items), return_exceptions=True)
    await asyncio.gather(*groups._leading)  # the leaders stand down once the queue is empty
    return answers


@pytest.mark.parametrize("leaders", [1, 4])
def test_every_request_runs_once_within_the_size_and_the_leaders(leaders: int) -> None:
    groups = _Doubling(size=7, leaders=leaders)
    answers = asyncio.run(_submit_all(groups, range(2000)))
    assert answers == [2 * i for i in range(2000)]
    assert sorted(groups.runs) == list(range(2000))  # each once
    assert 1 <= groups.most_in_flight <= leaders
    assert not groups._leading and not groups._queue and groups._running == 0


class _Chained(_Doubling):
    """Queues one more request at the end of its first group: its submit runs right after the leader's last look
    found the queue empty, before the loop reaps the finished leader's task."""

    def __init__(self) -> None:
        super().__init__(size=7, leaders=1)
        self.next: asyncio.Task[int | None] | None = None

    async def _run(self, group: list[Member[int, int]]) -> None:
        await super()._run(group)
        if self.next is None:
            self.next = asyncio.ensure_future(self.submit(99))


def test_a_request_queued_as_the_last_leader_finds_the_queue_empty_gets_a_leader() -> None:
    async def main() -> list[int | None]:
        groups = _Chained()
        first = await groups.submit(1)
        assert groups.next is not None
        return [first, await asyncio.wait_for(groups.next, 5)]  # not left waiting on the finished leader

    assert asyncio.run(main()) == [2, 198]


@pytest.fixture
def etcd(etcd_cluster: EtcdCluster) -> Iterator[EtcdStore]:
    with etcd_store(etcd_cluster) as opened:
        yield opened


def test_concurrent_reports_of_many_nodes_all_land_with_their_histories(etcd: EtcdStore) -> None:
    names = [f"node-{i:03d}" for i in range(120)]

    def report(name: str, state: str, message: str) -> None:
        try:
            known: NodeStatus | None = etcd.get_node_status(name)
        except NotFound:  # its first report
            known = None
        etcd.put_node_status(with_report(known, NodeStatus(name, "worker", "rendered-worker-old",
                                                           "rendered-worker-old", state, message)))

    with ThreadPoolExecutor(max_workers=48) as pool:
        list(pool.map(lambda n: report(n, "Done", "registered"), names))
        list(pool.map(lambda n: report(n, "Working", "updating"), names))
    for name in names:
        assert [t.message for t in etcd.get_node_status(name).transitions()] == ["updating", "registered"]


def test_a_cancelled_leader_answers_every_queued_request() -> None:
    """The loop stopping cancels a leader mid-group: its group and every request queued behind it are answered
    (with a StoreError each), none is left waiting for a leader that will not come."""
    async def main() -> list[BaseException | None]:
        groups = _Doubling(size=2, leaders=1)
        futures = [groups.enqueue(i) for i in range(7)]
        await asyncio.sleep(0)  # the leader takes its first group and waits on its round trip
        for task in list(groups._leading):
            task.cancel()
        await asyncio.gather(*groups._leading, return_exceptions=True)
        return [f.exception() if f.done() else None for f in futures]

    errors = asyncio.run(main())
    assert all(isinstance(e, StoreError) for e in errors), errors
