"""Fixtures of the fleet tests: a real etcd cluster for the etcd store (tests/etcd_cluster.py)."""

from tests.etcd_cluster import etcd_cluster, own_etcd_cluster  # noqa: F401 - pytest fixtures
