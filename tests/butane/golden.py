"""Run one golden case of `mco butane` (shared by the test and by `python -m tests.butane.golden`).

A case is a directory under cases/: `input.bu`, optional `args` (extra flags, one line) and `files/` (passed
as `--files-dir files`, run from the case directory so messages name stable paths), and the expected
`expected.out` (stdout), `expected.err` (stderr) and `expected.rc` (exit code).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

CASES = Path(__file__).resolve().parent / "cases"


def run_case(case: Path) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of `mco butane` on a case."""
    from cli.main import main

    argv = ["butane"]
    args = case / "args"
    if args.exists():
        argv += args.read_text().split()
    if (case / "files").is_dir():
        argv += ["--files-dir", "files"]
    argv.append("input.bu")
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(case)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(cwd)
    return out.getvalue(), err.getvalue(), code


def regenerate(names: list[str]) -> None:
    """Rewrite the expected files of the named cases (review the diff before committing)."""
    for case in sorted(CASES.iterdir()):
        if names and case.name not in names:
            continue
        out, err, code = run_case(case)
        (case / "expected.out").write_text(out)
        (case / "expected.err").write_text(err)
        (case / "expected.rc").write_text(f"{code}\n")


if __name__ == "__main__":
    regenerate(sys.argv[1:])
