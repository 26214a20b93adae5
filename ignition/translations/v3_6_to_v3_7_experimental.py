"""Spec 3.6.0 <-> 3.7.0-experimental (Ignition HEAD; not frozen: it follows Ignition's experimental spec).

Up: the version string only. Down: 3.6 has no filesystem `format: "virtiofs"`.
"""

from __future__ import annotations

from typing import Any

from ignition.translations.common import CODE_UNSUPPORTED, Context, copy_down, find, with_version

FROM = "3.6.0"
TO = "3.7.0-experimental"


def up(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.6.0 -> 3.7.0-experimental: the version string only."""
    return with_version(config, TO)


def down(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.7.0-experimental -> 3.6.0: refuse virtiofs filesystems."""
    for path, value in find(config, "storage.filesystems[].format"):
        if value == "virtiofs":
            ctx.report.error(
                CODE_UNSUPPORTED, path, f'filesystem format "virtiofs" is not supported in spec {ctx.target}'
            )
    return copy_down(config, TO, FROM, ctx)
