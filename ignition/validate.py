"""Validation: every rule Ignition enforces for a spec version, over a normalized document (ignition/decode.py).

Order of the walk follows Ignition's: the per-type `Validate()` rules (ignition/rules/*), the whole-config rule
(the systemd path conflict, Ignition 2.15+), then duplicates. All entries are collected; the caller decides.
`validate_dict` is the entry point for plain dicts (no line:col); `ignition.parse` adds positions.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cache, lru_cache
from typing import Any

from ignition.common_shape import common_shape_report
from ignition.decode import CONTEXT_MISMATCH, Accept, AcceptList, DupDict, decode
from ignition.parse import _version_stub, match_version
from ignition.report import ERROR, WARNING, Entry, Report, path_str
from ignition.rules.context import Ctx
from ignition.rules.disks import check_disk, check_filesystem, check_raid
from ignition.rules.dups import check_dups
from ignition.rules.ignition_section import check_ignition
from ignition.rules.luks import check_luks
from ignition.rules.nodes import check_directories, check_files, check_links, check_storage_links
from ignition.rules.plain import plain_directories, plain_directory, plain_file, plain_files
from ignition.rules.systemd import check_systemd_path_conflicts, check_units
from ignition.schema import node, root

# a pure function of the string, and every config of a cluster names one of a few versions
_match_version = lru_cache(maxsize=64)(match_version)
# check_ignition looks at these members only (the version is the parser's); the storage members checked
# after files (each of their rules finds nothing in an absent or empty list)
_IGNITION_CHECKED = frozenset({"config", "security", "proxy"})
_STORAGE_REST = frozenset({"filesystems", "links", "luks", "raid"})


def _by_item_node(version: str, files: Any, directories: Any) -> dict[int, Any]:
    """id(item node of storage.files / storage.directories) -> the given test, for the nodes `version` has."""
    tests: dict[int, Any] = {}
    for path, test in (("storage.files[]", files), ("storage.directories[]", directories)):
        item = node(version, path)
        if item is not None:
            tests[id(item)] = test
    return tests


@cache
def plain_tests(version: str) -> Mapping[int, Accept]:
    """id(item node) -> the plain-entry test, for the lists decode may pass through (ignition/rules/plain.py)."""
    return _by_item_node(version, plain_file, plain_directory)


@cache
def plain_list_tests(version: str) -> Mapping[int, AcceptList]:
    """id(item node) -> the whole-list form of `plain_tests`' test (decode's `accept_lists`)."""
    return _by_item_node(version, plain_files, plain_directories)


def validate_normalized(doc: Mapping[str, Any], version: str, *, plain: frozenset[int] | set[int] = frozenset(),
                        whole: frozenset[int] | set[int] = frozenset()) -> Report:
    """All rule entries for a document already decoded for `version` (no unused-key warnings here).

    `plain`: id() of files and directories known to pass every per-entry rule (decode's `accepted`);
    they skip those rules, the whole-config ones (duplicates, links, systemd path conflicts) still see them.
    `whole`: id() of lists in `doc` whose items are all such (decode's `whole`): not even walked."""
    ctx = Ctx(version)
    ign = doc.get("ignition")
    if ign and not _IGNITION_CHECKED.isdisjoint(ign):
        check_ignition(ign, ctx)
    storage = doc.get("storage")
    if storage:
        check_storage_links(storage, ctx)
        dirs = storage.get("directories")
        if dirs and id(dirs) not in whole:
            check_directories(dirs, ctx, plain)
        disk_list = storage.get("disks")
        if disk_list:
            for i, disk in enumerate(disk_list):
                check_disk(i, disk, ctx)
        files = storage.get("files")
        if files and id(files) not in whole:
            check_files(files, ctx, plain)
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
    check_dups(dict(doc), root(version), (), ctx, plain, whole)
    return Report(ctx.entries)


def _folds_elsewhere(obj: Any, name: str) -> bool:
    """True when `obj` (a JSON object) has a key other than `name` that Go's field matching also gives `name`."""
    if type(obj) is dict and _USUAL_KEYS.issuperset(obj):
        return False  # the usual object: every key one of the spellings below, none of which folds to another
    if not isinstance(obj, Mapping):
        return False
    if type(obj) is DupDict:
        return True
    return any(key != name and isinstance(key, str) and key.lower() == name for key in obj)


# the root's and `ignition`'s own field names: no two of them are equal ignoring case (a test holds them to it)
_USUAL_KEYS = frozenset({"ignition", "storage", "systemd", "passwd", "kernelArguments",
                         "version", "config", "timeouts", "security", "proxy"})


def validate_dict(config: Mapping[str, Any], *, version: str | None = None,
                  known_plain: Collection[int] = (), per_entry: bool = False, plain_ids: bool = True,
                  plain_lists: bool = False) -> Report:
    """Validate an already-parsed JSON dict (no line:col); the version defaults to config["ignition"]["version"].

    `known_plain`: id()s of files and directories in `config` the caller knows to be plain (ignition/rules/
    plain.py) -- e.g. the renderer's copies of entries an earlier validation found plain; they skip the test.
    `per_entry`: test entries one at a time, never a whole list at once, and never take the common-shape
    route (ignition/common_shape.py): the reference route the tests compare both with (same verdict, slower).
    `plain_ids=False`: the caller will not read `Report.plain`, which the common-shape route may then leave
    empty instead of collecting thousands of ids. `plain_lists=True`: `Report.plain` may name a list whose every
    entry is plain by the list's own id (read it with `ignition.report.plain_covers`)."""
    if version is None:
        ign = config.get("ignition") if type(config) is dict or isinstance(config, Mapping) else None
        raw_version = ign.get("version") if type(ign) is dict or isinstance(ign, Mapping) else None
        if _folds_elsewhere(config, "ignition") or _folds_elsewhere(ign, "version"):
            # Go reads the version through every case variant of the keys, the last one winning
            raw_version, stub_error = _version_stub(config)
            if stub_error is not None:
                return Report([stub_error])
        if not isinstance(raw_version, str):
            return Report([Entry(ERROR, "version-invalid", ("ignition", "version"), "invalid config version (couldn't parse)")])
        found, problem = _match_version(raw_version)
        if found is None:
            code = "version-unsupported" if problem == "unsupported config version" else "version-invalid"
            return Report([Entry(ERROR, code, ("ignition", "version"), problem or "")])
        version = found
    known = known_plain if isinstance(known_plain, (set, frozenset)) else frozenset(known_plain)
    if not per_entry and (common := common_shape_report(config, version, known, plain_ids=plain_ids,
                                                                plain_lists=plain_lists)) is not None:
        return common  # the usual MachineConfig: the same report without the schema walk
    decoded = decode(dict(config), version, accept=plain_tests(version), known=known,
                     accept_lists=None if per_entry else plain_list_tests(version))
    if decoded.mismatch is not None:
        m = decoded.mismatch
        return Report([Entry(ERROR, "json-type", m.path, m.message())])
    report = validate_normalized(decoded.doc or {}, version, plain=decoded.accepted, whole=decoded.whole)
    report.plain = decoded.accepted
    for path in decoded.unused:
        report.entries.append(Entry(WARNING, "unused-key", path, f"unused key {path[-1]}"))
    for path in decoded.context:  # a null where Go has a struct value
        report.entries.append(Entry(WARNING, "context-mismatch", path, CONTEXT_MISMATCH.format(path_str(path))))
    return report
