"""Errors the CLI turns into exit codes; library code raises its own typed errors, commands translate them."""

from __future__ import annotations


class CliError(Exception):
    """A failure to report on stderr as `mco: <message>` with a chosen exit code."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class UsageError(CliError):
    """Bad flags or unreadable inputs: exit 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=2)


class InvalidInput(CliError):
    """The input was read and found invalid: exit 1."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=1)
