"""Run every benchmark script in bench/ (each prints its own figures and ratios against its reference)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    """Run bench/*_bench.py one after another; exit non-zero if any script failed."""
    here = Path(__file__).resolve().parent
    failed = []
    for script in sorted(here.glob("*_bench.py")):
        print(f"== {script.name}", flush=True)
        if subprocess.run([sys.executable, str(script)], cwd=here.parent).returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
