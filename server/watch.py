"""Keep the served snapshot current: re-render when the cluster directory changes, or follow the store.

- Leader (the one process that renders): polls a fingerprint of the cluster directory (every file's
  path, size and mtime). When it changes and stays unchanged for one more short poll (an editor writing
  several files), it renders in a worker thread, then rebuilds the snapshot from the store and swaps it
  in whole. A broken edit: the renderer keeps the pool's last good target and records RenderDegraded in
  the pool record, so the rebuilt snapshot serves the old bytes and /pools shows the condition. A
  cluster directory that cannot be rendered at all (ClusterUnusable) leaves the old snapshot untouched and
  is reported in `state.render_errors`.
- Follower (other worker processes): polls the store's pool records and rebuilds when they change.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fleet.clock import Clock, system_clock
from fleet.rollout_control import auto_revert
from fleet.store import Store, StoreError
from server.metrics import ServerMetrics
from server.snapshot import PayloadCache, load_snapshot, store_fingerprint
from server.state import ServerState

log = logging.getLogger("mco.server")

RenderFn = Callable[[Path, Store], Any]


def default_render(cluster_dir: Path, store: Store) -> Any:
    """The renderer's `render_cluster` (imported late: renderer/ is a separate package of its own)."""
    from renderer.render import render_cluster

    return render_cluster(cluster_dir, store=store)


def tree_fingerprint(root: Path) -> tuple[tuple[str, int, int], ...]:
    """(relative path, size, mtime_ns) of every file under `root`, hidden names skipped."""
    entries: list[tuple[str, int, int]] = []
    try:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in filenames:
                if name.startswith("."):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                entries.append((os.path.relpath(path, root), st.st_size, st.st_mtime_ns))
    except OSError:
        return ()
    return tuple(sorted(entries))


def _result_errors(result: Any) -> tuple[tuple[str, ...], bool]:
    """(errors not tied to a pool, whether any pool is degraded) of a RenderResult."""
    errors = tuple(str(e) for e in getattr(result, "errors", ()) or ())
    pools = getattr(result, "pools", {}) or {}
    degraded = any(getattr(p, "errors", ()) for p in pools.values())
    return errors, degraded


class Reloader:
    """Renders (leader) or follows the store (follower) and swaps snapshots into `state`."""

    def __init__(self, *, state: ServerState, store: Store, cache: PayloadCache, metrics: ServerMetrics,
                 cluster_dir: Path | None, render: RenderFn = default_render, leader: bool = True,
                 interval: float = 1.0, clock: Clock = system_clock) -> None:
        self.state = state
        self.clock = clock
        self.store = store
        self.cache = cache
        self.metrics = metrics
        self.cluster_dir = cluster_dir
        self.render_fn = render
        self.leader = leader and cluster_dir is not None
        self.interval = interval
        self._tree: tuple[tuple[str, int, int], ...] | None = None
        self._store_fp: str | None = None

    async def render(self) -> bool:
        """Render the cluster directory once and swap in the result; False if nothing good came of it."""
        assert self.cluster_dir is not None
        from renderer.errors import ClusterUnusable

        started = time.perf_counter()
        try:
            result = await asyncio.to_thread(self.render_fn, self.cluster_dir, self.store)
        except ClusterUnusable as exc:
            self.state.render_errors = (str(exc),)
            self.metrics.renders.labels("failed").inc()
            log.error("render failed, still serving the previous render: %s", exc)
            return False
        except StoreError as exc:
            self.state.store_error = str(exc)
            self.metrics.renders.labels("failed").inc()
            log.error("render could not write the store: %s", exc)
            return False
        finally:
            self.metrics.render_seconds.observe(time.perf_counter() - started)
        errors, degraded = _result_errors(result)
        self.state.render_errors = errors
        self.metrics.renders.labels("degraded" if errors or degraded else "ok").inc()
        if await self.refresh():
            self.state.ready = True
            self.metrics.ready.set(1)
        return True

    async def refresh(self) -> bool:
        """Rebuild the snapshot from the store and swap it in; False (old snapshot kept) on store failure."""
        try:
            snapshot = await asyncio.to_thread(
                load_snapshot, self.store, cache=self.cache, generation=self.state.generations + 1)
        except StoreError as exc:
            self.state.store_error = str(exc)
            log.error("cannot read the store, still serving the previous snapshot: %s", exc)
            return False
        self.state.store_error = None
        self.state.swap(snapshot)
        self._store_fp = snapshot.fingerprint
        self.metrics.generation.set(snapshot.generation)
        if not self.leader and any(e.payload is not None for e in snapshot.pools.values()):
            self.state.ready = True
            self.metrics.ready.set(1)
        return True

    async def start(self) -> None:
        """The first render (leader) or load (follower), before the server starts listening."""
        if self.leader:
            assert self.cluster_dir is not None
            self._tree = await asyncio.to_thread(tree_fingerprint, self.cluster_dir)
            await self.render()
        else:
            await self.refresh()

    async def poll_once(self) -> None:
        """One check for changes: the cluster directory (leader), then the store; the leader also reverts the pools
        that ask for it when their rollout pauses (fleet/rollout_control.py `auto_revert`)."""
        snapshot = self.state.snapshot
        if self.leader and snapshot is not None and any(e.record.rollout.auto_revert for e in snapshot.pools.values()):
            try:
                reverted = await asyncio.to_thread(auto_revert, self.store, now=self.clock())
            except StoreError as exc:
                log.error("automatic revert: cannot use the store: %s", exc)
                reverted = {}
            for pool, config in reverted.items():
                log.warning("pool %s: rollout paused; reverted automatically to %s", pool, config)
        if self.leader:
            assert self.cluster_dir is not None
            tree = await asyncio.to_thread(tree_fingerprint, self.cluster_dir)
            if tree != self._tree:
                await asyncio.sleep(min(0.2, self.interval))
                again = await asyncio.to_thread(tree_fingerprint, self.cluster_dir)
                if again != tree:
                    return  # still being written; look again next time
                self._tree = tree
                await self.render()
                return
        snapshot = self.state.snapshot
        held = snapshot is not None and snapshot.held_back
        try:
            fp = await asyncio.to_thread(store_fingerprint, self.store, with_nodes=held)
        except StoreError as exc:
            self.state.store_error = str(exc)
            return
        if fp != self._store_fp:
            await self.refresh()

    async def run(self) -> None:
        """Poll forever (cancel the task to stop); `state.wake` (a node report that matters) polls at once."""
        while True:
            woken = True
            try:  # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow the cancel that stops this loop
                async with asyncio.timeout(self.interval):
                    await self.state.wake.wait()
            except TimeoutError:
                woken = False
            self.state.wake.clear()
            try:
                if woken:
                    await self.refresh()
                else:
                    await self.poll_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug in one poll must not stop watching; it is logged with its traceback
                log.exception("reload failed; still serving the previous snapshot")
