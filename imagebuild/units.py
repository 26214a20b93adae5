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
from dataclasses import dataclass, field

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


@dataclass
class _Acc:
    lists: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in _LIST_KEYS})
    default_instance: str = ""


def _logical_lines(text: str) -> list[str]:
    """Unit-file lines with comments dropped and backslash continuations joined."""
    out: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line[0] in "#;"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def parse_install(contents: str) -> InstallSection:
    """Read the [Install] section; later assignments append, an empty assignment resets (systemd rules)."""
    acc = _Acc()
    section = ""
    for line in _logical_lines(contents):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if section != "Install" or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if key in acc.lists:
            if value:
                acc.lists[key].extend(value.split())
            else:
                acc.lists[key].clear()
        elif key == "DefaultInstance":
            acc.default_instance = value
    return InstallSection(
        wanted_by=tuple(acc.lists["WantedBy"]),
        required_by=tuple(acc.lists["RequiredBy"]),
        upheld_by=tuple(acc.lists["UpheldBy"]),
        alias=tuple(acc.lists["Alias"]),
        also=tuple(acc.lists["Also"]),
        default_instance=acc.default_instance,
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
