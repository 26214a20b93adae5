"""fleet/etcd_groups.py: requests from many threads at once are each run exactly once, in groups no larger than the
size, with no more groups in flight than the leaders allowed; and, on a real cluster, concurrent reports of many
nodes through the store's report groups all land with their histories."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from fleet.etcd_groups import Groups, Member
from fleet.etcd_store import EtcdStore
from fleet.node_status import NodeStatus, with_report
from fleet.store import NotFound
from tests.etcd_cluster import EtcdCluster
from tests.fleet.stores import etcd_store


class _Doubling(Groups[int, int]):
    """Answers each request with twice its number, counting groups in flight (a round trip is a short sleep)."""

    def __init__(self, size: int, leaders: int) -> None:
        super().__init__(size, leaders)
        self.runs: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self._count = threading.Lock()

    def _run(self, group: list[Member[int, int]]) -> None:
        with self._count:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self.runs.extend(m.item for m in group)
        time.sleep(0.002)
        with self._count:
            self.in_flight -= 1
        for member in group:
            member.finish(member.item * 2)


@pytest.mark.parametrize("leaders", [1, 4])
def test_every_request_runs_once_within_the_size_and_the_leaders(leaders: int) -> None:
    groups = _Doubling(size=7, leaders=leaders)
    with ThreadPoolExecutor(max_workers=32) as pool:
        answers = list(pool.map(groups.submit, range(2000)))
    assert answers == [2 * i for i in range(2000)]
    assert sorted(groups.runs) == list(range(2000))  # each once
    assert 1 <= groups.most_in_flight <= leaders
    assert groups._leading == 0 and not groups._queue  # every leader handed over or stood down


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
