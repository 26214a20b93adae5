"""Running Debian's real Ignition 2.14 fetch stage on a config, for differential tests of merge and translation."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.tools import real_tool


def without_empties(value: Any) -> Any:
    """Go marshals every struct (empty ones too) and we leave empty ones out: compare without them."""
    if isinstance(value, dict):
        out = {k: without_empties(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in ({}, [])}
    if isinstance(value, list):
        return [without_empties(v) for v in value]
    return value


def fetch_stage(config: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """The config the real fetch stage caches (references rendered, translated up), without version and empties."""
    tool = real_tool("ignition")
    (workdir / "config.ign").write_text(json.dumps(config))
    cache = workdir / "ignition.json"
    cache.unlink(missing_ok=True)
    run = subprocess.run(
        [str(tool), "--platform", "file", "--stage", "fetch", "--log-to-stdout",
         "--config-cache", str(cache), "--state-file", str(workdir / "state"), "--neednet", str(workdir / "neednet")],
        env={"IGNITION_CONFIG_FILE": str(workdir / "config.ign"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout.decode()
    rendered = json.loads(cache.read_text())
    rendered["ignition"].pop("version")
    return without_empties(rendered)
