"""The one exception base of `fleet/`: the CLI maps it to an exit code in one place (cli/errors.py)."""

from __future__ import annotations


class FleetError(Exception):
    """Base of every exception raised by the shared model, its rules and the store."""


class PathError(FleetError):
    """An error about the one thing `path` names (a JSON path, a file, a stored object); `message` says what."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
