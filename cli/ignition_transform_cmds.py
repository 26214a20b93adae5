"""`mco ignition merge PARENT CHILD` and `mco ignition translate --to X.Y.Z FILE`.

Both read their inputs with ignition's parser (so a bad input gets Ignition's errors with path and
line:col), print the resulting config as canonical JSON on stdout, and put every report line
(warnings included) on stderr. Exit codes (cli/main.py): 0 the result is valid; 1 an input or the
result is invalid, or the translation cannot be expressed; 2 usage or I/O errors (an unreadable file,
an unknown --to version). Nothing is written to stdout unless the command succeeds.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

from cli.errors import UsageError
from cli.inputs import read_input
from ignition.canonical import canonical_json, pretty_json
from ignition.errors import IgnitionError
from ignition.locate import Locator
from ignition.merge import merge
from ignition.parse import check
from ignition.report import Report
from ignition.spec2 import SPEC2_VERSIONS, is_spec2, to_spec3
from ignition.translate import translate_with_report
from ignition.validate import validate_dict
from ignition.versions import ACCEPTED_VERSIONS, version_index

EXIT_OK = 0
EXIT_INVALID = 1


def register(subparsers: Any) -> None:
    """Add `merge` and `translate` to the `mco ignition` group."""
    m = subparsers.add_parser(
        "merge",
        help="merge a child config into a parent, as Ignition does",
        description="Merge CHILD into PARENT with Ignition's rules; an older input is first translated up "
        "to the newer one's spec version. The merged config is validated.",
    )
    m.add_argument("parent", metavar="PARENT", help="parent config file, or - for stdin")
    m.add_argument("child", metavar="CHILD", help="child config file, or - for stdin")
    m.add_argument("--pretty", action="store_true", help="indent the output")
    m.set_defaults(func=run_merge)

    t = subparsers.add_parser(
        "translate",
        help="translate a config to another spec version (up, or down where it can be expressed)",
        description="Translate FILE to spec --to. Downward translation refuses, listing every field path "
        f"the target cannot express. A spec {', '.join(SPEC2_VERSIONS)} config is converted as the MCO converts "
        "one (duplicates removed, the last kept; filesystem root only).",
    )
    t.add_argument(
        "--to", required=True, metavar="X.Y.Z", help=f"target spec version ({', '.join(ACCEPTED_VERSIONS)})"
    )
    t.add_argument("file", metavar="FILE", help="config file, or - for stdin")
    t.add_argument("--pretty", action="store_true", help="indent the output")
    t.set_defaults(func=run_translate)


@dataclass(frozen=True)
class _Input:
    name: str
    text: str
    config: dict[str, Any] | None
    report: Report

    def about_me(self, report: Report) -> Report:
        """A translation report on this input: what parsing said already is left out, positions are added."""
        said = {(e.code, e.path) for e in self.report}
        fresh = Report([e for e in report if (e.code, e.path) not in said])
        locator = Locator(self.text)
        return fresh.with_positions(lambda path: locator.locate(path))


def _load(name: str) -> _Input:
    """Read and parse one input; config is None when Ignition would refuse it."""
    raw = read_input(name)
    source = "<stdin>" if name == "-" else name
    checked = check(raw)
    text = raw.decode("utf-8", "replace")
    if not checked.ok:
        return _Input(source, text, None, checked.report)
    return _Input(source, text, json.loads(raw), checked.report)


def _emit_report(report: Report, source: str) -> None:
    if report.entries:
        print(report.format(source), file=sys.stderr)


def _emit_result(config: dict[str, Any], pretty: bool) -> None:
    if pretty:
        sys.stdout.write(pretty_json(config))
    else:
        sys.stdout.buffer.write(canonical_json(config) + b"\n")
    sys.stdout.flush()


def _validated(config: dict[str, Any], source: str) -> bool:
    """Validate the result under its own spec; print its errors (the inputs' warnings are out already)."""
    errors = Report(validate_dict(config).errors)
    _emit_report(errors, source)
    return not errors.is_fatal


def run_merge(args: argparse.Namespace) -> int:
    """`mco ignition merge`: parse both, translate the older up, merge, validate, print."""
    if args.parent == "-" and args.child == "-":
        raise UsageError("only one of PARENT and CHILD can be read from stdin")
    inputs = [_load(args.parent), _load(args.child)]
    for item in inputs:
        _emit_report(item.report, item.name)
    if any(item.config is None for item in inputs):
        return EXIT_INVALID
    newest = max((item.config["ignition"]["version"] for item in inputs if item.config), key=version_index)
    configs = [_translated(item, newest) for item in inputs]
    if configs[0] is None or configs[1] is None:
        return EXIT_INVALID
    try:
        result = merge(configs[0], configs[1])
    except IgnitionError as exc:
        print(f"mco: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if not _validated(result, "merged"):
        return EXIT_INVALID
    _emit_result(result, args.pretty)
    return EXIT_OK


def _translated(item: _Input, version: str) -> dict[str, Any] | None:
    """The input's config in `version` (as is when already there); None, with the report printed, if refused."""
    assert item.config is not None
    if item.config["ignition"]["version"] == version:
        return item.config
    try:
        result, report = translate_with_report(item.config, version)
    except IgnitionError as exc:
        _emit_report(item.about_me(exc.report), item.name)
        return None
    _emit_report(item.about_me(report), item.name)
    return result


def _spec2_config(item: _Input) -> dict[str, Any] | None:
    """The input as a JSON object when it is a spec 2.0-2.2 config (which Ignition's v3 parser refuses)."""
    if item.config is not None:
        return None
    try:
        data = json.loads(item.text)
    except ValueError:
        return None
    return data if is_spec2(data) else None


def run_translate(args: argparse.Namespace) -> int:
    """`mco ignition translate`: parse, translate (refusing what the target lacks), validate, print."""
    if args.to not in ACCEPTED_VERSIONS:
        raise UsageError(f"unknown spec version {args.to!r} for --to (known: {', '.join(ACCEPTED_VERSIONS)})")
    item = _load(args.file)
    spec2 = _spec2_config(item)
    if spec2 is not None:  # spec 2.x: converted as the MCO converts a MachineConfig's config (ignition.spec2)
        item = _Input(item.name, item.text, spec2, Report())
    _emit_report(item.report, item.name)
    if item.config is None:
        return EXIT_INVALID
    try:
        if spec2 is not None:
            result, report = to_spec3(spec2, args.to)
        else:
            result, report = translate_with_report(item.config, args.to)
    except IgnitionError as exc:
        _emit_report(item.about_me(exc.report), item.name)
        if not exc.report.entries:
            print(f"mco: {exc}", file=sys.stderr)
        return EXIT_INVALID
    _emit_report(item.about_me(report), item.name)
    if not _validated(result, f"{item.name} as {args.to}"):
        return EXIT_INVALID
    _emit_result(result, args.pretty)
    return EXIT_OK
