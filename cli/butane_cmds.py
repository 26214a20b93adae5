"""`mco butane`: Butane's CLI (see cli/main.py for exit-code conventions).

Behaves like `butane [--files-dir DIR] [--strict] [--raw] [--pretty] FILE` (butane's `-o FILE` is
`--output-file FILE` here, as in every `mco` command; cli/output_flags.py): warnings and errors go to stderr
in Butane's words (`warning at $.path, line L col C: ...`), a refused document ends with
`Error translating config: <reason>` and exit 1, `--strict` turns any warning into exit 1, and stdout gets
the Ignition JSON (fcos, or openshift with --raw) or the MachineConfig YAML, newline-terminated.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from butane import STRICT_MESSAGE, ButaneError, transpile
from cli.inputs import read_input
from cli.output_flags import add_output_file, write_output


def register(subparsers: Any) -> None:
    """Add `mco butane` to the `mco` parser."""
    parser = subparsers.add_parser(
        "butane",
        help="translate a Butane config (.bu) to Ignition JSON or an OpenShift MachineConfig",
        description="Translate a Butane config the way Butane does.",
    )
    parser.add_argument("input", metavar="FILE.bu", nargs="?", default="-",
                        help="Butane config to translate, or - for stdin (the default, as with butane)")
    parser.add_argument(
        "-d", "--files-dir", metavar="DIR", help="allow embedding local files from this directory"
    )
    parser.add_argument("-s", "--strict", action="store_true", help="fail on any warning")
    parser.add_argument(
        "-r", "--raw", action="store_true", help="never wrap in a MachineConfig; force Ignition output"
    )
    parser.add_argument("-p", "--pretty", action="store_true", help="output formatted json")
    parser.add_argument("-c", "--check", action="store_true", help="check config without producing output")
    add_output_file(parser, help="write to FILE instead of stdout", old=("-o", "--output"))
    parser.set_defaults(func=run)


_UTF8_PROBLEMS = {
    "invalid start byte": "invalid leading UTF-8 octet",
    "invalid continuation byte": "invalid trailing UTF-8 octet",
    "unexpected end of data": "incomplete UTF-8 octet sequence",
}


def _decode(data: bytes) -> str | None:
    """The document as text, or None after printing the YAML reader's error for bytes that are not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = _UTF8_PROBLEMS.get(exc.reason, "invalid UTF-8 octet")
        sys.stderr.write(f"Error translating config: Error unmarshaling yaml: yaml: {problem}\n")
        return None


def run(args: argparse.Namespace) -> int:
    """Translate one document; exit 0, or 1 when Butane would refuse it (or warn, with --strict)."""
    text = _decode(read_input(args.input, verb="failed to read"))
    if text is None:
        return 1
    try:
        result = transpile(text, files_dir=args.files_dir, raw=args.raw, source=args.input)
    except ButaneError as exc:
        sys.stderr.write(exc.problems.format())
        sys.stderr.write(f"Error translating config: {exc.message}\n")
        return 1
    sys.stderr.write(result.problems.format())
    if args.strict and result.problems.entries:
        sys.stderr.write(STRICT_MESSAGE + "\n")
        return 1
    if args.check:
        return 0
    text_out = result.render(pretty=args.pretty) + "\n"
    if args.output_file:
        write_output(args.output_file, text_out)
        return 0
    sys.stdout.write(text_out)
    sys.stdout.flush()
    return 0
