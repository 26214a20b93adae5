"""Spec 3.3.0 <-> 3.4.0 (Ignition 2.15.0).

Up: the version string only. Down: 3.3 has no `tang[].advertisement`, `luks[].discard` or
`luks[].openOptions` (generic refusal) and no `arn:` S3 sources.
"""

from __future__ import annotations

from typing import Any

from ignition.translations.common import Context, copy_down, refuse_scheme, with_version

FROM = "3.3.0"
TO = "3.4.0"


def up(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.3.0 -> 3.4.0: the version string only."""
    return with_version(config, TO)


def down(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.4.0 -> 3.3.0: refuse offline Tang, discard, open options and arn: sources."""
    refuse_scheme(config, TO, "arn", ctx)
    return copy_down(config, TO, FROM, ctx)
