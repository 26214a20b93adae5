"""`mco` subcommands for this area (see cli/main.py for exit-code conventions)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add this area's subcommands to the `mco` parser."""
    del subparsers
    _ = argparse
