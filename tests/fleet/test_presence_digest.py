"""fleet/presence_digest.py through every store: each server process's digest of the waiting nodes it heard from,
kept alive between writes, the live ones united."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fleet import presence_digest
from fleet.directory_store import STALE_PRESENCE, DirectoryStore
from fleet.etcd_store import EtcdStore
from fleet.store import Store, StoreError


def test_digests_unite_and_a_renewal_keeps_the_names(store: Store) -> None:
    assert store.read_presence() == frozenset()
    store.publish_presence("replica-a", {"n1", "n2"}, 15)
    store.publish_presence("replica-b", {"n1", "n3"}, 15)
    assert store.read_presence() == {"n1", "n2", "n3"}
    store.publish_presence("replica-b", None, 15)  # kept alive: the names stay as they were
    assert store.read_presence() == {"n1", "n2", "n3"}
    store.publish_presence("replica-b", {"n4"}, 15)  # replaced
    assert store.read_presence() == {"n1", "n2", "n4"}
    store.publish_presence("replica-a", set(), 15)
    assert store.read_presence() == {"n4"}


def test_owner_is_a_name(store: Store) -> None:
    with pytest.raises(StoreError, match="presence/"):
        store.publish_presence("../pools/worker", set(), 15)


def _age(path: Path, seconds: float) -> None:
    """The digest last touched `seconds` ago: its process stopped renewing it then."""
    then = path.stat().st_mtime - seconds
    os.utime(path, (then, then))


def test_directory_digest_counts_while_renewed_and_goes_when_long_dead(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "store")
    digests = tmp_path / "store/presence"
    store.publish_presence("alive", {"n1"}, 15)
    store.publish_presence("stalled", {"n2"}, 15)
    store.publish_presence("dead", {"n3"}, 15)
    written = (digests / "alive.json").read_bytes()
    _age(digests / "alive.json", 60)
    store.publish_presence("alive", None, 15)  # renewed: touched, not written again
    assert (digests / "alive.json").read_bytes() == written
    _age(digests / "stalled.json", 16)
    _age(digests / "dead.json", 15 + STALE_PRESENCE + 1)
    (digests / "junk.json").write_bytes(b"{not json")
    _age(digests / "junk.json", STALE_PRESENCE + 1)
    assert store.read_presence() == {"n1"}
    assert sorted(p.name for p in digests.iterdir()) == ["alive.json", "stalled.json"]
    (digests / "alive.json").unlink()  # removed by a reader while its process stalled
    store.publish_presence("alive", None, 15)  # the renewal writes it again
    assert store.read_presence() == {"n1"}


@pytest.mark.parametrize("blob", [b"", b"[]", b'{"ttl": "soon", "nodes": []}', b'{"ttl": 1, "nodes": 3}',
                                  b'{"ttl": true, "nodes": []}', b"\xff\xfe", b"[" * 100_000])
def test_what_is_not_a_digest_is_none(blob: bytes) -> None:
    assert presence_digest.decode(blob) is None


def test_names_only_strings() -> None:
    assert presence_digest.decode(b'{"ttl": 15, "nodes": ["n1", 2, null]}') == (15.0, frozenset({"n1"}))


def test_etcd_digest_whose_lease_ran_out_is_put_again_on_the_next_renewal(store: Store) -> None:
    if not isinstance(store, EtcdStore):
        pytest.skip("etcd's leases")
    store.publish_presence("replica-a", {"n1"}, 15)
    client, key = store.conn.client, store.key("presence", "replica-a")
    found = store.conn.call(lambda: client.get(key))
    assert found is not None and found.lease
    store.conn.call(lambda: client.revoke_lease(found.lease))  # as if this process stalled past its time to live
    assert store.read_presence() == frozenset()
    store.publish_presence("replica-a", None, 15)
    assert store.read_presence() == {"n1"}
