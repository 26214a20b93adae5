"""fleet/presence_digest.py through every store: each server process's digest of the nodes it heard from, merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet import presence_digest
from fleet.directory_store import STALE_PRESENCE, DirectoryStore
from fleet.store import Store, StoreError

NOW = 1_800_000_000.0


def test_digests_merge_latest_first_and_run_out(store: Store) -> None:
    assert store.read_presence(NOW) == {}
    store.publish_presence("replica-a", {"n1": NOW - 30, "n2": NOW - 5}, NOW + 15)
    store.publish_presence("replica-b", {"n1": NOW - 2, "n3": NOW - 100}, NOW + 15)
    assert store.read_presence(NOW) == {"n1": NOW - 2, "n2": NOW - 5, "n3": NOW - 100}
    store.publish_presence("replica-b", {"n4": NOW}, NOW + 15)  # replaces b's last digest
    assert store.read_presence(NOW) == {"n1": NOW - 30, "n2": NOW - 5, "n4": NOW}
    assert store.read_presence(NOW + 16) == {}  # both ran out: their processes stopped publishing


def test_owner_is_a_name(store: Store) -> None:
    with pytest.raises(StoreError, match="presence/"):
        store.publish_presence("../pools/worker", {}, NOW)


def test_directory_drops_what_is_not_a_digest_and_removes_long_gone_ones(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "store")
    store.publish_presence("alive", {"n1": NOW}, NOW + 15)
    store.publish_presence("gone", {"n2": NOW}, NOW - STALE_PRESENCE - 1)
    (tmp_path / "store/presence/junk.json").write_bytes(b"{not json")
    (tmp_path / "store/presence/shape.json").write_bytes(b'{"nodes": []}')
    assert store.read_presence(NOW) == {"n1": NOW}
    assert sorted(p.name for p in (tmp_path / "store/presence").iterdir()) == ["alive.json", "junk.json", "shape.json"]


@pytest.mark.parametrize("blob", [b"", b"[]", b'{"until": "soon", "nodes": {}}', b'{"until": 1, "nodes": 3}',
                                  b"\xff\xfe"])
def test_what_is_not_a_digest_counts_nothing(blob: bytes) -> None:
    assert presence_digest.until_of(blob) is None
    assert presence_digest.merge([blob, presence_digest.encode({"n1": NOW}, NOW + 1)], NOW) == {"n1": NOW}
