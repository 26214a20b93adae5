"""`mco ignition ...`: the group; each subcommand lives in the module that owns it.

- validate            cli/ignition_validate_cmds.py
- merge, translate    cli/ignition_transform_cmds.py
- pointer             cli/pointer_cmds.py
"""

from __future__ import annotations

import importlib
from typing import Any

_SUBCOMMAND_MODULES = (
    "cli.ignition_validate_cmds",
    "cli.ignition_transform_cmds",
    "cli.pointer_cmds",
)


def register(subparsers: Any) -> None:
    """Add `mco ignition` and its subcommands."""
    group = subparsers.add_parser("ignition", help="validate, merge, translate Ignition configs; write pointer configs")
    sub = group.add_subparsers(dest="ignition_command", metavar="SUBCOMMAND")
    sub.required = True
    for name in _SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
