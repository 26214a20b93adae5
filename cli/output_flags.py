"""The output flags every `mco` command spells alike, as kubectl does.

    -o, --output FORMAT   what to print (json, yaml, text: the command lists its own)
    --output-file FILE    write the result to FILE instead of stdout
    --out-dir DIR         write the results into directory DIR (`mco image build`'s build context)
    --output-layout REF   write an image into an OCI layout (`mco image build`)

A command registers them here, so that `-o` never means a path. The spellings older releases used
(`mco butane -o FILE`, `mco ignition pointer -o FILE`, `--format FORMAT`, `mco diff --json`,
`mco image build --output oci:DIR:TAG`, `mco image build --context DIR`) still work for one release: they
print a deprecation warning on stderr naming the new flag, and then do what they did.
"""

from __future__ import annotations

import argparse
import errno
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cli.errors import UsageError
from fleet.atomic import write_atomic

# `mco --help` prints this below the command list.
CONVENTION = """output flags, the same in every command:
  -o, --output FORMAT   output format (json, yaml or text; each command lists its own)
  --output-file FILE    write the result to FILE instead of stdout
  --out-dir DIR         write the results into directory DIR (mco image build's build context)
  --output-layout REF   write an image into an OCI layout (mco image build)
older spellings (-o FILE in mco butane and mco ignition pointer, --format, mco diff --json,
mco image build --output oci:DIR:TAG and --context DIR) still work in this release, with a warning on stderr."""


def warn_deprecated(old: str, new: str) -> None:
    """Tell the user on stderr that `old` is going away and `new` replaces it."""
    sys.stderr.write(f"mco: warning: {old} is deprecated and will be removed in the next release; use {new}\n")


class _Deprecated(argparse.Action):
    """An old spelling: warns, then stores what the new flag would store."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, replacement: str,
                 convert: Callable[[Any], Any] | None = None, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.replacement = replacement
        self.convert = convert

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        warn_deprecated(option_string or self.dest, self.replacement)
        value = self.const if self.nargs == 0 else values
        setattr(namespace, self.dest, self.convert(value) if self.convert else value)


class _FormatOrOldDestination(argparse.Action):
    """`--output` where an older release took a destination: a FORMAT, or (warned) a value with the old prefix."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, formats: tuple[str, ...],
                 old: tuple[str, str, str], **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.formats = formats
        self.old_prefix, self.old_dest, self.old_replacement = old

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if values in self.formats:
            setattr(namespace, self.dest, values)
        elif str(values).startswith(self.old_prefix):
            warn_deprecated(f"{option_string} {self.old_prefix}...", self.old_replacement)
            setattr(namespace, self.old_dest, values)
        else:
            parser.error(f"argument {option_string}: invalid choice: {values!r} (choose from {', '.join(self.formats)})")


def add_format(parser: argparse.ArgumentParser, choices: Sequence[str], default: str, *,
               what: str = "output format", old_destination: tuple[str, str, str] | None = None) -> None:
    """`-o/--output FORMAT`, stored as `args.output`.

    `old_destination` = (prefix, dest, new flag) for a command whose `--output` used to name a destination:
    a value with that prefix still goes to `dest`, with a warning naming the new flag.
    """
    help_text = f"{what}: {', '.join(choices)} (default: {default})"
    if old_destination is None:
        parser.add_argument("-o", "--output", choices=tuple(choices), default=default, metavar="FORMAT", help=help_text)
    else:
        parser.add_argument("-o", "--output", action=_FormatOrOldDestination, formats=tuple(choices),
                            old=old_destination, default=default, metavar="FORMAT", help=help_text)


def add_output_file(parser: argparse.ArgumentParser, *, help: str = "write the result to FILE instead of stdout",
                    old: Sequence[str] = ()) -> None:
    """`--output-file FILE`, stored as `args.output_file` (a Path); `old` are deprecated spellings of it."""
    parser.add_argument("--output-file", type=Path, metavar="FILE", help=help)
    if old:
        parser.add_argument(*old, dest="output_file", action=_Deprecated, replacement="--output-file",
                            convert=Path, metavar="FILE", help=argparse.SUPPRESS)


def add_out_dir(parser: argparse.ArgumentParser, *, help: str, old: Sequence[str] = ()) -> None:
    """`--out-dir DIR`, stored as `args.out_dir` (a Path); `old` are deprecated spellings of it."""
    parser.add_argument("--out-dir", type=Path, metavar="DIR", help=help)
    if old:
        parser.add_argument(*old, dest="out_dir", action=_Deprecated, replacement="--out-dir",
                            convert=Path, metavar="DIR", help=argparse.SUPPRESS)


def add_deprecated_format(parser: argparse.ArgumentParser, flag: str, choices: Sequence[str]) -> None:
    """`flag FORMAT` (an old spelling of `-o FORMAT`): warns, then sets `args.output`."""
    parser.add_argument(flag, dest="output", action=_Deprecated, replacement="-o FORMAT",
                        choices=tuple(choices), help=argparse.SUPPRESS)


def add_deprecated_switch(parser: argparse.ArgumentParser, flag: str, fmt: str) -> None:
    """A switch (`--json`) that meant `-o fmt`: warns, then sets `args.output` to `fmt`."""
    parser.add_argument(flag, dest="output", action=_Deprecated, replacement=f"-o {fmt}", nargs=0, const=fmt,
                        help=argparse.SUPPRESS)


def write_output(path: Path, text: str, *, mode: int | None = None) -> None:
    """`--output-file`: the whole result or nothing (written aside, then renamed), so a failed or interrupted run
    never leaves a half-written file where a script expects one; a path that cannot be written is a usage error
    naming the flag. The file keeps the mode it had (a new one: 0666 less the umask, as `open` would make it)
    unless `mode` is given; what is not a regular file (`/dev/stdout`, a pipe) is written in place."""
    target = Path(path)
    try:
        try:
            found = target.stat()
        except FileNotFoundError:
            found = None
        if found is None and not target.parent.is_dir():  # as `>` or `open` would: no directory is made
            raise FileNotFoundError(errno.ENOENT, f"no directory {target.parent}")
        if found is not None and not stat.S_ISREG(found.st_mode):
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)
            return
        if mode is None:
            mode = stat.S_IMODE(found.st_mode) if found is not None else 0o666 & ~_umask()
        write_atomic(target, text.encode(), mode=mode)
    except OSError as exc:
        raise UsageError(f"--output-file {path}: cannot write: {exc.strerror or exc}") from None


def _umask() -> int:
    """The process's umask (read by setting it and putting it back: the command line is single-threaded)."""
    current = os.umask(0o022)
    os.umask(current)
    return current
