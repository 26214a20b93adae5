"""`mco controller`: the one elected process that renders the cluster directory into the etcd store.

Any number of candidates run on different hosts; the election (fleet/etcd_election.py) picks one. Only the
leader renders: once when it takes over, then whenever the cluster directory changes (and stays unchanged for
one more short look, as `mco serve` does). Its writes go through the fenced store, so a deposed leader's
writes fail whole. A render error keeps every pool's last good target: per-pool errors are the pool's
RenderDegraded condition (the renderer's rule), and a cluster directory that cannot be rendered at all is
published in `state/controller`, which replicas show under `/pools` `renderErrors`. After a good render the
leader deletes rendered configs that no pool (current or history) or node references.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fleet.clock import Clock, system_clock, timestamp
from fleet.etcd_election import POLL, Election
from fleet.rollout_control import auto_revert
from fleet.store import ElectedStore, InUse, NotFound, NotLeader, StoreError, references
from server.watch import default_render, tree_fingerprint

log = logging.getLogger("mco.controller")

RenderFn = Callable[[Path, ElectedStore], Any]


def collect_garbage(store: ElectedStore) -> list[str]:
    """Delete rendered configs nothing references (each delete re-checks in its own transaction) and chunks
    left without a manifest; returns the deleted names."""
    referenced = references((store.get_pool(p) for p in store.list_pools()), store.list_node_status())
    deleted = []
    for name in store.list_rendered():
        if name in referenced:
            continue
        try:
            store.delete_rendered(name)
            deleted.append(name)
        except (InUse, NotFound):
            continue
    for name in store.orphan_blobs():
        store.delete_orphan_blobs(name)
    return deleted


class Controller:
    """One candidate: campaign, and while leading, render on change."""

    def __init__(self, cluster_dir: Path, store: ElectedStore, election: Election, *, interval: float = 0.5,
                 render: RenderFn = default_render, clock: Clock = system_clock) -> None:
        self.cluster_dir = cluster_dir
        self.store = store
        self.election = election
        self.interval = interval
        self.render_fn = render
        self.clock = clock
        self.stop = threading.Event()
        self._tree: tuple[tuple[str, int, int], ...] | None = None
        self.renders = 0

    def run(self) -> None:
        """Until `stop` is set: lead when possible and render on change. Resigns on the way out."""
        try:
            while not self.stop.is_set():
                if not self.election.leading and not self._campaign():
                    self.stop.wait(POLL)
                    continue
                self.step()
                self.stop.wait(self.interval)
        finally:
            self.election.resign()

    def _campaign(self) -> bool:
        try:
            won = self.election.campaign()
        except StoreError as exc:
            log.info("cannot campaign: %s", exc)
            return False
        if won:
            self._tree = None  # the directory may have changed while another candidate led: render at once
        return won

    def step(self) -> None:
        """Revert the pools that ask for it when their rollout pauses; render if the cluster directory changed since
        the last render (or leadership was just won)."""
        fenced = self.store.fenced(self.election.key, self.election.won_revision)
        try:
            for pool, config in auto_revert(fenced, now=self.clock()).items():
                log.warning("pool %s: rollout paused; reverted automatically to %s", pool, config)
        except NotLeader:
            self._deposed()
            return
        except StoreError as exc:
            log.error("automatic revert: cannot use the store: %s", exc)
        tree = tree_fingerprint(self.cluster_dir)
        if tree == self._tree:
            return
        if self._tree is not None:
            self.stop.wait(0.2)
            if tree_fingerprint(self.cluster_dir) != tree:
                return  # still being written; look again next time
        self._tree = tree
        self.render()

    def render(self) -> None:
        """Render once through the fenced store and publish the outcome."""
        from renderer.errors import ClusterUnusable

        fenced = self.store.fenced(self.election.key, self.election.won_revision)
        now = timestamp(self.clock())
        status: dict[str, Any] = {"leader": self.election.identity, "renderedAt": now}
        try:
            result = self.render_fn(self.cluster_dir, fenced)
        except ClusterUnusable as exc:
            if isinstance(exc.__cause__, NotLeader):
                self._deposed()
                return
            if isinstance(exc.__cause__, StoreError):
                self._tree = None  # etcd failed mid-way: try the whole render again
            log.error("render failed, pools keep their last good targets: %s", exc)
            status["errors"] = [str(exc)]
        else:
            self.renders += 1
            status["errors"] = [str(e) for e in getattr(result, "errors", ())]
            status["degradedPools"] = sorted(p for p, r in getattr(result, "pools", {}).items() if r.errors)
        try:
            fenced.put_controller_status(status)
            if not status["errors"]:
                deleted = collect_garbage(fenced)
                if deleted:
                    log.info("deleted unreferenced rendered configs: %s", ", ".join(deleted))
        except NotLeader:
            self._deposed()
        except StoreError as exc:
            log.error("cannot publish the render status: %s", exc)

    def _deposed(self) -> None:
        log.warning("%s lost the leadership; not writing", self.election.identity)
        self.election.won_revision = 0
        self._tree = None
