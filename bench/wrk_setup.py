"""What the wrk benchmarks of `mco serve` share before they measure: the tools present, a scratch directory,
the real `mco serve` started the one way the tests start it (tests/serving.py), and everything stopped and
removed however the run ends."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.serving import Serve, mco_serve, stop  # noqa: E402


class WrkBench:
    """One run's scratch directory and the servers started in it."""

    def __init__(self, tmp: Path, cleanup: contextlib.ExitStack) -> None:
        self.tmp = tmp
        self._cleanup = cleanup

    def serve(self, cluster: Path, *args: str, ca: Path | None = None, timeout: float = 90.0, name: str = "") -> Serve:
        """`mco serve CLUSTER --store TMP/storeNAME ARGS`, its output in TMP/mcoNAME.log; stopped when the run ends
        (`name` tells apart two servers of one run)."""
        return self._cleanup.enter_context(mco_serve(str(cluster), "--store", str(self.tmp / f"store{name}"), *args,
                                                     ca=ca, log=self.tmp / f"mco{name}.log", timeout=timeout))

    def start(self, argv: list[str]) -> subprocess.Popen[bytes]:
        """Another server (nginx), its errors dropped; stopped when the run ends."""
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._cleanup.callback(_stop_running, proc)
        return proc


def _stop_running(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        stop(proc)


@contextmanager
def wrk_bench(prefix: str) -> Iterator[WrkBench]:
    """A scratch directory named `prefix`..., removed with every server started in it when the run ends."""
    with tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True) as name, contextlib.ExitStack() as cleanup:
        yield WrkBench(Path(name), cleanup)


def run_bench(prefix: str, tools: Sequence[str], measure: Callable[[WrkBench, argparse.Namespace], int],
              args: argparse.Namespace) -> int:
    """`measure`'s exit code in a fresh run named `prefix`, or 2 (said on stderr) when one of `tools` is missing."""
    missing = next((tool for tool in tools if not shutil.which(tool)), None)
    if missing:
        print(f"{missing} not installed (scripts/install-deps.sh)", file=sys.stderr)
        return 2
    with wrk_bench(prefix) as bench:
        return measure(bench, args)
