"""A stateless replica: `mco serve --store etcd://...` serves from an in-memory mirror of the etcd store
(opened by fleet/store_open.py with `follow=True`).

The mirror (fleet/etcd_mirror.py) starts from one consistent range read and follows a watch; each applied
change wakes the reloader, which rebuilds the served snapshot from memory (the request path never reads
etcd). The controller's published render errors become the replica's `render_errors` (/pools shows them).
When etcd loses quorum the mirror keeps its last state, so reads go on; writes (node status, hand-outs) fail
after the store's call timeout and are answered 503, which nodes retry.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from fleet.etcd_store import EtcdStore
from server.handout_follow import follow_mirror
from server.state import ServerState

WRITERS = 64  # threads for store calls; each mostly waits on etcd



def attach(store: EtcdStore, state: ServerState, loop: asyncio.AbstractEventLoop) -> None:
    """Wake the reloader on every change the mirror applies, wake held claims that may take a freed slot
    (server/handout_wait.py), and show the mirror's health on /healthz."""
    mirror = store.mirror
    assert mirror is not None
    state.feed = mirror
    # Every store write waits for an etcd round trip (a hand-out also for its compare-and-swap retries) in a
    # worker thread: with asyncio's default 6 threads, reports queued behind claims during a rollout.
    loop.set_default_executor(ThreadPoolExecutor(max_workers=WRITERS, thread_name_prefix="etcd-store"))

    seen = [-1]

    def changed() -> None:
        # Node reports change what is served only while a pool holds its target back (snapshot.py's rule);
        # otherwise rebuilding the snapshot on each of a rollout's thousands of reports would only burn CPU.
        snapshot = state.snapshot
        if mirror.shared_version == seen[0] and snapshot is not None and not snapshot.held_back:
            return
        seen[0] = mirror.shared_version
        errors = mirror.controller().get("errors") or []
        state.render_errors = tuple(str(e) for e in errors) if isinstance(errors, list) else ()
        loop.call_soon_threadsafe(state.wake.set)

    mirror.on_change(changed)
    changed()
    follow_mirror(state, mirror, loop)
