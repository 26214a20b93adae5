"""The one exception base of `fleet/`: the CLI maps it to an exit code in one place (cli/errors.py)."""

from __future__ import annotations


class FleetError(Exception):
    """Base of every exception raised by the shared model, its rules and the store."""
