"""Run `mco apply` and SIGKILL it at the Nth step of one phase of its journal (the kill campaign's aimed kills).

    python tests/applier/killpoint.py PHASE N -- ARGS...     (ARGS as for `mco apply`; N = 0 counts, never kills)

The real command runs in this process; the seams below only watch it, and at the Nth step of PHASE the
process kills itself with SIGKILL, exactly as an outside kill landing there would. With N = 0 it runs to the
end and prints the number of steps of each phase to stderr as one JSON line (`killpoint-counts {...}`).
Phases (the seams of applier/files.py, atomic.py and state.py):
  backup   after a pre-existing file's original was copied into orig/ (the file not yet overwritten)
  restore  after an original was copied back over its path
  remove   after a managed file was deleted
  marker   after a backup or no-original stamp was deleted
  temp     after a temp file was written and before its rename (a temp file is left behind)
  state    after a state file was written or pending.json removed
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

PHASES = ("backup", "restore", "remove", "marker", "temp", "state")


def install(phase: str, nth: int, counts: Counter[str]) -> None:
    """Wrap the seams: count every step, SIGKILL this process right after the `nth` step of `phase`."""
    import applier.files as files
    import applier.state as state
    import fleet.atomic as atomic

    def step(name: str) -> None:
        counts[name] += 1
        if name == phase and counts[name] == nth:
            os.kill(os.getpid(), signal.SIGKILL)

    marker_dirs: list[Path] = []
    real_init = state.StateDir.__init__

    def init(self: Any, path: Path) -> None:
        real_init(self, path)
        marker_dirs.extend([Path(path) / "orig", Path(path) / "noorig"])

    def is_marker(path: Path) -> bool:
        return any(path.is_relative_to(d) for d in marker_dirs)

    real_copy = files.copy_atomic

    def copy_atomic(src: Path, dst: Path) -> None:
        real_copy(src, dst)
        step("backup" if is_marker(Path(dst)) else "restore")

    real_replace = os.replace

    def replace(src: Any, dst: Any, **kw: Any) -> None:
        if atomic.TEMP_MARK in Path(src).name:
            step("temp")
        real_replace(src, dst, **kw)
        if is_marker(Path(src)) and not is_marker(Path(dst)):  # an original renamed back over its path
            step("restore")

    real_os_unlink = os.unlink

    def os_unlink(path: Any, **kw: Any) -> None:
        real_os_unlink(path, **kw)
        if str(path).endswith((".mcdorig", ".mcdnoorig")) and is_marker(Path(path)):
            step("marker")

    real_unlink = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        real_unlink(self, missing_ok=missing_ok)
        if self.name.endswith((".mcdorig", ".mcdnoorig")) and is_marker(self):
            step("marker")
        elif marker_dirs and not self.is_relative_to(marker_dirs[0].parent) and atomic.TEMP_MARK not in self.name:
            step("remove")

    real_write, real_clear = state.StateDir._write_json, state.StateDir.clear_pending

    def write_json(self: Any, name: str, data: Any) -> None:
        real_write(self, name, data)
        step("state")

    def clear_pending(self: Any) -> None:
        real_clear(self)
        step("state")

    state.StateDir.__init__ = init  # type: ignore[method-assign]
    files.copy_atomic = copy_atomic
    atomic.os.replace = replace  # type: ignore[assignment]
    files.os.unlink = os_unlink  # type: ignore[assignment]
    Path.unlink = unlink  # type: ignore[method-assign]
    state.StateDir._write_json = write_json  # type: ignore[method-assign]
    state.StateDir.clear_pending = clear_pending  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    """Install the seams, then run `mco apply ARGS` in this process."""
    if len(argv) < 3 or argv[0] not in PHASES or not argv[1].isdigit() or argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    counts: Counter[str] = Counter()
    install(argv[0], int(argv[1]), counts)
    if int(argv[1]) == 0:
        atexit.register(lambda: print("killpoint-counts " + json.dumps(dict(counts)), file=sys.stderr, flush=True))
    from cli.main import main as mco

    return mco(["apply", *argv[3:]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
