"""Spec 3.0.0 <-> 3.1.0 (Ignition 2.3.0).

Up: config references, CAs and file contents became the one `Resource` type; in JSON nothing changes but
the version. Down: 3.0 has no `httpHeaders`, no `compression` on config references and CAs, no
`ignition.proxy`, no `filesystems[].mountOptions` (generic refusal), and only `sha512-` hashes.
"""

from __future__ import annotations

from typing import Any

from ignition import schema
from ignition.translations.common import CODE_UNSUPPORTED, Context, copy_down, find, with_version

FROM = "3.0.0"
TO = "3.1.0"


def up(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.0.0 -> 3.1.0: the version string only."""
    return with_version(config, TO)


def down(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.1.0 -> 3.0.0: refuse 3.1-only fields and sha256 hashes."""
    for field_path in sorted(p for p in schema.fields(TO) if p.endswith("verification.hash")):
        for path, value in find(config, field_path):
            if isinstance(value, str) and value.split("-", 1)[0] == "sha256":
                ctx.report.error(
                    CODE_UNSUPPORTED, path, f"sha256 hashes are not supported in spec {ctx.target}"
                )
    return copy_down(config, TO, FROM, ctx)
