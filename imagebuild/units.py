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
"""

from __future__ import annotations

import posixpath
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


def parse_install(contents: str) -> InstallSection:
    """Read the [Install] section with the one unit-file reader (ignition/rules/unitfile.py, go-systemd's
    lexer), then systemd's rules for its values: a continued line joins with a space, later assignments
    append, an empty assignment resets. A unit the lexer refuses (validation has reported it) enables nothing."""
    lists: dict[str, list[str]] = {k: [] for k in _LIST_KEYS}
    default_instance = ""
    try:
        options = deserialize(contents)
    except UnitParseError:
        options = []
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
