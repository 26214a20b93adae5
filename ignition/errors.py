"""Exception types of the ignition/ package: each carries the report (and so the paths) that explains it."""

from __future__ import annotations

from ignition.report import Path, Report


class IgnitionError(Exception):
    """Base of every error raised by ignition/; `report` holds the entries, `path` the main location."""

    def __init__(self, message: str, report: Report | None = None, path: Path = ()) -> None:
        super().__init__(message)
        self.report = report if report is not None else Report()
        self.path = path


class TranslationError(IgnitionError):
    """A translation cannot be expressed in the target version; the report lists every field path it lacks."""
