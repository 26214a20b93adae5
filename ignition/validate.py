"""Validation: every rule Ignition enforces for a spec version, over a normalized document (ignition/decode.py).

Order of the walk follows Ignition's: the per-type `Validate()` rules (ignition/rules/*), the whole-config rule
(the systemd path conflict, Ignition 2.15+), then duplicates. All entries are collected; the caller decides.
`validate_dict` is the entry point for parsed dicts (no line:col); `ignition.parse.check` reads text and adds
positions, through the same steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ignition.config_version import config_version
from ignition.decode import CONTEXT_MISMATCH, Decoded, decode
from ignition.report import ERROR, WARNING, Entry, Report, path_str
from ignition.rules.context import Ctx
from ignition.rules.disks import check_disk, check_filesystem, check_raid
from ignition.rules.dups import check_dups
from ignition.rules.ignition_section import check_ignition
from ignition.rules.luks import check_luks
from ignition.rules.nodes import check_directories, check_files, check_links, check_storage_links
from ignition.rules.systemd import check_systemd_path_conflicts, check_units
from ignition.schema import root

# check_ignition looks at these members only (the version is the parser's); the storage members checked
# after files (each of their rules finds nothing in an absent or empty list)
_IGNITION_CHECKED = frozenset({"config", "security", "proxy"})
_STORAGE_REST = frozenset({"filesystems", "links", "luks", "raid"})


def validate_normalized(doc: Mapping[str, Any], version: str) -> Report:
    """All rule entries for a document already decoded for `version` (no unused-key warnings here)."""
    ctx = Ctx(version)
    ign = doc.get("ignition")
    if ign and not _IGNITION_CHECKED.isdisjoint(ign):
        check_ignition(ign, ctx)
    storage = doc.get("storage")
    if storage:
        check_storage_links(storage, ctx)
        dirs = storage.get("directories")
        if dirs:
            check_directories(dirs, ctx)
        disk_list = storage.get("disks")
        if disk_list:
            for i, disk in enumerate(disk_list):
                check_disk(i, disk, ctx)
        files = storage.get("files")
        if files:
            check_files(files, ctx)
        if not _STORAGE_REST.isdisjoint(storage):
            disks = {d.get("device", ""): d for d in disk_list or ()}
            for i, fs in enumerate(storage.get("filesystems") or ()):
                check_filesystem(i, fs, disks, ctx)
            check_links(storage.get("links") or [], ctx)
            for i, luks in enumerate(storage.get("luks") or ()):
                check_luks(i, luks, ctx)
            for i, raid in enumerate(storage.get("raid") or ()):
                check_raid(i, raid, ctx)
    systemd = doc.get("systemd")
    units = systemd.get("units") if systemd else None
    if units:
        check_units(units, ctx)
        if storage:
            check_systemd_path_conflicts(dict(doc), ctx)
    check_dups(dict(doc), root(version), (), ctx)
    return Report(ctx.entries)


def validate_decoded(decoded: Decoded, version: str) -> Report:
    """Step 5 of the pipeline (ignition/parse.py) for a document decoded without a type error: the rules' entries, then the
    unused-key and context-tree warnings decoding found."""
    report = validate_normalized(decoded.doc or {}, version)
    for path in decoded.unused:
        report.entries.append(Entry(WARNING, "unused-key", path, f"unused key {path[-1]}"))
    for path in decoded.context:  # a null where Go has a struct value
        report.entries.append(Entry(WARNING, "context-mismatch", path, CONTEXT_MISMATCH.format(path_str(path))))
    return report


def validate_dict(config: Mapping[str, Any], *, version: str | None = None) -> Report:
    """Validate an already-parsed JSON dict (no line:col); the version defaults to the one the config declares,
    read as Ignition reads it (ignition/config_version.py)."""
    doc: Any = config if type(config) is dict or not isinstance(config, Mapping) else dict(config)
    if version is None:
        version, error = config_version(doc)
        if error is not None or version is None:
            return Report([error] if error is not None else [])
    decoded = decode(doc, version)
    if decoded.mismatch is not None:
        m = decoded.mismatch
        return Report([Entry(ERROR, "json-type", m.path, m.message())])
    return validate_decoded(decoded, version)
