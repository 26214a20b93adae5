"""Fixtures of the fleet tests: a real etcd cluster for the etcd store (tests/etcd_cluster.py), and `store`:
each test that takes it runs against every store (memory, directory, etcd)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.store import Store
from tests.etcd_cluster import etcd_cluster, own_etcd_cluster  # noqa: F401 - pytest fixtures
from tests.fleet.stores import STORE_KINDS, store_of_kind


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with store_of_kind(request.param, request, tmp_path) as opened:
        yield opened
