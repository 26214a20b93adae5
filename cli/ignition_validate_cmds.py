"""`mco ignition validate [--strict] [-o text|json] FILE|- ...`: Ignition's verdicts, with line:col.

Exit codes: 0 every file valid, 1 any file invalid (with --strict, any warning counts), 2 usage or I/O errors
(an unreadable file; the other files are still checked and reported).

Text output, one line per entry on stdout:
    error at $.storage.files.0.path (config.ign:7:11): path not absolute
    warning at $.storage.files.0.foo (config.ign:7:24): unused key foo
JSON output (`-o json`), one document on stdout:
    {"valid": false, "strict": false,
     "files": [{"file": "config.ign", "valid": false, "version": "3.4.0", "errors": 1, "warnings": 0,
                "entries": [{"severity": "error", "code": "path-relative", "path": "$.storage.files.0.path",
                             "message": "path not absolute", "file": "config.ign", "line": 7, "col": 11}]}]}
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cli.errors import UsageError
from cli.inputs import read_input
from cli.output_flags import add_deprecated_format, add_format
from ignition.parse import check

STDIN_NAME = "<stdin>"


def register(subparsers: Any) -> None:
    """Add `mco ignition validate`."""
    p = subparsers.add_parser(
        "validate",
        help="validate Ignition configs (spec 3.0.0-3.6.0) with Ignition's own rules",
        description="Validate Ignition configs; exit 0 valid, 1 invalid, 2 usage or I/O error.",
    )
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    add_format(p, ("text", "json"), "text")
    add_deprecated_format(p, "--format", ("text", "json"))
    p.add_argument("files", nargs="+", metavar="FILE", help="config file, or - for stdin")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Validate every file named; print the entries; return the exit code."""
    io_error = False
    any_invalid = False
    results: list[dict[str, Any]] = []
    out = sys.stdout
    if hasattr(out, "reconfigure"):
        out.reconfigure(errors="backslashreplace")  # user strings in messages must never crash the command
    for name in args.files:
        label = STDIN_NAME if name == "-" else name
        try:
            raw = read_input(name)
        except UsageError as exc:
            print(f"mco: {exc}", file=sys.stderr)
            io_error = True
            continue
        checked = check(raw)
        report = checked.report
        valid = not report.is_fatal and not (args.strict and report.warnings)
        any_invalid = any_invalid or not valid
        if args.output == "json":
            results.append(
                {
                    "file": label,
                    "valid": valid,
                    "version": checked.version,
                    "errors": len(report.errors),
                    "warnings": len(report.warnings),
                    "entries": [e.as_dict(label) for e in report.entries],
                }
            )
        elif report.entries:
            out.write(report.format(label) + "\n")
    if args.output == "json":
        json.dump({"valid": not any_invalid and not io_error, "strict": bool(args.strict), "files": results}, out)
        out.write("\n")
    if io_error:
        return 2
    return 1 if any_invalid else 0
