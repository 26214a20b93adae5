"""The `mco` entry point: builds the argument parser from each area's command module and maps errors to exit codes.

Exit codes, shared by every subcommand:
  0  success
  1  the input was understood and found wanting (invalid config, refused translation, failed apply)
  2  usage or I/O errors (bad flags, unreadable files)
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from cli.errors import CliError

# Each module exposes `register(subparsers)`; it adds its subcommands and sets `func` on them.
COMMAND_MODULES: tuple[str, ...] = (
    "cli.ignition_cmds",
    "cli.butane_cmds",
    "cli.render_cmds",
    "cli.serve_cmds",
    "cli.certs_cmds",
    "cli.image_cmds",
    "cli.apply_cmds",
)


def build_parser() -> argparse.ArgumentParser:
    """Assemble the full `mco` parser from every command module."""
    parser = argparse.ArgumentParser(prog="mco", description="Machine configuration for image-based Linux fleets.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `mco`; returns (and exits with) the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args) or 0)
    except CliError as exc:
        print(f"mco: {exc}", file=sys.stderr)
        code = exc.exit_code
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        code = 0
    if __name__ == "__main__" or argv is None:
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
