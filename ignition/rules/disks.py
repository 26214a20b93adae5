"""Disks, partitions, RAID and filesystems (Ignition `types/disk.go`, `partition.go`, `raid.go`, `filesystem.go`)."""

from __future__ import annotations

import re
from typing import Any

from ignition.rules.context import Ctx
from ignition.rules.paths import check_path

_GUID = re.compile(r"(|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})")
GUID_ERROR = 'doesn\'t match the form "01234567-89AB-CDEF-EDCB-A98765432101"'

RAID_LEVELS = frozenset("linear raid0 0 stripe raid1 1 mirror raid4 4 raid5 5 raid6 6 raid10 10".split())
_STRIPED = frozenset(("linear", "raid0", "0", "stripe"))
LABEL_LIMITS = {"ext4": 16, "btrfs": 256, "xfs": 12, "swap": 15, "vfat": 11}


def _check_partition(p: dict[str, Any], base: tuple[str | int, ...], ctx: Ctx) -> None:
    label = p.get("label")
    if p.get("shouldExist") is False and (
        label is not None
        or p.get("typeGuid")
        or p.get("guid")
        or p.get("startMiB") is not None
        or p.get("sizeMiB") is not None
    ):
        ctx.error(base, "shouldExist specified false with other options also specified")
    if p.get("number", 0) == 0 and label is None:
        ctx.error(base, "a partition number >= 1 or a label must be specified")
    if label is not None:
        if len(label.encode("utf-8")) > 36:
            ctx.error(base + ("label",), "partition labels may not exceed 36 characters")
        elif ":" in label:
            ctx.error(base + ("label",), "partition label will be truncated to text before the colon")
    for key in ("guid", "typeGuid"):
        value = p.get(key)
        if value is not None and not _GUID.fullmatch(value):
            ctx.error(base + (key,), GUID_ERROR)


def _overlap_index(parts: list[dict[str, Any]]) -> int | None:
    def placed(p: dict[str, Any]) -> bool:
        return p.get("startMiB") is not None and p.get("sizeMiB") is not None and p["startMiB"] != 0

    def end(p: dict[str, Any]) -> int:
        size = p["sizeMiB"]
        return p["startMiB"] if size == 0 else p["startMiB"] + size - 1

    for a, p in enumerate(parts):
        if not placed(p):
            continue
        for b, o in enumerate(parts):
            if a == b or not placed(o):
                continue
            ps, pe, os_, oe = p["startMiB"], end(p), o["startMiB"], end(o)
            if os_ <= ps <= oe or os_ <= pe <= oe or (ps < os_ and pe > oe):
                return b
    return None


def check_disk(i: int, disk: dict[str, Any], ctx: Ctx) -> None:
    """Disk.Validate and Partition.Validate."""
    base = ("storage", "disks", i)
    parts = disk.get("partitions") or []
    for j, p in enumerate(parts):
        _check_partition(p, base + ("partitions", j), ctx)
    device = disk.get("device", "")
    if device == "":
        ctx.error(base + ("device",), "disk device is required")
        return
    ctx.error(base + ("device",), check_path(device))
    seen: dict[int, int] = {}
    collide = None
    for j, p in enumerate(parts):
        number = p.get("number", 0)
        if number != 0:
            if number in seen and collide is None:
                collide = j
            seen.setdefault(number, j)
    if collide is not None:
        ctx.error(base + ("partitions", collide), "partition numbers collide")
    overlap = _overlap_index(parts)
    if overlap is not None:
        ctx.error(base + ("partitions", overlap), "partitions overlap")
    if any(p.get("shouldExist") is False for p in parts) and any(p.get("number", 0) == 0 for p in parts):
        ctx.error(base + ("partitions",), "shouldExist is false for a partition and other partition(s) has start or size 0")
    labels: set[str] = set()
    for j, p in enumerate(parts):
        label = p.get("label")
        if label is None:
            continue
        if label in labels:
            ctx.error(base + ("partitions", j), "cannot use the same partition label twice")
            break
        labels.add(label)


