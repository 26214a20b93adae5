"""The directory store's change journal (fleet/node_journal.py): other instances and processes on the same
directory see every write, a reader reads only what changed, compaction, writers SIGKILLed at each point of
a write, and corrupt or hostile journal content."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fleet import node_journal
from fleet.atomic import write_atomic
from fleet.directory_store import DirectoryStore
from fleet.node_journal import HEADER_LEN, JOURNAL
from fleet.node_status import NodeStatus
from fleet.rollout import NodeStatuses
from fleet.store import StoreError

SPAWN = multiprocessing.get_context("spawn")


def _report(name: str, message: str, pool: str = "worker") -> NodeStatus:
    return NodeStatus(name, pool, "rendered-worker-a", "rendered-worker-a", "Done", message)


def _report_bytes(name: str, message: str) -> bytes:
    """A record as DirectoryStore writes it (for writes by hand, or a writer's part of a write)."""
    return json.dumps(_report(name, message).to_dict(), sort_keys=True, indent=2).encode()


def _seen(store: DirectoryStore) -> dict[str, str]:
    return {s.name: s.message for s in store.list_node_status()}


def _fresh(root: Path) -> dict[str, str]:
    """What a new instance finds (its first listing reads every record)."""
    return _seen(DirectoryStore(root))


def _claim_as(status: NodeStatus) -> Callable[[Path, DirectoryStore], object]:
    return lambda root, w: w.claim_node(status.name, lambda statuses: status)


def _forget_journal(root: Path) -> None:
    (root / JOURNAL).unlink()


@pytest.mark.parametrize(("change", "expected"), [
    (lambda root, w: w.put_node_status(_report("node-a", "bbbb")), {"node-a": "bbbb", "node-b": "b0"}),
    (lambda root, w: w.put_node_status(_report("node-c", "c0")), {"node-a": "aaaa", "node-b": "b0", "node-c": "c0"}),
    (_claim_as(_report("node-b", "b1")), {"node-a": "aaaa", "node-b": "b1"}),
    (lambda root, w: None, {"node-a": "aaaa", "node-b": "b0"}),
    # Not written through a store: seen once the journal is removed (every reader then lists nodes/ once).
    (lambda root, w: ((root / "nodes/node-b.json").unlink(), _forget_journal(root)), {"node-a": "aaaa"}),
    (lambda root, w: (write_atomic(root / "nodes/node-a.json", _report_bytes("node-a", "by hand")),
                      _forget_journal(root)), {"node-a": "by hand", "node-b": "b0"}),
], ids=["rewritten-same-size", "added", "claimed", "unchanged", "removed-by-hand", "edited-by-hand"])
def test_another_instance_sees_every_write(
        tmp_path: Path, change: Callable[[Path, DirectoryStore], object], expected: dict[str, str]) -> None:
    reader, writer = DirectoryStore(tmp_path), DirectoryStore(tmp_path)  # each follows the journal on its own
    writer.put_node_status(_report("node-a", "aaaa"))
    writer.put_node_status(_report("node-b", "b0"))
    reader.list_node_status()
    change(tmp_path, writer)
    assert _seen(reader) == expected == _fresh(tmp_path)


def test_a_reader_reads_only_the_records_named_since_its_last_call(tmp_path: Path) -> None:
    reader, writer = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    for i in range(50):
        writer.put_node_status(_report(f"node-{i:02d}", "0"))
    before = {s.name: s for s in reader.list_node_status()}
    # A record changed behind the stores' back (no journal line) is not read: proof nothing else is read.
    (tmp_path / "nodes/node-07.json").write_bytes(b"{not json")
    writer.put_node_status(_report("node-03", "1"))
    after = {s.name: s for s in reader.list_node_status()}
    assert after["node-03"].message == "1"
    assert all(after[n] is before[n] for n in before if n != "node-03")  # the same objects: not parsed again
    assert reader._index.listings == 1
    with pytest.raises(StoreError, match="nodes/node-07: corrupt JSON"):  # a first listing reads it
        _fresh(tmp_path)


def test_rapid_same_size_rewrites_are_all_seen(tmp_path: Path) -> None:
    reader, writer = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    for i in range(300):  # faster than any timestamp granularity, the size never changes
        writer.put_node_status(_report("node-a", f"{i:04d}"))
        assert reader.list_node_status()[0].message == f"{i:04d}"


def test_a_corrupt_record_named_in_the_journal_is_reported_until_rewritten(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.put_node_status(_report("node-a", "x"))
    store.list_node_status()
    with store._index.journal.writing("node-a"):  # what a writer does around its rename
        (tmp_path / "nodes/node-a.json").write_bytes(b"{not json")
    for _ in range(2):
        with pytest.raises(StoreError, match="nodes/node-a: corrupt JSON"):
            store.list_node_status()
    store.put_node_status(_report("node-a", "fixed"))
    assert _seen(store) == {"node-a": "fixed"}


def _append(root: Path, data: bytes) -> None:
    with open(root / JOURNAL, "ab") as fh:
        fh.write(data)


def _rewrite(root: Path, edit: Callable[[bytes], bytes]) -> None:
    path = root / JOURNAL
    path.write_bytes(edit(path.read_bytes()))


@pytest.mark.parametrize("damage", [
    lambda root: _append(root, b"garbage\n"),
    lambda root: _append(root, b"+../../etc/passwd\n?nodes/node-a\n"),
    lambda root: _append(root, b"+" + b"a" * 5000 + b"\n"),
    lambda root: _append(root, b"+node-\xff\xfe\n"),
    lambda root: _append(root, b"\x00" * 4096),
    lambda root: _append(root, b"?node-"),  # a writer killed in mid-line: the next line is appended to it
    lambda root: _append(root, b"+node-zz\n+NODE-A\n"),  # a valid name with no record, then an invalid one
    lambda root: _rewrite(root, lambda data: b"not a journal header at all\n" + data[HEADER_LEN:]),
    lambda root: _rewrite(root, lambda data: data[:HEADER_LEN - 1] + b"X" + data[HEADER_LEN:]),
    lambda root: _rewrite(root, lambda data: data[:HEADER_LEN + 3]),  # truncated
    lambda root: _rewrite(root, lambda data: b""),
    lambda root: _forget_journal(root),
], ids=["garbage", "path-traversal", "long-line", "not-ascii", "zeros", "partial-line", "unknown-then-invalid",
        "bad-header", "bad-header-token", "truncated", "emptied", "removed"])
def test_corrupt_journal_content_never_fails_a_read_nor_hides_a_write(
        tmp_path: Path, damage: Callable[[Path], object]) -> None:
    reader, writer = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    writer.put_node_status(_report("node-a", "a0"))
    writer.put_node_status(_report("node-b", "b0"))
    reader.list_node_status()
    damage(tmp_path)
    writer.put_node_status(_report("node-a", "a1"))
    writer.put_node_status(_report("node-c", "c0"))
    expected = {"node-a": "a1", "node-b": "b0", "node-c": "c0"}
    assert _seen(reader) == expected == _fresh(tmp_path)
    writer.put_node_status(_report("node-b", "b1"))  # and the reader follows the journal again afterwards
    listings = reader._index.listings
    assert _seen(reader) == {**expected, "node-b": "b1"}
    assert reader._index.listings <= listings + 1  # at most one more listing (a bad header is replaced)
    writer.put_node_status(_report("node-b", "b2"))
    assert _seen(reader)["node-b"] == "b2" and reader._index.listings <= listings + 1


def test_a_line_read_while_it_is_written_is_taken_once_complete(tmp_path: Path) -> None:
    reader, writer = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    writer.put_node_status(_report("node-a", "a0"))
    reader.list_node_status()
    write_atomic(tmp_path / "nodes/node-a.json", _report_bytes("node-a", "a1"))  # a writer's rename, then
    _append(tmp_path, b"+node")  # the first part of its line (a write across a page boundary)
    assert _seen(reader) == {"node-a": "a0"}
    _append(tmp_path, b"-a\n")
    assert _seen(reader) == {"node-a": "a1"}
    assert reader._index.listings == 1  # followed, not listed again


def test_compaction_keeps_the_journal_bounded_and_readers_current(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_journal, "COMPACT_AT", 400)
    reader, writer = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    reader.list_node_status()
    generations = set()
    for i in range(200):
        writer.put_node_status(_report(f"node-{i % 7}", str(i)))
        assert (tmp_path / JOURNAL).stat().st_size <= 400 + 2 * 9  # past the bound by at most one write's lines
        generations.add((tmp_path / JOURNAL).read_bytes()[:HEADER_LEN])
        if i % 13 == 0:
            assert _seen(reader) == _fresh(tmp_path)
    assert len(generations) > 5
    assert _seen(reader) == {f"node-{i % 7}": str(i) for i in range(193, 200)} == _fresh(tmp_path)


def test_compaction_waits_for_writes_in_flight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write between its `?` and its `+` line holds compaction off; the first write to end after it compacts."""
    monkeypatch.setattr(node_journal, "COMPACT_AT", 200)
    writer, slow, reader = DirectoryStore(tmp_path), DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    journal = tmp_path / JOURNAL
    with slow._index.journal.writing("node-slow"):
        for i in range(20):
            writer.put_node_status(_report("node-a", str(i)))
        assert journal.stat().st_size > 200 + 20 * 8  # never replaced while the slow write is in flight
        assert journal.read_bytes()[HEADER_LEN:].startswith(b"?node-slow\n")
        assert _seen(reader) == {"node-a": "19"}
        write_atomic(tmp_path / "nodes/node-slow.json", _report_bytes("node-slow", "late"))
    assert journal.stat().st_size == HEADER_LEN  # the slow write's end compacted
    assert _seen(reader) == {"node-a": "19", "node-slow": "late"} == _fresh(tmp_path)


def _killed_writer(root: str, point: str, at_intent: Any, go: Any) -> None:
    """Store node-a's new report and SIGKILL this process at `point` of the write (the seam: the rename)."""
    import fleet.directory_store as directory_store

    real = directory_store.write_atomic

    def write(path: Path, data: bytes, **kwargs: Any) -> None:
        at_intent.set()  # the `?` line is in the journal
        go.wait()
        if point == "after-rename":
            real(path, data, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    directory_store.write_atomic = write  # type: ignore[assignment]
    DirectoryStore(root).put_node_status(_report("node-a", "new"))


@pytest.mark.parametrize(("point", "reader_looks_at_intent", "expected"), [
    ("before-rename", False, "old"),
    ("before-rename", True, "old"),
    ("after-rename", False, "new"),
    ("after-rename", True, "new"),
], ids=["before-rename", "before-rename-read-between", "after-rename", "after-rename-read-between"])
def test_a_writer_killed_in_mid_write_leaves_no_reader_stale(
        tmp_path: Path, point: str, reader_looks_at_intent: bool, expected: str) -> None:
    early, late = DirectoryStore(tmp_path), DirectoryStore(tmp_path)  # following before / joining after
    early.put_node_status(_report("node-a", "old"))
    early.list_node_status()
    at_intent, go = SPAWN.Event(), SPAWN.Event()
    writer = SPAWN.Process(target=_killed_writer, args=(str(tmp_path), point, at_intent, go))
    writer.start()
    try:
        assert at_intent.wait(60)
        if reader_looks_at_intent:
            assert _seen(early) == {"node-a": "old"}  # the record has not changed yet
            late.list_node_status()
        go.set()
        writer.join(60)
        assert writer.exitcode == -signal.SIGKILL
    finally:
        if writer.is_alive():
            writer.kill()
    journal = (tmp_path / JOURNAL).read_bytes()
    assert journal.endswith(b"?node-a\n")  # its `+` line was never written
    for reader in (early, late, DirectoryStore(tmp_path)):
        assert _seen(reader) == {"node-a": expected}
    # The next writes are followed as usual, and the killed write's intent costs one stat per refresh.
    early.put_node_status(_report("node-b", "b"))
    assert _seen(late) == {"node-a": expected, "node-b": "b"} and late._index.listings == 1


def test_pool_counts_follow_the_journal(tmp_path: Path) -> None:
    """The counts `claim_node` decides on are kept current incrementally, as a full count would give."""
    reader, writer = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    steps = [
        NodeStatus("node-a", "worker", "r-old", "r-new", "Working"),
        NodeStatus("node-b", "worker", "r-old", "r-old", "Done"),
        NodeStatus("node-c", "infra", "r-old", "r-old", "Degraded"),
        NodeStatus("node-a", "worker", "r-new", "r-new", "Done"),
        NodeStatus("node-b", "infra", "r-old", "r-new", "Done"),
        NodeStatus("node-c", "infra", "r-old", "r-old", "Done"),
    ]
    seen: list[tuple[str, int, int]] = []

    def decide(statuses: NodeStatuses) -> None:
        seen.extend((pool, statuses.counts(pool).members, statuses.counts(pool).unavailable)
                    for pool in ("worker", "infra"))

    for step in steps:
        writer.put_node_status(step)
        seen.clear()
        reader.claim_node("node-z", decide)
        full = NodeStatuses(DirectoryStore(tmp_path).list_node_status())
        assert seen == [(pool, full.counts(pool).members, full.counts(pool).unavailable)
                        for pool in ("worker", "infra")], step
