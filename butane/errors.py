"""ButaneError, the one exception base of butane/: a document Butane refuses, with the problems that explain it.

It is an IgnitionError too (its report holds Ignition-style entries with paths and line:col), so a caller
that handles Ignition's refusals handles Butane's the same way.
"""

from __future__ import annotations

from butane.report import Problems
from ignition.errors import IgnitionError


class ButaneError(IgnitionError):
    """Butane's refusal: `str(exc)` is the text after `Error translating config: `; `problems` what it printed."""

    def __init__(self, message: str, problems: Problems | None = None) -> None:
        problems = problems if problems is not None else Problems()
        super().__init__(message, problems.to_report())
        self.message = message
        self.problems = problems
