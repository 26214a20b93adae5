"""The server package's one exception base.

Every exception the server raises derives from `ServerError`, so a caller (the `mco` CLI's exit-code table in
cli/errors.py, or a test) can tell the server's refusals from a bug. Each subclass lives next to the code that
raises it and says what it carries (`path` names the flag, header, query parameter or JSON field at fault).
"""

from __future__ import annotations


class ServerError(Exception):
    """Base of the server's exceptions."""


class PathError(ServerError):
    """A refusal about the one thing `path` names (a flag, file or JSON field); `message` says what."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
