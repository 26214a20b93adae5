"""(Reference copy, see __init__.py.) Validation: every rule Ignition enforces for a spec version, over a normalized document (ignition/decode.py).

Order of the walk follows Ignition's: the per-type `Validate()` rules (ignition/rules/*), the whole-config rule
(the systemd path conflict, Ignition 2.15+), then duplicates. All entries are collected; the caller decides.
`validate_dict` is the entry point for plain dicts (no line:col); `ignition.parse` adds positions.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cache
from typing import Any

from ignition.parse import match_version
from ignition.report import ERROR, WARNING, Entry, Report
from ignition.rules.context import Ctx
from ignition.rules.disks import check_disk, check_filesystem, check_raid
from ignition.rules.ignition_section import check_ignition
from ignition.rules.luks import check_luks
from ignition.rules.nodes import check_directories, check_files, check_links, check_storage_links
from ignition.rules.plain import plain_directory, plain_file
from ignition.schema import node, root
from tests.ignition.reference.decode import Accept, decode
from tests.ignition.reference.dups import check_dups
from tests.ignition.reference.systemd import check_systemd_path_conflicts, check_units


@cache
def plain_tests(version: str) -> Mapping[int, Accept]:
    """id(item node) -> the plain-entry test, for the lists decode may pass through (ignition/rules/plain.py)."""
    tests: dict[int, Accept] = {}
    for path, test in (("storage.files[]", plain_file), ("storage.directories[]", plain_directory)):
        item = node(version, path)
        if item is not None:
            tests[id(item)] = test
    return tests


def validate_normalized(doc: Mapping[str, Any], version: str, *, plain: frozenset[int] | set[int] = frozenset()) -> Report:
    """All rule entries for a document already decoded for `version` (no unused-key warnings here).

    `plain`: id() of files and directories known to pass every per-entry rule (decode's `accepted`);
    they skip those rules, the whole-config ones (duplicates, links, systemd path conflicts) still see them."""
    ctx = Ctx(version)
    check_ignition(doc.get("ignition") or {}, ctx)
    storage = doc.get("storage") or {}
    if storage:
        check_storage_links(storage, ctx)
        check_directories(storage.get("directories") or [], ctx, plain)
        for i, disk in enumerate(storage.get("disks") or ()):
            check_disk(i, disk, ctx)
        check_files(storage.get("files") or [], ctx, plain)
        disks = {d.get("device", ""): d for d in storage.get("disks") or ()}
        for i, fs in enumerate(storage.get("filesystems") or ()):
            check_filesystem(i, fs, disks, ctx)
        check_links(storage.get("links") or [], ctx)
        for i, luks in enumerate(storage.get("luks") or ()):
            check_luks(i, luks, ctx)
        for i, raid in enumerate(storage.get("raid") or ()):
            check_raid(i, raid, ctx)
    units = (doc.get("systemd") or {}).get("units") or []
    if units:
        check_units(units, ctx)
    check_systemd_path_conflicts(dict(doc), ctx)
    check_dups(dict(doc), root(version), (), ctx, plain)
    return Report(ctx.entries)


def validate_dict(config: Mapping[str, Any], *, version: str | None = None,
                  known_plain: Collection[int] = ()) -> Report:
    """Validate an already-parsed JSON dict (no line:col); the version defaults to config["ignition"]["version"].

    `known_plain`: id()s of files and directories in `config` the caller knows to be plain (ignition/rules/
    plain.py) -- e.g. the renderer's copies of entries an earlier validation found plain; they skip the test."""
    if version is None:
        ign = config.get("ignition") if isinstance(config, Mapping) else None
        raw_version = ign.get("version") if isinstance(ign, Mapping) else None
        if not isinstance(raw_version, str):
            return Report([Entry(ERROR, "version-invalid", ("ignition", "version"), "invalid config version (couldn't parse)")])
        found, problem = match_version(raw_version)
        if found is None:
            code = "version-unsupported" if problem == "unsupported config version" else "version-invalid"
            return Report([Entry(ERROR, code, ("ignition", "version"), problem or "")])
        version = found
    known = known_plain if isinstance(known_plain, (set, frozenset)) else frozenset(known_plain)
    decoded = decode(dict(config), version, accept=plain_tests(version), known=known)
    if decoded.mismatch is not None:
        m = decoded.mismatch
        return Report([Entry(ERROR, "json-type", m.path, m.message())])
    report = validate_normalized(decoded.doc or {}, version, plain=decoded.accepted)
    report.plain = decoded.accepted
    for path in decoded.unused:
        report.entries.append(Entry(WARNING, "unused-key", path, f"unused key {path[-1]}"))
    return report
