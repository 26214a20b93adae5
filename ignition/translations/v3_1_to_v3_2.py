"""Spec 3.1.0 <-> 3.2.0 (Ignition 2.7.0).

Up: the version string only. Down: 3.1 has no `storage.luks`, no `partitions[].resize`, no
`shouldExist` on users and groups (generic refusal; `shouldExist: true` and `resize: false` are
defaults and are dropped), and no `gs://` sources.
"""

from __future__ import annotations

from typing import Any

from ignition.translations.common import Context, copy_down, refuse_scheme, with_version

FROM = "3.1.0"
TO = "3.2.0"


def up(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.1.0 -> 3.2.0: the version string only."""
    return with_version(config, TO)


def down(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.2.0 -> 3.1.0: refuse LUKS, resize, user/group deletion and gs:// sources."""
    refuse_scheme(config, TO, "gs", ctx)
    return copy_down(config, TO, FROM, ctx)
