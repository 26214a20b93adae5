"""Planning `systemd.units` into image entries (plan.py states the rules): unit files, dropins, masks, Ignition's
preset file and the enablement symlinks `systemctl enable` would make (units.py)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from imagebuild.plan_builder import FIRST_BOOT, REFUSED, Entry, PlanBuilder, items_of
from imagebuild.units import InstallSection, enablement_links, install_dropins, parse_install, split_instance


def plan_units(b: PlanBuilder, systemd: Mapping[str, Any], base: str) -> None:
    """Add the units, dropins, masks, preset lines and enablement links of `systemd` to the plan."""
    unit_dir = b.settings.unit_dir
    units = items_of(b, systemd, "units", base)
    contents: dict[str, str] = {u["name"]: u["contents"] for _, u in units
                                if isinstance(u.get("name"), str) and isinstance(u.get("contents"), str)
                                and not u.get("mask")}
    dropins: dict[str, dict[str, str]] = {}   # unit -> {drop-in name: contents}, for [Install] lines in drop-ins
    presets: dict[tuple[str, bool], list[str]] = {}
    to_enable: list[tuple[str, str, str]] = []   # (unit, its file, the config entry that enabled it)
    for i, unit in units:
        origin = f"{base}.units.{i}"
        name = unit.get("name")
        if not isinstance(name, str) or not name or "/" in name:
            b.problem(f"{origin}.name", "unit-name", REFUSED, "invalid unit name")
            continue
        path = posixpath.join(unit_dir, name)
        if unit.get("mask"):
            b.add(Entry(path, "symlink", 0o777, target="/dev/null", origin=origin))
        elif isinstance(unit.get("contents"), str):
            b.add(Entry(path, "file", 0o644, unit["contents"].encode(), origin=origin))
        for j, dropin in items_of(b, unit, "dropins", origin):
            if not isinstance(dropin.get("name"), str) or not dropin["name"] or "/" in dropin["name"]:
                b.problem(f"{origin}.dropins.{j}.name", "unit-name", REFUSED, "invalid dropin name")
            elif isinstance(dropin.get("contents"), str):
                b.add(Entry(posixpath.join(f"{path}.d", dropin["name"]), "file", 0o644,
                            dropin["contents"].encode(), origin=f"{origin}.dropins.{j}"))
                dropins.setdefault(name, {})[dropin["name"]] = dropin["contents"]
        enabled = unit.get("enabled")
        if enabled is None:
            continue
        template, instance = split_instance(name)
        key = (template if instance is not None else name, bool(enabled))
        presets.setdefault(key, [])
        if instance:
            presets[key].append(instance)
        file_name = name if name in contents else template if template in contents else ""
        if not file_name:
            (b.enable_base if enabled else b.disable_base).append(name)
            if not b.settings.engine:
                b.problem(f"{origin}.enabled", "unit-base", FIRST_BOOT,
                          f"{name} is not defined by this config; its {'en' if enabled else 'dis'}ablement is "
                          "left to the preset file, which systemd applies at first boot")
        elif enabled:
            to_enable.append((name, file_name, f"{origin}.enabled"))
    seen: set[str] = set()
    while to_enable:
        name, file_name, why = to_enable.pop(0)
        if name in seen:
            continue
        seen.add(name)
        install: InstallSection = parse_install(contents[file_name], *install_dropins(name, dropins))
        for link in enablement_links(name, install, unit_dir, file_name=file_name):
            b.add(Entry(link.path, "symlink", 0o777, target=link.target, origin=why))
        to_enable.extend((also, also, why) for also in install.also if also in contents)
    if presets:
        lines = []
        for (unit_name, enabled), instances in sorted(presets.items()):
            lines.append(" ".join(["enable" if enabled else "disable", unit_name, *sorted(set(instances))]))
        b.add(Entry(b.settings.preset_file, "file", 0o644, ("\n".join(lines) + "\n").encode(),
                    origin=f"{base}.units"))
