"""Report: the problems found in one document (parse and validate add entries; callers decide).

Every entry has a severity, a stable code (what tests and tools match), a JSON path like
`$.storage.files.0.path`, Ignition's own message text and, when the source text is known, the line and
1-based byte column Ignition itself would print.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

ERROR = "error"
WARNING = "warning"

Path = tuple[str | int, ...]


def path_str(path: Sequence[object]) -> str:
    """JSONPath-like text of a path, as Ignition and Butane print it: ("storage", "files", 0) -> "$.storage.files.0"."""
    return "$" + "".join(f".{p}" for p in path)


@dataclass(frozen=True)
class Entry:
    """One problem: where it is, how bad, and Ignition's words for it."""

    severity: str
    code: str
    path: Path
    message: str
    line: int | None = None
    col: int | None = None

    def path_str(self) -> str:
        """The entry's JSON path as "$.a.0.b"."""
        return path_str(self.path)

    def format(self, source: str = "") -> str:
        """One line: `error at $.storage.files.0.path (config.ign:7:11): path not absolute`."""
        where = [source] if source else []
        if self.line is not None:
            where.append(f"{self.line}:{self.col}")
        loc = f" ({':'.join(where)})" if where else ""
        return f"{self.severity} at {self.path_str()}{loc}: {self.message}"

    def as_dict(self, source: str = "") -> dict[str, Any]:
        """The JSON form used by `mco ignition validate --format json`."""
        return {
            "severity": self.severity,
            "code": self.code,
            "path": self.path_str(),
            "message": self.message,
            "file": source or None,
            "line": self.line,
            "col": self.col,
        }


@dataclass
class Report:
    """An ordered collection of entries; fatal when it holds any error."""

    entries: list[Entry] = field(default_factory=list)

    def add(self, severity: str, code: str, path: Path, message: str) -> None:
        """Append an entry (positions are attached later by the parser)."""
        self.entries.append(Entry(severity, code, path, message))

    def error(self, code: str, path: Path, message: str) -> None:
        """Append an error."""
        self.entries.append(Entry(ERROR, code, path, message))

    def warning(self, code: str, path: Path, message: str) -> None:
        """Append a warning."""
        self.entries.append(Entry(WARNING, code, path, message))

    def extend(self, entries: Iterable[Entry]) -> None:
        """Append entries from another report or list."""
        self.entries.extend(entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def errors(self) -> list[Entry]:
        """The error entries, in order."""
        return [e for e in self.entries if e.severity == ERROR]

    @property
    def warnings(self) -> list[Entry]:
        """The warning entries, in order."""
        return [e for e in self.entries if e.severity == WARNING]

    @property
    def is_fatal(self) -> bool:
        """True when any entry is an error (Ignition's IsFatal)."""
        return any(e.severity == ERROR for e in self.entries)

    def with_positions(self, locate: Any) -> Report:
        """A copy whose entries carry line:col from `locate(path) -> (line, col) | None`."""
        out = Report()
        for e in self.entries:
            pos = locate(e.path) if e.line is None else (e.line, e.col)
            out.entries.append(replace(e, line=pos[0], col=pos[1]) if pos else e)
        return out

    def format(self, source: str = "") -> str:
        """All entries, one line each (no trailing newline)."""
        return "\n".join(e.format(source) for e in self.entries)

