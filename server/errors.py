"""The server package's one exception base.

Every exception the server raises derives from `ServerError`, so a caller (the `mco` CLI's exit-code table in
cli/errors.py, or a test) can tell the server's refusals from a bug. Each subclass lives next to the code that
raises it and says what it carries (`path` names the flag, header, query parameter or JSON field at fault).
"""

from __future__ import annotations


class ServerError(Exception):
    """Base of the server's exceptions."""
