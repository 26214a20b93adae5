"""systemd unit enablement, computed offline: what `systemctl enable` would link, from a unit's [Install].

Ignition itself only writes `enable`/`disable` lines into a preset file, which systemd applies at *first boot*.
An image is also rolled onto machines that booted long ago, so the image carries the enablement symlinks too,
exactly as `systemctl --root=IMAGE enable UNIT` creates them (checked against the real systemctl in the tests):

- `WantedBy=T`   -> `<unitdir>/T.wants/<unit>`    -> `<unitdir>/<unit file>`
- `RequiredBy=T` -> `<unitdir>/T.requires/<unit>`
- `UpheldBy=T`   -> `<unitdir>/T.upholds/<unit>` (systemd >= 254)
- `Alias=A`      -> `<unitdir>/A`                 -> `<unitdir>/<unit file>`
- a template `foo@.service` is linked as `foo@<DefaultInstance>.service` (no DefaultInstance: no links);
  an instance `foo@bar.service` whose file is the template links the instance name to the template file.
- `Also=` names other units to enable; they are returned so the caller can enable them when it has them.
- [Install] lines in drop-ins count too: systemctl reads `<unit>.d/*.conf` (and an instance's `<template>.d/*.conf`)
  after the unit file (systemd src/shared/install.c unit_file_search), so `parse_install` takes them in order.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from ignition.rules.unitfile import UnitParseError, deserialize

_LIST_KEYS = ("WantedBy", "RequiredBy", "UpheldBy", "Alias", "Also")


@dataclass(frozen=True)
class InstallSection:
    """The parsed [Install] section of one unit file."""

    wanted_by: tuple[str, ...] = ()
    required_by: tuple[str, ...] = ()
    upheld_by: tuple[str, ...] = ()
    alias: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    default_instance: str = ""


@dataclass(frozen=True)
class Link:
    """One enablement symlink: `path` (absolute, inside the image) points at `target`."""

    path: str
    target: str


def parse_install(contents: str, *dropins: str) -> InstallSection:
    """Read the [Install] section of a unit file and then of its drop-ins (in the order given: see
    `install_dropins`) with the one unit-file reader (ignition/rules/unitfile.py, go-systemd's lexer), then
    systemd's rules for its values, across the files as within one: a continued line joins with a space, later
    assignments append, an empty assignment resets. A file the lexer refuses (validation has reported it)
    contributes nothing."""
    lists: dict[str, list[str]] = {k: [] for k in _LIST_KEYS}
    default_instance = ""
    options = []
    for text in (contents, *dropins):
        try:
            options.extend(deserialize(text))
        except UnitParseError:
            continue
    for option in options:
        if option.section != "Install":
            continue
        value = option.value.replace("\\\n", " ").strip()
        if option.name in lists:
            if value:
                lists[option.name].extend(value.split())
            else:
                lists[option.name].clear()
        elif option.name == "DefaultInstance":
            default_instance = value
    return InstallSection(
        wanted_by=tuple(lists["WantedBy"]),
        required_by=tuple(lists["RequiredBy"]),
        upheld_by=tuple(lists["UpheldBy"]),
        alias=tuple(lists["Alias"]),
        also=tuple(lists["Also"]),
        default_instance=default_instance,
    )


def install_dropins(name: str, dropins: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The drop-in texts `systemctl enable <name>` reads [Install] from, given {unit: {drop-in name: text}}:
    `<name>.d/*.conf`, plus `<template>.d/*.conf` for an instance, as one list sorted by file name, where
    the instance's file shadows the template's of the same name (install.c unit_file_search, conf_files_list)."""
    template, instance = split_instance(name)
    chosen: dict[str, str] = {}
    for unit in (name, template) if instance else (name,):
        for file_name, text in dropins.get(unit, {}).items():
            if file_name.endswith(".conf"):
                chosen.setdefault(file_name, text)
    return [chosen[k] for k in sorted(chosen)]


def split_instance(name: str) -> tuple[str, str | None]:
    """`foo@bar.service` -> (`foo@.service`, `bar`); `foo@.service` -> (`foo@.service`, ``); `foo.service` -> (name, None)."""
    stem, dot, suffix = name.rpartition(".")
    if "@" not in stem or not dot:
        return name, None
    prefix, _, instance = stem.partition("@")
    return f"{prefix}@.{suffix}", instance


def enablement_links(name: str, install: InstallSection, unit_dir: str, *, file_name: str = "") -> list[Link]:
    """The symlinks `systemctl enable <name>` creates when `<unit_dir>/<file_name>` (default: name) holds `install`."""
    template, instance = split_instance(name)
    linked_name = name
    if instance == "":
        if not install.default_instance:
            return []
        prefix, _, suffix = template.partition("@.")
        linked_name = f"{prefix}@{install.default_instance}.{suffix}"
    target = posixpath.join(unit_dir, file_name or name)
    links = []
    for targets, kind in ((install.wanted_by, ".wants"), (install.required_by, ".requires"),
                          (install.upheld_by, ".upholds")):
        for unit in targets:
            links.append(Link(posixpath.join(unit_dir, unit + kind, linked_name), target))
    for alias in install.alias:
        if alias != name:
            links.append(Link(posixpath.join(unit_dir, alias), target))
    return links
