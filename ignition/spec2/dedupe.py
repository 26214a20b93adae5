"""Duplicate files, units and users removed from a spec-2 config before it is converted, as the MCO does.

MCO `pkg/controller/common/helpers.go: removeIgnDuplicateFilesUnitsUsers` (test
`TestRemoveIgnDuplicateFilesAndUnits`): spec 3 and the converter refuse duplicates that spec 2 allowed,
so before converting the MCO keeps, for each file path and unit name, the LAST entry, walking the list
from the end -- which leaves the kept entries in reverse order, as the MCO leaves them. A duplicate unit
adds those of its dropins whose names the kept unit lacks. Every user must be `core`
(`unexpected user with name: X. Only core user is supported`); the last one is kept, with the SSH keys
of the earlier ones appended (from the last but one backwards) and then de-duplicated, order kept.
Each kept entry remembers its index in the input, so problems found later name the field the user wrote.
"""

from __future__ import annotations

from typing import Any

from ignition.report import Report

# (section, list) -> for each entry of the result, the index of the input entry it came from
Origins = dict[tuple[str, str], list[int]]


def remove_duplicates(config: dict[str, Any], report: Report) -> tuple[dict[str, Any], Origins]:
    """The config without duplicate files, units and users, and where each kept entry came from."""
    out = dict(config)
    origins: Origins = {}
    storage = dict(config.get("storage") or {})
    files = storage.get("files") or []
    if files:
        seen: set[str] = set()
        kept, where = [], []
        for i in range(len(files) - 1, -1, -1):
            path = files[i].get("path", "")
            if path in seen:
                continue
            seen.add(path)
            kept.append(files[i])
            where.append(i)
        storage["files"] = kept
        origins[("storage", "files")] = where
        out["storage"] = storage
    systemd = dict(config.get("systemd") or {})
    units = systemd.get("units") or []
    if units:
        kept_units: list[dict[str, Any]] = []
        where = []
        gathered: set[int] = set()  # kept units that took dropins from a duplicate
        for i in range(len(units) - 1, -1, -1):
            name = units[i].get("name", "")
            first = next((u for u in kept_units if u.get("name", "") == name), None)
            if first is None:
                kept_units.append(dict(units[i]))
                where.append(i)
                continue
            names = {d.get("name", "") for d in first.get("dropins") or ()}
            for dropin in units[i].get("dropins") or ():
                if dropin.get("name", "") not in names:
                    first["dropins"] = [*(first.get("dropins") or ()), dropin]
                    names.add(dropin.get("name", ""))
                    gathered.add(kept_units.index(first))
        systemd["units"] = kept_units
        origins[("systemd", "units")] = where
        origins[("systemd", "gathered")] = sorted(gathered)
        out["systemd"] = systemd
    passwd = dict(config.get("passwd") or {})
    users = passwd.get("users") or []
    if users:
        for i in [len(users) - 1, *range(len(users) - 2, -1, -1)]:
            name = users[i].get("name", "")
            if name != "core":
                report.error("spec2-user", ("passwd", "users", i, "name"),
                             f"unexpected user with name: {name}. Only core user is supported")
                return config, {}
        last = dict(users[-1])
        keys = list(last.get("sshAuthorizedKeys") or [])
        for i in range(len(users) - 2, -1, -1):
            keys += users[i].get("sshAuthorizedKeys") or []
        if keys or "sshAuthorizedKeys" in last:
            last["sshAuthorizedKeys"] = list(dict.fromkeys(keys))
        passwd["users"] = [last]
        origins[("passwd", "users")] = [len(users) - 1]
        out["passwd"] = passwd
    return out, origins
