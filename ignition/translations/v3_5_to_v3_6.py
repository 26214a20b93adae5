"""Spec 3.5.0 <-> 3.6.0 (Ignition 2.26.0): no new fields, two changes of meaning.

Up: setuid/setgid/sticky bits in `files[].mode` and `directories[].mode` are not functional before 3.6
(Ignition warns and ignores them), and Ignition's translator masks them off (`mode & ^07000`): this
step does the same and says so in a warning. Down: 3.5 would ignore those bits, so a mode that has them
is refused; so is a custom clevis pin other than tpm2, tang or sss, which 3.5 rejects.
"""

from __future__ import annotations

from typing import Any

from ignition.translations.common import CODE_MASKED, CODE_UNSUPPORTED, Context, copy_down, find, with_version

FROM = "3.5.0"
TO = "3.6.0"

SPECIAL_BITS = 0o7000
MODE_FIELDS = ("storage.files[].mode", "storage.directories[].mode")
OLD_PINS = frozenset({"tpm2", "tang", "sss"})


def up(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.5.0 -> 3.6.0: mask the special mode bits, as Ignition does."""
    out = with_version(config, TO)
    storage = config.get("storage")
    if not isinstance(storage, dict):
        return out
    new_storage = dict(storage)
    for kind in ("files", "directories"):
        items = storage.get(kind)
        if not isinstance(items, list):
            continue
        new_items = []
        for i, item in enumerate(items):
            mode = item.get("mode") if isinstance(item, dict) else None
            if isinstance(mode, int) and not isinstance(mode, bool) and mode & SPECIAL_BITS:
                masked = mode & ~SPECIAL_BITS
                ctx.report.warning(
                    CODE_MASKED,
                    ("storage", kind, i, "mode"),
                    f"setuid/setgid/sticky bits masked: mode 0{mode:o} became 0{masked:o} "
                    f"(not functional in spec {FROM}, honoured from {TO})",
                )
                item = {**item, "mode": masked}
            new_items.append(item)
        new_storage[kind] = new_items
    out["storage"] = new_storage
    return out


def down(config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """3.6.0 -> 3.5.0: refuse special mode bits and custom clevis pins 3.5 does not know."""
    for field_path in MODE_FIELDS:
        for path, mode in find(config, field_path):
            if isinstance(mode, int) and not isinstance(mode, bool) and mode & SPECIAL_BITS:
                ctx.report.error(
                    CODE_UNSUPPORTED,
                    path,
                    f"setuid/setgid/sticky bits are not supported in spec {ctx.target}",
                )
    for path, pin in find(config, "storage.luks[].clevis.custom.pin"):
        if isinstance(pin, str) and pin and pin not in OLD_PINS:
            ctx.report.error(
                CODE_UNSUPPORTED, path, f"clevis pin {pin!r} is not supported in spec {ctx.target}"
            )
    return copy_down(config, TO, FROM, ctx)
