"""Where the real external tools live for the tests (installed by scripts/install-deps.sh).

`real_tool(name)` returns the path of a tool; when it is missing, the test is skipped locally but
fails when MCO_REQUIRE_TOOLS=1 (set by `make test`, so CI never silently skips a real-tool test).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IGNITION_ROOT = Path(os.environ.get("MCO_IGNITION_ROOT", ROOT / ".deps" / "ignition"))

_KNOWN = {
    "ignition-validate": IGNITION_ROOT / "usr/bin/ignition-validate",
    "ignition": IGNITION_ROOT / "usr/lib/dracut/modules.d/30ignition/ignition",
}


def real_tool(name: str) -> Path:
    """Path of a real tool, or skip/fail the calling test when it is not installed."""
    candidate = _KNOWN.get(name)
    found = str(candidate) if candidate and candidate.exists() else shutil.which(name)
    if found:
        return Path(found)
    message = f"real tool {name!r} not installed (run scripts/install-deps.sh)"
    if os.environ.get("MCO_REQUIRE_TOOLS") == "1":
        pytest.fail(message)
    pytest.skip(message)
