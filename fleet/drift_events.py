"""Drift events: what a node found changed behind its agent's back, as the fleet sees it.

The agent sends the events of a check in its status report (`drift`, a list); the server keeps each node's last
DRIFT_LIMIT events in its record, newest first, every one of them, also when the same path drifts again and again
(an identical report is still a new event). An event says what (`kind`: file, unit, kargs, fips, service), where
(`path`: a file path, unit name or the kernel file), the `expected` and `found` fingerprints (`sha256:<hex>` of
the contents, `mode:0644`, `missing`, a unit's enablement, or the kernel arguments), `at` (RFC 3339) and whether
the agent `repaired` it. An unrepaired file drift (`--drift report`) also carries the file as found (`contents`,
a data URL, and `mode`), so `mco drift export` can make it a MachineConfig; a file over CONTENTS_LIMIT bytes is
reported without them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.errors import PathError

DRIFT_LIMIT = 50  # events a node record keeps
REPORT_LIMIT = 50  # events one report may carry
CONTENTS_LIMIT = 65536  # bytes of a drifted file carried for export
KINDS = ("file", "unit", "kargs", "fips", "service")
_TEXT_LIMIT = 4096


class DriftEventError(PathError, ValueError):
    """A drift event is malformed; `path` is the JSON path of the bad field."""


@dataclass(frozen=True)
class DriftEvent:
    """One drift found on a node (fields in the module docstring)."""

    kind: str
    path: str
    expected: str
    found: str
    at: str
    repaired: bool
    contents: str = ""
    mode: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (`contents` and `mode` only when present)."""
        data: dict[str, Any] = {"kind": self.kind, "path": self.path, "expected": self.expected,
                                "found": self.found, "at": self.at, "repaired": self.repaired}
        if self.contents:
            data["contents"] = self.contents
        if self.mode is not None:
            data["mode"] = self.mode
        return data

    @classmethod
    def from_dict(cls, data: Any, *, path: str = "$") -> DriftEvent:
        """Validate one event (a report's, or a stored record's)."""
        if not isinstance(data, Mapping):
            raise DriftEventError(path, "must be an object")
        texts: dict[str, str] = {}
        for key in ("kind", "path", "expected", "found", "at"):
            value = data.get(key)
            if not isinstance(value, str):
                raise DriftEventError(f"{path}.{key}", "required string" if value is None else "must be a string")
            if len(value) > _TEXT_LIMIT:
                raise DriftEventError(f"{path}.{key}", f"longer than {_TEXT_LIMIT} characters")
            texts[key] = value
        if texts["kind"] not in KINDS:
            raise DriftEventError(f"{path}.kind", f"must be one of {', '.join(KINDS)}")
        repaired = data.get("repaired")
        if not isinstance(repaired, bool):
            raise DriftEventError(f"{path}.repaired", "must be true or false")
        contents = data.get("contents", "")
        if not isinstance(contents, str) or len(contents) > 2 * CONTENTS_LIMIT:
            raise DriftEventError(f"{path}.contents", "must be a data URL of at most 64 KiB")
        mode = data.get("mode")
        if mode is not None and (isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode <= 0o7777):
            raise DriftEventError(f"{path}.mode", "must be a file mode (0..07777)")
        return cls(texts["kind"], texts["path"], texts["expected"], texts["found"], texts["at"], repaired,
                   contents, mode)


def parse_events(data: Any, *, path: str = "$.drift") -> tuple[DriftEvent, ...]:
    """A report's `drift` list (absent: none)."""
    if data is None:
        return ()
    if not isinstance(data, list):
        raise DriftEventError(path, "must be a list")
    if len(data) > REPORT_LIMIT:
        raise DriftEventError(path, f"more than {REPORT_LIMIT} events")
    return tuple(DriftEvent.from_dict(e, path=f"{path}[{i}]") for i, e in enumerate(data))


def stored_events(data: Any) -> tuple[DriftEvent, ...]:
    """A stored record's events; one that no longer validates is left out (a record stays readable)."""
    events = []
    for item in data if isinstance(data, list) else ():
        try:
            events.append(DriftEvent.from_dict(item))
        except DriftEventError:
            continue
    return tuple(events[:DRIFT_LIMIT])


def kept(new: Sequence[DriftEvent], old: Iterable[DriftEvent]) -> tuple[DriftEvent, ...]:
    """A record's events after a report: the report's (newest first), then the record's, DRIFT_LIMIT in all."""
    return (*reversed(new), *old)[:DRIFT_LIMIT]


def unrepaired_files(events: Iterable[DriftEvent]) -> dict[str, DriftEvent]:
    """The latest unrepaired file drift of each path that carries the file as found (what `mco drift export`
    makes declared), oldest path first."""
    latest: dict[str, DriftEvent] = {}
    for event in events:  # newest first: the first seen of a path is its latest
        if event.kind == "file" and event.path not in latest:
            latest[event.path] = event
    return {p: e for p, e in reversed(latest.items()) if not e.repaired and e.contents}
