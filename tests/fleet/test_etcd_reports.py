"""fleet/etcd_reports.py on a real 3-member cluster: records written in one group keep every history entry when
another write lands meanwhile, two records of one node in a group both land in turn, and a group that keeps losing
fails each record with its own error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fleet.etcd_reports import ReportGroups
from fleet.etcd_store import EtcdStore
from fleet.node_status import NodeStatus, with_report
from fleet.store import StoreError
from tests.etcd_cluster import EtcdCluster
from tests.fleet.stores import etcd_store, run_group


@pytest.fixture
def etcd(etcd_cluster: EtcdCluster) -> Iterator[EtcdStore]:
    with etcd_store(etcd_cluster) as opened:
        yield opened


def _report(name: str, state: str, message: str = "", at: str = "2026-01-01T00:00:00Z") -> NodeStatus:
    return NodeStatus(name, "worker", "rendered-worker-old", "rendered-worker-new", state, message, at)


def _seen(etcd: EtcdStore, name: str) -> tuple[NodeStatus | None, int]:
    _, kvs = etcd._range(etcd.key("state", "nodes", name))
    return etcd._found_node([(kv.value, kv) for kv in kvs], name)


_Item = tuple[NodeStatus, NodeStatus | None, int | None]


def _item(etcd: EtcdStore, report: NodeStatus) -> _Item:
    """A report built on the node's record as stored now, with that record's revision (as `item` does)."""
    known, seen = _seen(etcd, report.name)
    return with_report(known, report), known, seen


def _states(etcd: EtcdStore, name: str) -> list[str]:
    return [t.message or t.state for t in etcd.get_node_status(name).transitions()]


def test_a_record_that_moved_meanwhile_is_built_again_and_the_group_lands(etcd: EtcdStore) -> None:
    for name in ("node-a", "node-b"):
        etcd.put_node_status(with_report(None, _report(name, "Done", "registered")))
    items = [_item(etcd, _report("node-a", "Working")), _item(etcd, _report("node-b", "Working"))]
    etcd.put_node_status(with_report(etcd.get_node_status("node-b"), _report("node-b", "Done", "rebooted")))
    a, b = run_group(etcd, ReportGroups(etcd, attempts=5), items)
    assert (a.outcome.result(), b.outcome.result()) == (None, None)
    assert _states(etcd, "node-a") == ["Working", "registered"]
    assert _states(etcd, "node-b") == ["Working", "rebooted", "registered"]  # the one written meanwhile is kept


def test_two_records_of_one_node_in_a_group_both_land_in_turn(etcd: EtcdStore) -> None:
    etcd.put_node_status(with_report(None, _report("node-a", "Done", "registered")))
    items = [_item(etcd, _report("node-a", "Working")),
             _item(etcd, _report("node-a", "Done", "updated", at="2026-01-01T00:00:09Z"))]
    first, second = run_group(etcd, ReportGroups(etcd, attempts=5), items)
    assert (first.outcome.result(), second.outcome.result()) == (None, None)
    assert _states(etcd, "node-a") == ["updated", "Working", "registered"]


def test_a_group_that_keeps_losing_fails_each_record_with_its_own_error(etcd: EtcdStore) -> None:
    for name in ("node-a", "node-b"):
        etcd.put_node_status(with_report(None, _report(name, "Done", "registered")))
    items = [_item(etcd, _report(name, "Working")) for name in ("node-a", "node-b")]
    for name in ("node-a", "node-b"):
        etcd.put_node_status(with_report(etcd.get_node_status(name), _report(name, "Done", "again")))
    members = run_group(etcd, ReportGroups(etcd, attempts=1), items)
    errors = [m.outcome.exception() for m in members]
    assert all(isinstance(e, StoreError) for e in errors) and errors[0] is not errors[1]
    assert [e.path for e in errors if isinstance(e, StoreError)] == ["nodes/node-a", "nodes/node-b"]
    assert _states(etcd, "node-a") == ["again", "registered"]  # nothing of the failed group was written


def test_a_group_over_many_pools_stays_within_etcds_operations_per_transaction(etcd: EtcdStore) -> None:
    """Each record that newly counts against its pool's maxUnavailable also moves its pool's fence: a group of 100
    such records over 40 pools needs 140 puts, over etcd's 128 per transaction, so it is written in two."""
    reports = [NodeStatus(f"node-{i}", f"pool-{i % 40}", "rendered-old", "rendered-new", "Working", "", "2026-01-01T00:00:00Z")
               for i in range(100)]
    members = run_group(etcd, ReportGroups(etcd, attempts=5), [_item(etcd, report) for report in reports])
    assert [m.outcome.result() for m in members] == [None] * 100
    assert {etcd.get_node_status(r.name).state for r in reports} == {"Working"}
