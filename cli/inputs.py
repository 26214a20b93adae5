"""Reading a command's input file, or stdin for `-`: one rule and one error for every command."""

from __future__ import annotations

import sys

from cli.errors import UsageError


def read_input(name: str, *, verb: str = "cannot read") -> bytes:
    """The bytes of file `name` (stdin for `-`); an unreadable file is a UsageError (exit 2) naming it."""
    try:
        if name == "-":
            return sys.stdin.buffer.read()
        with open(name, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"{verb} {name}: {exc.strerror or exc}") from exc
