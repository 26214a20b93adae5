"""A bounded history of each node's reports, for the machine page's "reports over time".

The store keeps only a node's last report (fleet/store.py), so the history is kept here, fed through the
store seam: `RecordingStore` wraps the store the API writes through and records every report this process
stores; `observe` records the reports a read finds that no write of this process made (another worker or
replica stored them). Only changes are kept (a report repeating the last one's state, configs and message
is not a new entry), at most `PER_NODE` per node, for at most `MAX_NODES` nodes (the least recently
changed are forgotten first), so memory stays bounded whatever the fleet sends.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from typing import Any

from fleet.rendered import NodeStatus, PoolRecord, RenderedConfig
from fleet.rollout import NodeStatuses
from fleet.store import Store

PER_NODE = 20
MAX_NODES = 50_000


def _same(a: NodeStatus, b: NodeStatus) -> bool:
    return (a.pool, a.state, a.current_config, a.desired_config, a.message) == (
        b.pool, b.state, b.current_config, b.desired_config, b.message)


class ReportHistory:
    """Per node, the last `PER_NODE` distinct reports, oldest first."""

    def __init__(self) -> None:
        self._reports: OrderedDict[str, deque[NodeStatus]] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, status: NodeStatus) -> bool:
        """Keep `status` unless it repeats the node's last entry; True when it was kept."""
        with self._lock:
            entries = self._reports.get(status.name)
            if entries and _same(entries[-1], status):
                return False
            if entries is None:
                entries = self._reports[status.name] = deque(maxlen=PER_NODE)
                while len(self._reports) > MAX_NODES:
                    self._reports.popitem(last=False)
            self._reports.move_to_end(status.name)
            entries.append(status)
            return True

    def observe(self, statuses: Iterable[NodeStatus]) -> bool:
        """Record what a read of the store found; True when something new was seen."""
        changed = False
        for status in statuses:
            changed |= self.record(status)
        return changed

    def reports(self, node: str) -> list[NodeStatus]:
        """The node's kept reports, newest first."""
        with self._lock:
            return list(reversed(self._reports.get(node, ())))


class RecordingStore:
    """The store, with every node report put through it also recorded in a ReportHistory.

    `on_report` is called after each stored report (the live-update broadcaster wakes on it).
    """

    def __init__(self, inner: Store, history: ReportHistory, on_report: Callable[[], None] | None = None) -> None:
        self.inner = inner
        self.history = history
        self.on_report = on_report

    def put_node_status(self, status: NodeStatus) -> None:
        self.inner.put_node_status(status)
        self.history.record(status)
        if self.on_report is not None:
            self.on_report()

    def claim_node(self, node: str, decide: Callable[[NodeStatuses], NodeStatus | None]) -> NodeStatus | None:
        claimed = self.inner.claim_node(node, decide)
        if claimed is not None:
            self.history.record(claimed)
            if self.on_report is not None:
                self.on_report()
        return claimed

    def put_rendered(self, rendered: RenderedConfig) -> None:
        self.inner.put_rendered(rendered)

    def get_rendered(self, name: str) -> RenderedConfig:
        return self.inner.get_rendered(name)

    def list_rendered(self) -> list[str]:
        return self.inner.list_rendered()

    def delete_rendered(self, name: str) -> None:
        self.inner.delete_rendered(name)

    def put_pool(self, record: PoolRecord) -> None:
        self.inner.put_pool(record)

    def get_pool(self, pool: str) -> PoolRecord:
        return self.inner.get_pool(pool)

    def list_pools(self) -> list[str]:
        return self.inner.list_pools()

    def get_node_status(self, node: str) -> NodeStatus:
        return self.inner.get_node_status(node)

    def list_node_status(self) -> list[NodeStatus]:
        return self.inner.list_node_status()

    def __getattr__(self, name: str) -> Any:
        """Whatever else the wrapped store offers beyond the Store protocol (every protocol method is written
        out above, so none bypasses the history: tests/server/fleetpage/test_history.py checks that)."""
        return getattr(self.inner, name)
