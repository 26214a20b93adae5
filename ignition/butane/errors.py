"""ButaneError: a document Butane refuses, with the problems (YAML paths, line:col) that explain it."""

from __future__ import annotations

from ignition.butane.report import Problems
from ignition.errors import IgnitionError


class ButaneError(IgnitionError):
    """Butane's refusal: `str(exc)` is the text after `Error translating config: `; `problems` what it printed."""

    def __init__(self, message: str, problems: Problems) -> None:
        super().__init__(message, problems.to_report())
        self.message = message
        self.problems = problems
