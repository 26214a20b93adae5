"""systemd units and dropins (Ignition `types/unit.go`, `systemd.go`, and the whole-config path conflict rule)."""

from __future__ import annotations

import re
from itertools import repeat
from typing import Any

from ignition.rules.context import Ctx
from ignition.rules.paths import go_ext
from ignition.rules.unitfile import go_quote, unit_verdict

_INSTANCE = re.compile(r"(.+?)@(.+?)\.service")  # Go RE2: `.` does not match a newline
UNIT_EXTENSIONS = frozenset(
    ".service .socket .device .mount .automount .swap .target .path .timer .snapshot .slice .scope".split()
)


_UNIT_SUFFIXES = tuple(UNIT_EXTENSIONS)  # a name ending in one has it as its go_ext (one dot, no "/")


def check_units(units: list[dict[str, Any]], ctx: Ctx) -> None:
    """Unit.Validate, Dropin.Validate and the template-unit Install warning (Systemd.Validate)."""
    parsed: dict[str, tuple[bool, bool, bool]] = {}  # name -> (has contents, has [Install], parses)
    templated = False
    for i, unit in enumerate(units):
        name = unit.get("name", "")
        if not name.endswith(_UNIT_SUFFIXES) and go_ext(name) not in UNIT_EXTENSIONS:
            ctx.error(("systemd", "units", i, "name"), "invalid systemd unit extension")
        contents = unit.get("contents")
        error, has_install = unit_verdict(contents) if contents is not None else (None, False)
        if error is not None:
            ctx.error(("systemd", "units", i, "contents"), error)
        enabled = unit.get("enabled") is True
        if enabled and contents and error is None and not has_install:
            ctx.warn(("systemd", "units", i, "contents"),
                     f"unit {go_quote(name.encode('utf-8', 'surrogatepass'))} is enabled, but has no install section so enable does nothing")
        parsed[name] = (bool(contents), has_install, error is None)
        templated = templated or (enabled and "@" in name)
        dropins = unit.get("dropins")
        if dropins:
            for j, dropin in enumerate(dropins):
                dbase = ("systemd", "units", i, "dropins", j)
                if go_ext(dropin.get("name", "")) != ".conf":
                    ctx.error(dbase + ("name",), "invalid systemd drop-in extension")
                text = dropin.get("contents")
                if text is not None:
                    ctx.error(dbase + ("contents",), unit_verdict(text)[0])
    if not templated:
        return  # the warning below is about enabled template instances (`x@y.service`) only
    for i, unit in enumerate(units):
        name = unit.get("name", "")
        match = _INSTANCE.fullmatch(name)
        if unit.get("enabled") is not True or match is None:
            continue
        template = match.group(1) + "@.service"
        found = parsed.get(template)
        if found is not None and found[0] and found[2] and not found[1]:
            ctx.warn(
                ("systemd", "units", i, "contents"),
                f'template unit "{template}" for "{name}" doesn\'t have Install section',
            )


def check_systemd_path_conflicts(config: dict[str, Any], ctx: Ctx) -> None:
    """Config.Validate (Ignition 2.15+, every 3.x spec): no storage node at a unit's or dropin's own path."""
    units = (config.get("systemd") or {}).get("units") or []
    storage = config.get("storage") or {}
    if not units or not storage:
        return
    claimed: set[str] = set()
    for unit in units:
        name = unit.get("name", "")
        if unit.get("contents"):
            claimed.add("/etc/systemd/system/" + name)
        for dropin in unit.get("dropins") or ():
            if dropin.get("contents"):
                claimed.add(f"/etc/systemd/system/{name}.d/{dropin.get('name', '')}")
    if not claimed:
        return
    for kind in ("files", "directories", "links"):
        nodes = storage.get(kind)
        if not nodes or claimed.isdisjoint(map(dict.get, nodes, repeat("path"), repeat(""))):
            continue  # (a normalized document: nodes are dicts, paths strings)
        for i, node in enumerate(nodes):
            if node.get("path", "") in claimed:
                ctx.error(("storage", kind, i, "path"), "path conflicts with systemd unit or dropin")
