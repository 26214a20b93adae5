"""The benches' one timer: the best of several runs of a call, on the wall clock or the process's CPU clock."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], runs: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """The shortest of `runs` calls of `fn`, in seconds of `clock` (wall time unless told: time.process_time for
    CPU time, which other load on the machine does not inflate)."""
    best = float("inf")
    for _ in range(runs):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best
