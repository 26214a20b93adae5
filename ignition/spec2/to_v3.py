"""A de-duplicated spec-2 config converted to spec 3.0.0: Ignition's 2.2 -> 2.3 step, then ign-converter's
`v23tov30.Translate` with the MCO's filesystem map `{"root": "/"}` (MCO `convertIgnition22to3x`).

Refused as ign-converter refuses them (its `Check2_3`, messages in its words, each at the field):
deprecated fields (a partition's `size`/`start` -- every 2.2 partition carries them once translated to
2.3 --, a user's `create`), a `networkd` section, a filesystem other than `root` (the MCO maps no
other: `Config defined filesystem "X" but no mapping was defined...`), `mount.create` without `force`,
two entries for one path among files, directories and links, a duplicate dropin name in a unit, a node
under a link the config itself writes. Before that, Ignition's own spec-2 rules that spec 3 would
not catch in the same words: a node without `filesystem` (`no filesystem specified`) and a relative
path (`path not absolute`; the converter's path.Join would otherwise make it absolute).

The mapping, field by field (ign-converter's StrP/BoolP: an empty string or false becomes unset):
files default to `overwrite: true` (spec 2's default), `append: true` becomes `overwrite: false` with
the contents as the only `append` entry, `contents.source` is kept even when empty; paths are cleaned
like Go's path.Join; units get `enabled: true` for `enabled: true` or the old `enable: true`, and
`enabled: false` only when written so; `ignition.config.append` becomes `merge`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from ignition.report import Path, Report

NO_MAPPING = ("Config defined filesystem {!r} but no mapping was defined."
              "Please specify a path to be used as the filesystem mountpoint.")
_CODE = "spec2-convert"


def _strp(value: Any) -> Any:
    return value if value not in ("", None) else None


def _boolp(value: Any) -> Any:
    return True if value else None


def _clean(path: str) -> str:
    """Go's path.Join("/", p) for an absolute p: cleaned, with a single leading slash."""
    out = posixpath.normpath(path) if path else "/"
    return "/" + out.lstrip("/")


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != [] and value != {}:
        out[key] = value


def check(config: Mapping[str, Any], report: Report) -> None:
    """Ignition's spec-2 node rules and ign-converter's Check2_3 (see the module docstring)."""
    storage = config.get("storage") or {}
    for kind in ("files", "directories", "links"):
        for i, node in enumerate(storage.get(kind) or ()):
            if not node.get("filesystem"):
                report.error(_CODE, ("storage", kind, i, "filesystem"), "no filesystem specified")
            elif node["filesystem"] != "root":
                report.error(_CODE, ("storage", kind, i, "filesystem"), NO_MAPPING.format(node["filesystem"])
                             .replace("'", '"'))
            if not node.get("path", "").startswith("/"):
                report.error(_CODE, ("storage", kind, i, "path"), "path not absolute")
    for d, disk in enumerate(storage.get("disks") or ()):
        for p, _part in enumerate(disk.get("partitions") or ()):
            path: Path = ("storage", "disks", d, "partitions", p)
            report.error(_CODE, (*path, "size"), "Invalid input config: size is deprecated; use sizeMB instead")
            report.error(_CODE, (*path, "start"), "Invalid input config: start is deprecated; use startMB instead")
    for i, user in enumerate((config.get("passwd") or {}).get("users") or ()):
        if "create" in user:
            report.error(_CODE, ("passwd", "users", i, "create"), "Invalid input config: the create object has "
                         "been deprecated in favor of user-level options")
    if (config.get("networkd") or {}).get("units"):
        report.error(_CODE, ("networkd", "units"), "config includes deprecated networkd section - use Files instead")
    for i, fs in enumerate(storage.get("filesystems") or ()):
        name = fs.get("name", "")
        if name != "root":
            report.error(_CODE, ("storage", "filesystems", i, "name"), NO_MAPPING.format(name).replace("'", '"'))
        create = (fs.get("mount") or {}).get("create")
        if create is not None and not create.get("force"):
            report.error(_CODE, ("storage", "filesystems", i, "mount", "create"),
                         "Config must force filesystem creation in case `mount.create` object is defined.")
    _check_inodes(storage, report)
    for u, unit in enumerate((config.get("systemd") or {}).get("units") or ()):
        seen: set[str] = set()
        for d, dropin in enumerate(unit.get("dropins") or ()):
            name = dropin.get("name", "")
            if name in seen:
                report.error(_CODE, ("systemd", "units", u, "dropins", d, "name"),
                             f'Config has duplicate dropin name "{name}" in unit "{unit.get("name", "")}".  '
                             "All dropins must specify a unique `name`.")
            seen.add(name)


def _check_inodes(storage: Mapping[str, Any], report: Report) -> None:
    links = [_clean(link.get("path", "")) for link in storage.get("links") or ()]
    entries: dict[str, str] = {}
    for kind, label in (("files", "File"), ("directories", "Directory"), ("links", "Link")):
        for i, node in enumerate(storage.get(kind) or ()):
            path = _clean(node.get("path", ""))
            name = f"{label}: {path}"
            if path in entries:
                report.error(_CODE, ("storage", kind, i, "path"),
                             f'Config has conflicting inodes: "{entries[path]}" and "{name}".  '
                             "All files, directories and links must specify a unique `path`.")
                continue
            entries[path] = name
            used = next((link for link in links if path.startswith(link) and path != link), None)
            if used is not None:
                report.error(_CODE, ("storage", kind, i, "path"), f'{name} uses link defined in config "{used}". '
                             "Please use a link not defined in Storage:Links")


