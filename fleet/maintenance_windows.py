"""Maintenance windows: the weekly times a pool's rollout may hand out new slots. Pure (the caller passes `now`).

A window is days of the week, a local start time, a duration (up to 7 days) and an IANA time zone:
`{"days": ["Sat", "Sun"], "start": "01:00", "duration": "4h", "timeZone": "Europe/Berlin"}`. It opens on each
named day at `start` in that zone's local time (the wall clock: a window keeps its local hour across a daylight
saving change) and stays open for `duration` (elapsed time). A start the clocks skip that day (02:30 when they
spring from 02:00 to 03:00) opens at the same moment, 03:30 on the new wall clock, as Go's time.Date normalises it;
a start the clocks repeat (autumn) opens at its first occurrence, once. A pool without windows is always open. Outside every window no
new slot is handed out; a node already moving finishes (fleet/rollout.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fleet.errors import FleetError

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_START_RE = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])\Z")  # ASCII digits only (`\d` is any Unicode digit)
MAX_DURATION = 7 * 24 * 3600
_DURATION_RE = re.compile(r"(?:([0-9]{1,5})h)?(?:([0-9]{1,5})m)?(?:([0-9]{1,7})s)?\Z")  # no nested quantifier


class WindowError(FleetError, ValueError):
    """A maintenance window that cannot be used; the message says which field."""


def parse_duration(text: str) -> int | None:
    """Seconds in `90`, `90s`, `10m`, `1h30m` (None: not a duration): the one duration syntax of the rollout
    settings (fleet/rollout_settings.py)."""
    text = text.strip()
    if text.isdigit() and len(text) <= 7:
        return int(text)
    m = _DURATION_RE.match(text)
    if not text or m is None:
        return None
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    return h * 3600 + mi * 60 + s


@dataclass(frozen=True)
class Window:
    """One weekly window (module docstring)."""

    days: tuple[int, ...]  # 0 = Monday
    start: time
    duration: int  # seconds
    time_zone: str

    def to_dict(self) -> dict[str, Any]:
        """The annotation's JSON form."""
        return {"days": [DAYS[d] for d in self.days], "start": self.start.strftime("%H:%M"),
                "duration": f"{self.duration}s", "timeZone": self.time_zone}

    def openings(self, now: datetime) -> Iterable[tuple[datetime, datetime]]:
        """(start, end) in UTC of each opening from 8 days before `now` to 8 days after, in time order."""
        zone = ZoneInfo(self.time_zone)
        today = now.astimezone(zone).date()
        for offset in range(-8, 9):
            day = today + timedelta(days=offset)
            if day.weekday() in self.days:
                start = datetime.combine(day, self.start, tzinfo=zone).astimezone(UTC)
                yield start, start + timedelta(seconds=self.duration)


def parse_window(data: Any) -> Window:
    """A window from its JSON form; WindowError names the field that is wrong."""
    if not isinstance(data, Mapping):
        raise WindowError("a window must be an object with days, start, duration and timeZone")
    unknown = set(data) - {"days", "start", "duration", "timeZone"}
    if unknown:
        raise WindowError(f"unknown window field(s): {', '.join(sorted(map(str, unknown)))}")
    days = data.get("days")
    if not isinstance(days, list) or not days or not all(d in DAYS for d in days):
        raise WindowError(f"days must be a non-empty list of {', '.join(DAYS)}")
    start = data.get("start")
    m = _START_RE.match(start) if isinstance(start, str) else None
    if m is None:
        raise WindowError("start must be HH:MM (24-hour clock)")
    duration = parse_duration(data["duration"]) if isinstance(data.get("duration"), str) else None
    if duration is None or not 0 < duration <= MAX_DURATION:
        raise WindowError("duration must be a duration such as 90m or 4h, at most 7 days")
    zone = data.get("timeZone", "UTC")
    try:
        ZoneInfo(zone) if isinstance(zone, str) and zone else None
    except (ZoneInfoNotFoundError, ValueError):
        zone = None
    if not isinstance(zone, str) or not zone:
        raise WindowError("timeZone must be an IANA time zone name such as UTC or Europe/Berlin")
    return Window(tuple(sorted({DAYS.index(d) for d in days})), time(int(m.group(1)), int(m.group(2))),
                  duration, zone)


def is_open(windows: Iterable[Window], now: datetime) -> bool:
    """Whether `now` falls in one of the windows (no windows: always open)."""
    windows = tuple(windows)
    if not windows:
        return True
    return any(start <= now < end for w in windows for start, end in w.openings(now))


def next_opening(windows: Iterable[Window], now: datetime) -> datetime | None:
    """When the next window opens after `now` (UTC); None without windows."""
    later = [start for w in windows for start, _ in w.openings(now) if start > now]
    return min(later) if later else None
