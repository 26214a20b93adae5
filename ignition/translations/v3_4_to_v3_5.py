"""Spec 3.4.0 <-> 3.5.0 (Ignition 2.20.0).

Up: the version string only. Down: 3.4 has no `luks[].cex` (generic refusal; ign-converter's v35tov34
drops `cex.enabled: true` silently because its check never recurses; this step refuses it).
"""

from __future__ import annotations

from typing import Any

from ignition.translations.common import Context, copy_down, with_version

FROM = "3.4.0"
TO = "3.5.0"


def up(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.4.0 -> 3.5.0: the version string only."""
    return with_version(config, TO)


def down(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.5.0 -> 3.4.0: refuse IBM CEX."""
    return copy_down(config, TO, FROM, ctx)
