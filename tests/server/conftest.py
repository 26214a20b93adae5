"""Fixtures of the server tests: a real etcd cluster for the scale-out tests (tests/etcd_cluster.py)."""

from tests.etcd_cluster import etcd_cluster, own_etcd_cluster  # noqa: F401 - pytest fixtures
