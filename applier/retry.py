"""Retrying temporary failures: the one backoff of the agent (server requests, reports, the service loop).

A `TemporaryError` may ask for a delay (`delay`: a server's `Retry-After`, RFC 9110 section 10.2.3); the wait
before the next attempt is never shorter than that. Otherwise waits grow exponentially from `base`,
doubling up to `cap`, and start again from `base` after a success.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from applier.errors import TemporaryError

__all__ = ["Backoff", "retrying"]

T = TypeVar("T")


class Backoff:
    """Waits between attempts: `base`, 2x, 4x ... capped at `cap`, each at least what the failure asked for."""

    def __init__(self, base: float, cap: float) -> None:
        self.base = base
        self.cap = max(cap, base)
        self._next = base

    def wait_after(self, error: TemporaryError) -> float:
        """Seconds to wait after `error` before trying again (the wait after the next failure doubles)."""
        wait = max(self._next, error.delay)
        self._next = min(self._next * 2, self.cap)
        return wait

    def reset(self) -> None:
        """A success: the next failure waits `base` again."""
        self._next = self.base


def retrying(call: Callable[[], T], *, attempts: int, base_delay: float, max_delay: float,
             sleep: Callable[[float], None] = time.sleep) -> T:
    """Call, retrying TemporaryErrors up to `attempts` times in all with a `Backoff`; the last error is raised."""
    backoff = Backoff(base_delay, max_delay)
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except TemporaryError as exc:
            if attempt == attempts:
                raise
            sleep(backoff.wait_after(exc))
    raise ValueError(f"attempts must be at least 1, got {attempts}")
