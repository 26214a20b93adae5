"""Stores for the tests: every kind of store, an etcd store on a key prefix of its own, and a small rendered
config."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from fleet.directory_store import DirectoryStore
from fleet.etcd_groups import Groups, Member
from fleet.etcd_store import EtcdStore
from fleet.store import MemoryStore, Store
from fleet.store_open import open_store
from tests.etcd_cluster import EtcdCluster

_prefixes = itertools.count()
I = TypeVar("I")  # noqa: E741
R = TypeVar("R")



def open_etcd_store(cluster: EtcdCluster) -> EtcdStore:
    """A store on a key prefix no other test uses."""
    store = open_store(cluster.url(f"test-{next(_prefixes)}"))
    assert isinstance(store, EtcdStore)
    return store


@contextmanager
def etcd_store(cluster: EtcdCluster) -> Iterator[EtcdStore]:
    """`open_etcd_store`, its connection closed afterwards."""
    store = open_etcd_store(cluster)
    try:
        yield store
    finally:
        store.conn.close()


def run_group(etcd: EtcdStore, groups: Groups[I, R], items: list[I]) -> list[Member[I, R]]:
    """One group of `items` run on the store's loop, as a leader of `groups` runs it; the members, answered."""
    async def run() -> list[Member[I, R]]:
        loop = asyncio.get_running_loop()
        members: list[Member[I, R]] = [Member(item, loop.create_future()) for item in items]
        await groups._run(members)
        return members

    return etcd.conn.call(run)


STORE_KINDS = ["memory", "directory", "etcd"]


@contextmanager
def store_of_kind(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh store of `kind` (one of STORE_KINDS; etcd: the session's real 3-member cluster)."""
    if kind == "memory":
        yield MemoryStore()
    elif kind == "directory":
        yield DirectoryStore(tmp_path / "store")
    else:
        with etcd_store(request.getfixturevalue("etcd_cluster")) as etcd:
            yield etcd
