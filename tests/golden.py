"""Golden files: output that is data, compared byte for byte with the copy kept beside the test.

`MCO_UPDATE_GOLDEN=1` rewrites the files from what the code gives now (then review the diff before
committing it: a golden file is only as right as the review it got).
"""

from __future__ import annotations

import os
from pathlib import Path

UPDATE = os.environ.get("MCO_UPDATE_GOLDEN") == "1"


def assert_golden(golden: Path, data: bytes | str) -> None:
    """`data` equals the golden file's bytes (text is compared as UTF-8)."""
    raw = data.encode() if isinstance(data, str) else data
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(raw)
    assert raw == golden.read_bytes(), f"{golden} differs (MCO_UPDATE_GOLDEN=1 to refresh, then review the diff)"