def _ref(ref: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"source": ref.get("source", "")}
    hash_ = (ref.get("verification") or {}).get("hash")
    if hash_ is not None:
        out["verification"] = {"hash": hash_}
    return out


def _node(node: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"path": _clean(node.get("path", ""))}
    for owner in ("user", "group"):
        given = node.get(owner) or {}
        value: dict[str, Any] = {}
        _put(value, "id", given.get("id"))
        _put(value, "name", _strp(given.get("name")))
        _put(out, owner, value)
    _put(out, "overwrite", node.get("overwrite"))
    return out


def _file(f: Mapping[str, Any]) -> dict[str, Any]:
    out = _node(f)
    out["overwrite"] = False if f.get("append") else f.get("overwrite", True)
    contents = f.get("contents") or {}
    c: dict[str, Any] = {}
    _put(c, "compression", _strp(contents.get("compression")))
    c["source"] = contents.get("source", "")
    hash_ = (contents.get("verification") or {}).get("hash")
    if hash_ is not None:
        c["verification"] = {"hash": hash_}
    if f.get("append"):
        out["append"] = [c]
    else:
        out["contents"] = c
    _put(out, "mode", f.get("mode"))
    return out


def _unit(u: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": u.get("name", "")}
    if u.get("enabled") or u.get("enable"):
        out["enabled"] = True
    if u.get("enabled") is False:
        out["enabled"] = False
    _put(out, "mask", _boolp(u.get("mask")))
    _put(out, "contents", _strp(u.get("contents")))
    dropins = []
    for d in u.get("dropins") or ():
        dropin = {"name": d.get("name", "")}
        _put(dropin, "contents", _strp(d.get("contents")))
        dropins.append(dropin)
    _put(out, "dropins", dropins)
    return out


def _user(u: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": u.get("name", "")}
    _put(out, "passwordHash", u.get("passwordHash"))
    _put(out, "sshAuthorizedKeys", list(u.get("sshAuthorizedKeys") or []))
    _put(out, "uid", u.get("uid"))
    for key in ("gecos", "homeDir", "primaryGroup", "shell"):
        _put(out, key, _strp(u.get(key)))
    for key in ("noCreateHome", "noUserGroup", "noLogInit", "system"):
        _put(out, key, _boolp(u.get(key)))
    _put(out, "groups", list(u.get("groups") or []))
    return out


def _group(g: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": g.get("name", "")}
    _put(out, "gid", g.get("gid"))
    _put(out, "passwordHash", _strp(g.get("passwordHash")))
    _put(out, "system", _boolp(g.get("system")))
    return out


def _disk(d: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"device": d.get("device", "")}
    _put(out, "wipeTable", _boolp(d.get("wipeTable")))
    parts = []
    for p in d.get("partitions") or ():
        part: dict[str, Any] = {"label": p.get("label", "")}
        _put(part, "number", p.get("number"))
        _put(part, "typeGuid", _strp(p.get("typeGuid")))
        _put(part, "guid", _strp(p.get("guid")))
        parts.append(part)
    _put(out, "partitions", parts)
    return out


def _raid(r: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": r.get("name", ""), "level": r.get("level", ""),
                           "devices": list(r.get("devices") or [])}
    _put(out, "spares", r.get("spares") or None)
    _put(out, "options", list(r.get("options") or []))
    return out


def convert(config: Mapping[str, Any]) -> dict[str, Any]:
    """The spec 3.0.0 config for a checked, de-duplicated spec-2 config (see `check`)."""
    ign = config.get("ignition") or {}
    out_ign: dict[str, Any] = {"version": "3.0.0"}
    cfg = ign.get("config") or {}
    refs: dict[str, Any] = {}
    if "replace" in cfg:
        refs["replace"] = _ref(cfg["replace"])
    _put(refs, "merge", [_ref(r) for r in cfg.get("append") or ()])
    _put(out_ign, "config", refs)
    cas = [_ref(r) for r in ((ign.get("security") or {}).get("tls") or {}).get("certificateAuthorities") or ()]
    if cas:
        out_ign["security"] = {"tls": {"certificateAuthorities": cas}}
    _put(out_ign, "timeouts", dict(ign.get("timeouts") or {}))
    out: dict[str, Any] = {"ignition": out_ign}
    passwd = config.get("passwd") or {}
    out_passwd: dict[str, Any] = {}
    _put(out_passwd, "users", [_user(u) for u in passwd.get("users") or ()])
    _put(out_passwd, "groups", [_group(g) for g in passwd.get("groups") or ()])
    _put(out, "passwd", out_passwd)
    _put(out, "systemd", {"units": [_unit(u) for u in (config.get("systemd") or {}).get("units") or ()]}
         if (config.get("systemd") or {}).get("units") else None)
    storage = config.get("storage") or {}
    out_storage: dict[str, Any] = {}
    _put(out_storage, "disks", [_disk(d) for d in storage.get("disks") or ()])
    _put(out_storage, "raid", [_raid(r) for r in storage.get("raid") or ()])
    _put(out_storage, "files", [_file(f) for f in storage.get("files") or ()])
    _put(out_storage, "directories", [{**_node(d), **({"mode": d["mode"]} if "mode" in d else {})}
                                      for d in storage.get("directories") or ()])
    links = []
    for link in storage.get("links") or ():
        entry = {**_node(link), "target": link.get("target", "")}
        _put(entry, "hard", _boolp(link.get("hard")))
        links.append(entry)
    _put(out_storage, "links", links)
    _put(out, "storage", out_storage)
    return out
