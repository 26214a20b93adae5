"""Fixtures of the fleet tests: a real etcd cluster for the etcd store (tests/etcd_cluster.py), and `store`:
each test that takes it runs against every store (memory, directory, etcd)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.directory_store import DirectoryStore
from fleet.store import MemoryStore, Store
from tests.etcd_cluster import etcd_cluster, own_etcd_cluster  # noqa: F401 - pytest fixtures
from tests.fleet.stores import open_etcd_store


@pytest.fixture(params=["memory", "directory", "etcd"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "directory":
        yield DirectoryStore(tmp_path / "store")
    else:
        etcd = open_etcd_store(request.getfixturevalue("etcd_cluster"))
        try:
            yield etcd
        finally:
            etcd.conn.close()
