"""Where a condition's problem lies, as data: the manifest file, line and column, and the field path.

A `RenderDegraded` condition's message is the MCO's text (`Failed to render configuration for pool P:
<problem>; <problem>`); beside it the renderer records each problem in these fields (renderer/problems.py
`Problem`), so readers such as the fleet page show file:line and field path without parsing the text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ConditionProblem:
    """One problem: `file` relative to the cluster directory, 1-based `line` and `column` (None: unknown),
    `field` the JSON path inside the manifest (`$.spec.config.storage.files.0.path`, "" when none)."""

    message: str
    file: str = ""
    line: int | None = None
    column: int | None = None
    field: str = ""

    @property
    def where(self) -> str:
        """`manifests/50-chrony.yaml:12:9`, as much of it as is known."""
        parts = [self.file] if self.file else []
        if self.file and self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (unknown line and column left out)."""
        data: dict[str, Any] = {"message": self.message, "file": self.file, "field": self.field}
        if self.line is not None:
            data["line"] = self.line
        if self.column is not None:
            data["column"] = self.column
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConditionProblem:
        """Read the JSON form (a line or column that is not a whole number is unknown)."""
        def number(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None
        return cls(str(data.get("message", "")), str(data.get("file", "")), number("line"), number("column"),
                   str(data.get("field", "")))
