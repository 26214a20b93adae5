"""The command-runner seam: every external command (systemctl, ostree, rpm-ostree, bootc, hooks) goes through it.

`SubprocessRunner` runs for real; the tests' recording runner (tests/applier/doubles.py) stands in for it where
the real command cannot run here.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from applier.errors import PermanentError, TemporaryError


@dataclass(frozen=True)
class Result:
    """What a command did."""

    args: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        """True on exit status 0."""
        return self.returncode == 0


class CommandRunner(Protocol):
    """Runs a command and returns its result; raises TemporaryError on timeout, PermanentError if not found."""

    def run(self, args: Sequence[str], *, timeout: float | None = None, input: str | None = None) -> Result:
        """Run `args` (no shell)."""
        ...


class SubprocessRunner:
    """The real runner."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.env = dict(env) if env is not None else None

    def run(self, args: Sequence[str], *, timeout: float | None = None, input: str | None = None) -> Result:
        try:
            proc = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, input=input,
                                  env=self.env, check=False)
        except FileNotFoundError as exc:
            raise PermanentError(args[0], f"command not found: {exc.filename or args[0]}") from exc
        except subprocess.TimeoutExpired as exc:
            raise TemporaryError(args[0], f"timed out after {timeout} s: {' '.join(args)}") from exc
        return Result(tuple(args), proc.returncode, proc.stdout, proc.stderr)



def check(result: Result, what: str) -> Result:
    """Raise PermanentError naming `what` when the command failed."""
    if not result.ok:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise PermanentError(what, f"`{' '.join(result.args)}` failed (exit {result.returncode})"
                             + (f": {detail[-1]}" if detail else ""))
    return result
