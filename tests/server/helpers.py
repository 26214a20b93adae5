"""Hand-made rendered configs and a started app over a MemoryStore, for the server tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fleet.rendered import Condition, PoolRecord, RenderedConfig
from fleet.store import Store

ACCEPT_33 = "application/vnd.coreos.ignition+json;version=3.3.0, */*;q=0.1"  # Ignition 2.14's exact header
ACCEPT_36 = "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1"


def ignition_config(version: str = "3.4.0", *, files: int = 1, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A small valid config with `files` files and one unit."""
    config: dict[str, Any] = {
        "ignition": {"version": version},
        "storage": {"files": [{"path": f"/etc/demo/file{i}.conf", "mode": 420, "overwrite": True,
                               "contents": {"source": f"data:,content%20{i}"}} for i in range(files)]},
        "systemd": {"units": [{"name": "demo.service", "enabled": True,
                               "contents": "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"}]},
    }
    for key, value in (extra or {}).items():
        config[key] = value
    return config



SOURCES = ("00-base",)  # what the rendered configs of the server tests were merged from


def publish(store: Store, rendered: RenderedConfig, *, render_degraded: str = "", **record: Any) -> PoolRecord:
    """Store a rendered config and make it its pool's target (what render_cluster does)."""
    store.put_rendered(rendered)
    conditions = (Condition("RenderDegraded", "True", "RenderFailed", render_degraded),) if render_degraded else (
        Condition("RenderDegraded", "False"),)
    pool = PoolRecord(name=rendered.pool, current=rendered.name, sources=rendered.sources,
                      conditions=conditions, **record)
    store.put_pool(pool)
    return pool
