"""The `mco` entry point: builds the argument parser from each area's command module and maps errors to exit codes.

Exit codes, shared by every subcommand:
  0  success
  1  the input was understood and found wanting (invalid config, refused translation, failed apply)
  2  usage or I/O errors (bad flags, unreadable files)
Library exceptions map to them in one table, cli/errors.py `EXIT_CODES`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from cli.errors import CliError, exit_code_of
from cli.output_flags import CONVENTION

# Each module exposes `register(subparsers)`; it adds its subcommands and sets `func` on them.
# The table maps each top-level command to the module that registers it, so that a run imports
# only the module it needs (start-up time matters for `mco ignition validate` in scripts).
COMMANDS: dict[str, str] = {
    "ignition": "cli.ignition_cmds",
    "butane": "cli.butane_cmds",
    "render": "cli.render_cmds",
    "diff": "cli.render_cmds",
    "serve": "cli.serve_cmds",
    "controller": "cli.controller_cmds",
    "certs": "cli.certs_cmds",
    "image": "cli.image_cmds",
    "apply": "cli.apply_cmds",
    "rollout": "cli.rollout_cmds",
    "nodes": "cli.nodes_cmds",
    "drift": "cli.drift_cmds",
}
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))

# The words of the command line being parsed, for command groups that register lazily too.
current_words: list[str] = []


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Assemble the `mco` parser: only the named command's module when argv names one, else all of them."""
    parser = argparse.ArgumentParser(prog="mco", description="Machine configuration for image-based Linux fleets.",
                                     epilog=CONVENTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    current_words[:] = list(argv or ())
    first = next((a for a in current_words if not a.startswith("-")), None)
    modules = (COMMANDS[first],) if first in COMMANDS else COMMAND_MODULES
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `mco`; returns (and exits with) the process exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words)
    args = parser.parse_args(words)
    try:
        code = int(args.func(args) or 0)
    except CliError as exc:
        print(f"mco: {exc}", file=sys.stderr)
        code = exc.exit_code
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        code = 0
    except Exception as exc:  # a package's own exception: its code from the one table (cli/errors.py)
        code_of = exit_code_of(exc)
        if code_of is None:
            raise
        print(f"mco: {exc}", file=sys.stderr)
        code = code_of
    if __name__ == "__main__" or argv is None:
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
