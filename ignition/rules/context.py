"""The collector every rule module writes to: the version being validated and the entries found so far."""

from __future__ import annotations

from ignition.report import ERROR, WARNING, Entry, Path
from ignition.rules.codes import code_for
from ignition.versions import at_least


class Ctx:
    """Version-aware sink for problems (habit 1: rules produce messages, the caller attaches the path)."""

    __slots__ = ("version", "entries", "_cache")

    def __init__(self, version: str) -> None:
        self.version = version
        self.entries: list[Entry] = []
        self._cache: dict[str, bool] = {}

    def since(self, minimum: str) -> bool:
        """True when the version being validated is `minimum` or newer."""
        hit = self._cache.get(minimum)
        if hit is None:
            hit = self._cache[minimum] = at_least(self.version, minimum)
        return hit

    def error(self, path: Path, message: str | None) -> None:
        """Record an error at `path` (no-op for None, so checks can be passed straight in)."""
        if message is not None:
            self.entries.append(Entry(ERROR, code_for(message), path, message))

    def warn(self, path: Path, message: str | None) -> None:
        """Record a warning at `path` (no-op for None)."""
        if message is not None:
            self.entries.append(Entry(WARNING, code_for(message), path, message))
