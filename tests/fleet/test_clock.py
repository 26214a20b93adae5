"""The clock seam and the one time-stamp format (RFC 3339, UTC, whole seconds, as metav1.Time)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from fleet.clock import ManualClock, parse_timestamp, system_clock, timestamp

STAMPS = [
    ("utc", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "2026-01-02T03:04:05Z"),
    ("fraction-dropped", datetime(2026, 1, 2, 3, 4, 5, 999999, tzinfo=UTC), "2026-01-02T03:04:05Z"),
    ("offset-converted", datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2))), "2026-01-02T03:04:05Z"),
    ("naive-is-utc", datetime(2026, 12, 31, 23, 59, 59), "2026-12-31T23:59:59Z"),
]


@pytest.mark.parametrize(("when", "text"), [c[1:] for c in STAMPS], ids=[c[0] for c in STAMPS])
def test_timestamp(when: datetime, text: str) -> None:
    assert timestamp(when) == text
    assert parse_timestamp(text) == when.replace(microsecond=0, tzinfo=when.tzinfo or UTC)


@pytest.mark.parametrize("text", ["", "2026-01-02 03:04:05Z", "2026-01-02T03:04:05", "2026-01-02T03:04:05+00:00",
                                  "2026-13-02T03:04:05Z", "2026-01-02T03:04:05Z\n", "not a time at all!!!"],
                         ids=["empty", "space", "no-zone", "offset", "month-13", "trailing-newline", "text"])
def test_not_a_timestamp(text: str) -> None:
    assert parse_timestamp(text) is None


def test_manual_clock_is_set_and_advanced() -> None:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    assert timestamp(clock()) == "2026-01-01T00:00:00Z"
    clock.advance(90)
    assert timestamp(clock()) == "2026-01-01T00:01:30Z"
    clock.now = datetime(2027, 5, 6, tzinfo=UTC)
    assert clock() == datetime(2027, 5, 6, tzinfo=UTC)


def test_system_clock_is_aware_utc() -> None:
    assert system_clock().utcoffset() == timedelta(0)
