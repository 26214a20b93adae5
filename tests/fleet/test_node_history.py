"""A node's record carries its own bounded history of reports (fleet/rendered.py: with_report), kept by every
store, shared by every replica (etcd: a report built on a stale mirror is rebuilt on the record really stored)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from fleet.directory_store import DirectoryStore
from fleet.etcd_client import Connection
from fleet.etcd_mirror import Mirror
from fleet.etcd_store import EtcdStore
from fleet.node_status import HISTORY_LIMIT, HISTORY_MESSAGE, NodeStatus, Transition, with_report
from fleet.store import Store
from tests.etcd_cluster import EtcdCluster
from tests.fleet.stores import open_etcd_store


def _report(i: int, state: str = "Working", message: str = "", current: str = "rendered-w-a") -> NodeStatus:
    return NodeStatus("node-a", "worker", current, "rendered-w-b", state, message or f"step {i}",
                      f"2026-12-03T10:{i // 60:02d}:{i % 60:02d}Z")


def _chain(*reports: NodeStatus) -> NodeStatus:
    record: NodeStatus | None = None
    for report in reports:
        record = with_report(record, report)
    assert record is not None
    return record


@pytest.mark.parametrize(("reports", "entries"), [
    ((_report(0),), [("Working", "step 0", 0)]),
    ((_report(0), _report(1, message="step 0")), [("Working", "step 0", 0)]),
    ((_report(0), _report(1)), [("Working", "step 1", 1), ("Working", "step 0", 0)]),
    ((_report(0), _report(1, state="Done", message="step 0")), [("Done", "step 0", 1), ("Working", "step 0", 0)]),
    ((_report(0), _report(1, current="rendered-w-b", message="step 0")),
     [("Working", "step 0", 1), ("Working", "step 0", 0)]),
    ((_report(0), _report(1), _report(2, message="step 1"), _report(3, message="step 0")),
     [("Working", "step 0", 3), ("Working", "step 1", 1), ("Working", "step 0", 0)]),
], ids=["first", "repeat-keeps-the-first-time", "new-message", "new-state", "new-config", "back-to-an-old-one"])
def test_history_keeps_distinct_reports_newest_first(reports: tuple[NodeStatus, ...],
                                                     entries: list[tuple[str, str, int]]) -> None:
    record = _chain(*reports)
    assert record.reported_at == reports[-1].reported_at  # the record says when the node last reported
    assert [(t.state, t.message, t.reported_at) for t in record.history] == [
        (state, message, _report(i).reported_at) for state, message, i in entries]


def test_history_is_bounded_and_messages_cut() -> None:
    record = _chain(*(_report(i) for i in range(HISTORY_LIMIT + 5)))
    assert len(record.history) == HISTORY_LIMIT
    assert record.history[0].message == f"step {HISTORY_LIMIT + 4}" and record.history[-1].message == "step 5"
    long = with_report(record, _report(99, state="Degraded", message="x" * 5000))
    assert long.message == "x" * 5000  # the record keeps the whole last message (the exact cause)
    assert len(long.history[0].message) == HISTORY_MESSAGE and long.history[0].message.endswith("…")


def test_a_record_from_before_histories_starts_its_own() -> None:
    old = _report(0, state="Degraded", message="disk full")
    assert old.history == () and old.transitions() == (Transition.of(old),)
    record = with_report(old, _report(1, state="Done", message=""))
    assert [t.state for t in record.history] == ["Done", "Degraded"]


def test_building_again_on_the_same_record_changes_nothing() -> None:
    previous = _chain(_report(0), _report(1))
    once = with_report(previous, _report(2))
    assert with_report(previous, once) == once
    assert with_report(previous, replace(once, history=())) == once


@pytest.mark.parametrize(("stored", "history"), [
    ({}, ()),
    ({"history": "nonsense"}, ()),
    ({"history": [1, None, {"state": "Done", "reportedAt": "t"}]}, (Transition("Done", "", "", "", "t"),)),
    ({"history": [{"state": "Done"}] * (HISTORY_LIMIT + 3)}, (Transition("Done", "", "", "", ""),) * HISTORY_LIMIT),
], ids=["none", "not-a-list", "odd-entries-skipped", "over-the-limit"])
def test_stored_records_load_whatever_their_history(stored: dict[str, object],
                                                    history: tuple[Transition, ...]) -> None:
    data = {"name": "node-a", "pool": "worker", "currentConfig": "a", "desiredConfig": "b", "state": "Done",
            **stored}
    assert NodeStatus.from_dict(json.loads(json.dumps(data))).history == history


def test_no_history_no_field() -> None:
    """A record without history is written as before (and a report's echo carries none)."""
    assert "history" not in _report(0).to_dict()
    assert _chain(_report(0)).to_dict()["history"] == [Transition.of(_report(0)).to_dict()]


def test_every_store_keeps_the_history(store: Store) -> None:  # noqa: F811
    record = _chain(*(_report(i) for i in range(3)))
    store.put_node_status(record)
    assert store.get_node_status("node-a") == record
    assert store.list_node_status() == [record]


@pytest.fixture
def stale_replica(etcd_cluster: EtcdCluster) -> Iterator[tuple[EtcdStore, EtcdStore, Mirror]]:
    """A writer, and a replica whose mirror stopped following (it lags every write after this point)."""
    writer = open_etcd_store(etcd_cluster)
    conn = Connection(writer.conn.settings)
    mirror = Mirror(conn)
    try:
        writer.put_node_status(with_report(None, _report(0)))
        mirror.start()
        mirror.stop()
        yield writer, EtcdStore(conn, mirror=mirror), mirror
    finally:
        conn.close()
        writer.conn.close()


def test_a_replica_behind_keeps_the_report_another_replica_stored(
        stale_replica: tuple[EtcdStore, EtcdStore, Mirror]) -> None:
    """Replica A stores report 1; the node's next report reaches replica B before B's mirror saw report 1:
    B's write compares the record's revision, finds report 1, and builds the history on it."""
    writer, replica, _ = stale_replica
    writer.put_node_status(with_report(writer.get_node_status("node-a"), _report(1)))
    stale = replica.get_node_status("node-a")
    assert [t.message for t in stale.history] == ["step 0"]  # B's view: report 1 not seen
    replica.put_node_status(with_report(stale, _report(2, state="Done")))
    stored = writer.get_node_status("node-a")
    assert stored.state == "Done" and [t.message for t in stored.history] == ["step 2", "step 1", "step 0"]


def test_a_claim_on_a_stale_view_waits_for_the_report_it_missed(
        stale_replica: tuple[EtcdStore, EtcdStore, Mirror]) -> None:
    """A hand-out decided on a view that misses the node's newest report is decided again once the view has it."""
    writer, replica, mirror = stale_replica
    writer.put_node_status(with_report(writer.get_node_status("node-a"), _report(1, state="Done")))
    seen: list[str] = []

    def decide(statuses: object) -> NodeStatus | None:
        mine = replica.get_node_status("node-a")
        seen.append(mine.state)
        if len(seen) == 1:  # after the first (refused) attempt, let the mirror catch up
            mirror._tasks = [mirror.conn.spawn(mirror._follow())]
        return with_report(mine, replace(mine, desired_config="rendered-w-c", reported_at="2026-12-03T11:00:00Z"))

    try:
        handed = replica.claim_node("node-a", decide)
    finally:
        mirror.stop()
    assert seen[0] == "Working" and seen[-1] == "Done"
    assert handed is not None and writer.get_node_status("node-a") == handed
    assert [t.message for t in handed.history] == ["step 1", "step 1", "step 0"]
    assert [t.desired_config for t in handed.history] == ["rendered-w-c", "rendered-w-b", "rendered-w-b"]


def test_a_report_built_before_a_relabel_keeps_the_relabel_on_a_directory_store(tmp_path: Path) -> None:
    """The server reads the node's record, `mco nodes label` (another process: another store) changes its labels,
    then the server stores its report: the report is built again on the relabelled record, as on etcd."""
    server, admin = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    server.put_node_status(with_report(None, replace(_report(0), labels={"node-role.kubernetes.io/gpu": ""})))
    known = server.get_node_status("node-a")
    admin.claim_node("node-a", lambda _: replace(admin.get_node_status("node-a"), labels={"x": "1"}))
    server.put_node_status(with_report(known, _report(1, state="Done")))
    stored = admin.get_node_status("node-a")
    assert stored.labels == {"x": "1"} and stored.state == "Done"
    assert [t.message for t in stored.history] == ["step 1", "step 0"]
