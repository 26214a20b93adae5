"""`mco ignition ...`: the group; each subcommand lives in the module that owns it.

- validate            cli/ignition_validate_cmds.py
- merge, translate    cli/ignition_transform_cmds.py
- pointer             cli/pointer_cmds.py
"""

from __future__ import annotations

import importlib
from typing import Any

_SUBCOMMANDS: dict[str, str] = {
    "validate": "cli.ignition_validate_cmds",
    "merge": "cli.ignition_transform_cmds",
    "translate": "cli.ignition_transform_cmds",
    "pointer": "cli.pointer_cmds",
}


def register(subparsers: Any) -> None:
    """Add `mco ignition` and its subcommands (only the one named on the command line, when it is)."""
    group = subparsers.add_parser("ignition", help="validate, merge, translate Ignition configs; write pointer configs")
    sub = group.add_subparsers(dest="ignition_command", metavar="SUBCOMMAND")
    sub.required = True
    from cli.main import current_words

    words = [a for a in current_words if not a.startswith("-")]
    named = words[1] if len(words) > 1 and words[0] == "ignition" else None
    modules = (_SUBCOMMANDS[named],) if named in _SUBCOMMANDS else tuple(dict.fromkeys(_SUBCOMMANDS.values()))
    for name in modules:
        importlib.import_module(name).register(sub)