def check_raid(i: int, raid: dict[str, Any], ctx: Ctx) -> None:
    """Raid.Validate and each member device's path."""
    base = ("storage", "raid", i)
    level = raid.get("level")
    if ctx.since("3.3.0") and not level:
        ctx.error(base + ("level",), "raid level is required")
    else:
        level = level or ""
        if level not in RAID_LEVELS:
            ctx.error(base + ("level",), "unrecognized raid level")
        elif level in _STRIPED and raid.get("spares"):
            ctx.error(base + ("level",), "spares unsupported for linear and raid0 arrays")
    devices = raid.get("devices") or []
    if not devices:
        ctx.error(base + ("devices",), "raid devices required")
    for j, dev in enumerate(devices):
        ctx.error(base + ("devices", j), check_path(dev))


def _check_format(fs: dict[str, Any], ctx: Ctx) -> str | None:
    fmt = fs.get("format")
    if not fmt:
        if (
            fs.get("path")
            or fs.get("label")
            or fs.get("uuid")
            or fs.get("wipeFilesystem") is True
            or fs.get("mountOptions")
            or fs.get("options")
        ):
            return "format cannot be empty when path, label, uuid, wipeFilesystem, options, or mountOptions is specified"
        return None
    allowed = {"ext4", "btrfs", "xfs", "swap", "vfat"}
    if ctx.since("3.3.0"):
        allowed.add("none")
    if ctx.since("3.7.0-experimental"):
        allowed.add("virtiofs")
    if fmt not in allowed:
        return "invalid filesystem format"
    return None


def check_filesystem(i: int, fs: dict[str, Any], disks: dict[str, dict[str, Any]], ctx: Ctx) -> None:
    """Filesystem.Validate, plus the warnings cross-checked against `storage.disks`."""
    base = ("storage", "filesystems", i)
    path = fs.get("path")
    if path:
        ctx.error(base + ("path",), check_path(path))
    fmt = fs.get("format")
    device = fs.get("device", "")
    if fmt == "virtiofs" and ctx.since("3.7.0-experimental"):
        if device == "":
            ctx.error(base + ("device",), "device not specified")
        elif len(device.encode("utf-8")) > 36:
            ctx.error(base + ("device",), "virtiofs device tag cannot be longer than 36 bytes")
        if fs.get("label"):
            ctx.error(base + ("label",), "filesystem labels cannot be set when using virtiofs")
        if fs.get("uuid"):
            ctx.error(base + ("uuid",), "filesystem uuid cannot be set for non-block-device filesystems")
        if fs.get("wipeFilesystem") is True:
            ctx.error(base + ("wipeFilesystem",), "wipeFilesystem cannot be set for non-block-device filesystems")
        if fs.get("options"):
            ctx.error(base + ("options",), "filesystem options (mkfs) cannot be set for non-block-device filesystems")
    else:
        ctx.error(base + ("device",), check_path(device))
        label = fs.get("label")
        ctx.error(base + ("format",), _check_format(fs, ctx))
        if label:
            if not fmt:
                ctx.error(base + ("label",), "filesystem must specify format if label is specified")
            else:
                limit = LABEL_LIMITS.get(fmt)
                if limit is not None and len(label.encode("utf-8")) > limit:
                    ctx.error(
                        base + ("label",),
                        f"filesystem labels cannot be longer than {limit} characters when using {fmt}",
                    )
    disk = disks.get(device)
    if disk is not None:
        if disk.get("partitions"):
            ctx.warn(base + ("device",), "filesystem overwrites partitioned device")
        elif disk.get("wipeTable") is True and fs.get("wipeFilesystem") is not True:
            ctx.warn(base + ("device",), "device matches disk with wipeTable enabled; filesystem will be wiped")
