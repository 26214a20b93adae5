"""How long the event loop ran without coming back to a heartbeat: one request must never freeze the others.

A task wakes every `interval` seconds and reads the CPU time of the loop's thread (`time.thread_time`).
CPU time spent between two heartbeats is time the loop spent running callbacks (parsing, answering, a
runaway computation) instead of serving other connections; counting CPU rather than wall time keeps
the figure honest on a busy machine, where the thread may simply wait for a core. The longest such
block and the number of blocks over `threshold` are exported as metrics (server/metrics.py) and read
by the tests and by bench/server_soak.py.

A beat every 50 ms: a block is measured to within one interval (the CPU between two beats holds the block and at
most an interval of other work), and the heartbeat itself costs ~4 ms of CPU a second on an idle server (every
10 ms cost ~17 ms a second, ~5% of a replica's CPU during a rollout).
"""

from __future__ import annotations

import asyncio
import time


class LoopMonitor:
    """Heartbeat task recording the longest CPU stretch of the loop thread between two beats."""

    def __init__(self, *, interval: float = 0.05, threshold: float = 0.1) -> None:
        self.interval = interval
        self.threshold = threshold
        self.longest = 0.0
        self.over = 0

    def reset(self) -> None:
        """Forget what was seen so far (a test or soak phase starts clean)."""
        self.longest = 0.0
        self.over = 0

    async def run(self) -> None:
        """Beat forever (cancel the task to stop)."""
        last = time.thread_time()
        while True:
            await asyncio.sleep(self.interval)
            now = time.thread_time()
            spent = now - last
            last = now
            if spent > self.longest:
                self.longest = spent
            if spent > self.threshold:
                self.over += 1
