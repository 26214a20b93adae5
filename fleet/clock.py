"""Time: the clock seam every package reads the time through, and the one time-stamp format.

Where it sits: pool conditions and history (the renderer), node reports and hand-outs (the server), the
controller's status, the fleet page's ages and image creation times all write and read `timestamp`s, the
RFC 3339 UTC form with whole seconds (`2026-01-02T03:04:05Z`) that Kubernetes uses for
`lastTransitionTime` (k8s.io/apimachinery `metav1.Time`). Code that needs "now" takes a `Clock` as a
keyword-only dependency, `system_clock` by default; tests pass a `ManualClock` and set or advance it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

__all__ = ["Clock", "ManualClock", "parse_timestamp", "system_clock", "timestamp"]

Clock = Callable[[], datetime]  # returns an aware datetime
_LENGTH = len("2026-01-02T03:04:05Z")


def system_clock() -> datetime:
    """The machine's time, in UTC."""
    return datetime.now(UTC)


class ManualClock:
    """The in-memory Clock: it reads `now`, which a test sets or advances."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now or datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        """Move the clock forward; returns the new time."""
        self.now += timedelta(seconds=seconds)
        return self.now


def timestamp(when: datetime) -> str:
    """`when` as an RFC 3339 UTC time stamp with whole seconds (a naive time is taken as UTC)."""
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(text: str) -> datetime | None:
    """The time a `timestamp` names, or None when `text` is not one (fromisoformat: ~10x faster than strptime)."""
    if len(text) != _LENGTH or text[10] != "T" or text[19] != "Z":
        return None
    try:
        return datetime.fromisoformat(text[:19]).replace(tzinfo=UTC)
    except ValueError:
        return None
