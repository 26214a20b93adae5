"""Stores for the tests: an etcd store on a key prefix of its own, and a small rendered config."""

from __future__ import annotations

import itertools

from fleet.etcd_client import parse_url
from fleet.etcd_store import EtcdStore
from fleet.rendered import MachineConfigSpec, RenderedConfig
from tests.etcd_cluster import EtcdCluster

_prefixes = itertools.count()


def rendered_config(name: str = "rendered-worker-abc") -> RenderedConfig:
    """A rendered config of pool worker with one kernel argument and one source."""
    return RenderedConfig(name=name, pool="worker",
                          spec=MachineConfigSpec(config={"ignition": {"version": "3.5.0"}}, kernel_arguments=("nosmt",)),
                          sources=("00-worker",))


def open_etcd_store(cluster: EtcdCluster) -> EtcdStore:
    """A store on a key prefix no other test uses."""
    return EtcdStore.open(parse_url(cluster.url(f"test-{next(_prefixes)}")))
