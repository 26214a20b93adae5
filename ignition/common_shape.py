"""The verdict on a config of the commonest shape, without the schema walk (`validate_dict`'s fast route).

Nearly every MachineConfig holds nothing but its version, plain files (and directories: ignition/rules/
plain.py), systemd units and their dropins, and users with SSH keys. For such a config decoding changes nothing and finds
no unused key, no duplicate-free list needs walking, and of all the rules only the unit rules, the systemd
path conflict and duplicate detection can say anything. `common_shape_report` recognises the shape in a few
type tests and runs exactly those rules, in the order `validate_normalized` runs them; for anything else --
another section, a key of another case, a null, an entry that is not plain, a duplicate -- it answers None
and the full route decides (tests/ignition/test_common_shape.py compares the two on generated configs).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, compress, repeat
from operator import not_
from typing import Any

from ignition.report import Report
from ignition.rules.context import Ctx
from ignition.rules.plain import plain_directories, plain_files
from ignition.rules.systemd import check_systemd_path_conflicts, check_units

_ROOT_KEYS = frozenset({"ignition", "passwd", "storage", "systemd"})
_STORAGE_KEYS = frozenset({"files", "directories"})
_USER_KEYS = frozenset({"name", "sshAuthorizedKeys"})
_STR = frozenset({str})
_UNIT_KEYS = frozenset({"name", "contents", "enabled", "mask", "dropins"})
# a unit's members and the one type each may have (bool for the flags: no null, no number)
_UNIT_TYPES = {"name": str, "contents": str, "enabled": bool, "mask": bool, "dropins": list}
_DROPIN_KEYS = frozenset({"name", "contents"})
_get: Callable[[dict[str, Any], str], Any] = dict.get


def _plain_list(entries: Any, test: Callable[[list[Any]], bool], known: frozenset[int] | set[int]) -> bool:
    """A list whose entries are all plain: vouched for by the caller (`known`) or passing `test` together."""
    if type(entries) is not list:
        return False
    if not entries:
        return True
    if known:  # the others, in order (C-level passes: the merged result's lists hold thousands)
        entries = list(compress(entries, map(not_, map(known.__contains__, map(id, entries)))))
    return not entries or test(entries)


def _plain_units(units: Any) -> bool:
    """Units that decode to themselves: members among name/contents/enabled/mask/dropins, a name, each member
    of its one JSON type; dropins with a name and maybe contents (strings), distinct names within the unit."""
    if type(units) is not list:
        return False
    for unit in units:
        if type(unit) is not dict or "name" not in unit or not _UNIT_KEYS.issuperset(unit):
            return False
        for key, value in unit.items():
            if type(value) is not _UNIT_TYPES[key]:
                return False
        dropins = unit.get("dropins")
        if dropins:
            for dropin in dropins:
                if type(dropin) is not dict or type(dropin.get("name")) is not str \
                        or not _DROPIN_KEYS.issuperset(dropin) or type(dropin.get("contents", "")) is not str:
                    return False
            if len({d["name"] for d in dropins}) != len(dropins):
                return False  # a duplicate: the full route names it
    return True


def _key_users(users: Any) -> bool:
    """Users holding only a name and distinct SSH keys (the MCO's `core`): no rule but duplicates reads them."""
    if type(users) is not list:
        return False
    for user in users:
        if type(user) is not dict or type(user.get("name")) is not str or not _USER_KEYS.issuperset(user):
            return False
        if "sshAuthorizedKeys" in user:
            keys = user["sshAuthorizedKeys"]
            if type(keys) is not list or not _STR.issuperset(map(type, keys)) or len(set(keys)) != len(keys):
                return False
    return True


def _only_list(config: dict[str, Any], section: str, member: str, test: Callable[[Any], bool]) -> list[Any] | None:
    """`config[section][member]` when the section is absent ([]) or holds that one list and it passes `test`;
    None otherwise (a null section too: Go warns "context tree does not match" there, the full route says so)."""
    if section not in config:
        return []
    block = config[section]
    if type(block) is not dict or not block.keys() <= {member}:
        return None
    items = block.get(member, [])
    return items if test(items) else None


def common_shape_report(config: Any, version: str, known: frozenset[int] | set[int], *,
                        plain_ids: bool = True, plain_lists: bool = False) -> Report | None:
    """The Report `validate_dict` gives for `config` (of spec `version`, already matched), when the config
    has the common shape and no duplicate; None otherwise. `known`: ids of entries vouched to be plain;
    `plain_ids=False` leaves `Report.plain` empty (the caller does not read it); `plain_lists` names the
    config's files and directories lists (all plain here) by their own ids (see `plain_covers`)."""
    if type(config) is not dict or not _ROOT_KEYS.issuperset(config):
        return None
    ignition = config.get("ignition")
    if type(ignition) is not dict or len(ignition) != 1 or type(ignition.get("version")) is not str:
        return None
    storage = config.get("storage")
    if storage is None and "storage" in config:
        return None  # Go warns of a null section ("context tree does not match"): the full route says so
    files: list[Any] = []
    directories: list[Any] = []
    if storage is not None:
        if type(storage) is not dict or not _STORAGE_KEYS.issuperset(storage):
            return None
        files = storage.get("files", files)
        directories = storage.get("directories", directories)
        if not _plain_list(files, plain_files, known) or not _plain_list(directories, plain_directories, known):
            return None
    units = _only_list(config, "systemd", "units", _plain_units)
    users = _only_list(config, "passwd", "users", _key_users)
    if units is None or users is None:
        return None
    # duplicates: files and directories share one key space (paths), units and users have theirs (names)
    paths = list(map(_get, chain(files, directories), repeat("path")))
    names = list(map(_get, units, repeat("name")))
    user_names = list(map(_get, users, repeat("name")))
    if len(set(paths)) != len(paths) or len(set(names)) != len(names) or len(set(user_names)) != len(user_names):
        return None  # the full route reports which entry, in Go's order
    ctx = Ctx(version)
    if units:
        check_units(units, ctx)
        if storage:
            check_systemd_path_conflicts(config, ctx)
    report = Report(ctx.entries)
    if plain_ids:
        if plain_lists:  # two ids, not one per entry (a storage section's own lists: never the [] defaults)
            accepted = frozenset(id(storage[name]) for name in ("files", "directories") if storage and name in storage)
        else:
            accepted = frozenset(map(id, chain(files, directories)))
        report.plain = accepted | known if known else accepted
    return report
