"""Spec 3.2.0 <-> 3.3.0 (Ignition 2.11.0).

Up: Go swaps pointer and plain types (`clevis`, `custom.pin/config`, `links[].target`, `raid[].level`);
in JSON only the version changes. Down: 3.2 has no `kernelArguments` (generic refusal) and no
filesystem `format: "none"`.
"""

from __future__ import annotations

from typing import Any

from ignition.translations.common import CODE_UNSUPPORTED, Context, copy_down, find, with_version

FROM = "3.2.0"
TO = "3.3.0"


def up(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.2.0 -> 3.3.0: the version string only."""
    return with_version(config, TO)


def down(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.3.0 -> 3.2.0: refuse kernelArguments and format "none"."""
    for path, value in find(config, "storage.filesystems[].format"):
        if value == "none":
            ctx.report.error(
                CODE_UNSUPPORTED, path, f'filesystem format "none" is not supported in spec {ctx.target}'
            )
    return copy_down(config, TO, FROM, ctx)
