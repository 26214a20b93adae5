"""What changed between two rendered configs: the input of the disruption rules, `mco diff` and the applier's plan.

Pure (no I/O). Mirrors the MCD's `newMachineConfigDiff` (MCO `pkg/daemon/update.go`): files and units are compared
as whole entries keyed by path / name; kernel arguments are compared as the spec's raw list (`nil` ≡ empty), as
`reflect.DeepEqual` does there, so the same arguments grouped or spaced differently still count as a change (only
the backends split them, for the kargs commands); the kernel type is canonicalised (anything but `realtime` /
`64k-pages` is `default`); the OS image and FIPS flag are compared as strings / booleans.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet.errors import PathError
from fleet.rendered import MachineConfigSpec
from ignition.resource import ResourceError, read_resource
from ignition.rules.urls import scheme_of

KERNEL_TYPES = ("default", "realtime", "64k-pages")


@dataclass(frozen=True)
class SetChange:
    """Names (paths, unit names, keys) added, removed or changed, each sorted."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    @property
    def all(self) -> tuple[str, ...]:
        """Every name touched, sorted."""
        return tuple(sorted({*self.added, *self.removed, *self.changed}))

    def to_dict(self) -> dict[str, list[str]]:
        """JSON form."""
        return {"added": list(self.added), "removed": list(self.removed), "changed": list(self.changed)}


@dataclass(frozen=True)
class ListChange:
    """An ordered list (kernel arguments, extensions) before and after."""

    old: tuple[str, ...] = ()
    new: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.old != self.new

    @property
    def added(self) -> tuple[str, ...]:
        """Entries of `new` not in `old` (in `new`'s order)."""
        return tuple(a for a in self.new if a not in self.old)

    @property
    def removed(self) -> tuple[str, ...]:
        """Entries of `old` not in `new` (in `old`'s order)."""
        return tuple(a for a in self.old if a not in self.new)

    def to_dict(self) -> dict[str, list[str]]:
        """JSON form."""
        return {"old": list(self.old), "new": list(self.new), "added": list(self.added),
                "removed": list(self.removed)}


@dataclass(frozen=True)
class ValueChange:
    """A scalar (OS image, kernel type, FIPS) before and after; present only when they differ."""

    old: Any
    new: Any

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"old": self.old, "new": self.new}


@dataclass(frozen=True)
class ConfigDiff:
    """Everything that differs between an old and a new MachineConfig spec.

    `files`, `units` and `dropins` (named `<unit>/<dropin>`) hold names; a unit whose drop-ins changed is
    also listed in `units.changed`, as in the MCO where a unit is compared as one struct. `old_files` /
    `new_files` hold the Ignition entries of every touched path, so rules that look at contents (the
    registries.conf safety check) need nothing else.
    """

    files: SetChange = SetChange()
    units: SetChange = SetChange()
    dropins: SetChange = SetChange()
    passwd: bool = False
    ssh_keys: SetChange = SetChange()
    kernel_arguments: ListChange = ListChange()
    kernel_type: ValueChange | None = None
    extensions: ListChange = ListChange()
    os_image: ValueChange | None = None
    fips: ValueChange | None = None
    old_files: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    new_files: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when nothing at all differs (the fleet page's diff says so: templates/diff.html.j2)."""
        return not (self.files or self.units or self.passwd or self.kernel_arguments or self.kernel_type
                    or self.extensions or self.os_image or self.fips)

    @property
    def os_changes(self) -> tuple[str, ...]:
        """Names of the OS-level changes (each needs a reboot), in MCO's order."""
        names = []
        if self.os_image:
            names.append("osImageURL")
        if self.kernel_arguments:
            names.append("kernelArguments")
        if self.fips:
            names.append("fips")
        if self.kernel_type:
            names.append("kernelType")
        if self.extensions:
            names.append("extensions")
        return tuple(names)

    def to_dict(self) -> dict[str, Any]:
        """JSON form for `mco diff --json`."""
        return {
            "files": self.files.to_dict(),
            "units": self.units.to_dict(),
            "dropins": self.dropins.to_dict(),
            "passwd": self.passwd,
            "sshKeys": self.ssh_keys.to_dict(),
            "kernelArguments": self.kernel_arguments.to_dict(),
            "kernelType": self.kernel_type.to_dict() if self.kernel_type else None,
            "extensions": self.extensions.to_dict(),
            "osImageURL": self.os_image.to_dict() if self.os_image else None,
            "fips": self.fips.to_dict() if self.fips else None,
        }

    def summary(self) -> list[str]:
        """Human lines, one per change (`+ file /etc/x`, `~ unit a.service`, `kernelType: default -> realtime`)."""
        lines: list[str] = []
        for kind, change in (("file", self.files), ("unit", self.units), ("dropin", self.dropins),
                             ("ssh key", self.ssh_keys)):
            lines += [f"+ {kind} {n}" for n in change.added]
            lines += [f"- {kind} {n}" for n in change.removed]
            lines += [f"~ {kind} {n}" for n in change.changed]
        lines += [f"+ karg {a}" for a in self.kernel_arguments.added]
        lines += [f"- karg {a}" for a in self.kernel_arguments.removed]
        lines += [f"+ extension {e}" for e in self.extensions.added]
        lines += [f"- extension {e}" for e in self.extensions.removed]
        for name, value in (("osImageURL", self.os_image), ("kernelType", self.kernel_type), ("fips", self.fips)):
            if value:
                lines.append(f"{name}: {value.old!r} -> {value.new!r}")
        return lines


def split_kernel_args(args: Iterable[str]) -> tuple[str, ...]:
    """Split kernel argument entries as MCO does (pkg/daemon/update.go splitKernelArguments): whitespace
    separates, `"` toggles quoting."""
    out: list[str] = []
    for entry in args:
        current: list[str] = []
        quoted = False
        for ch in entry:
            if ch == '"':
                quoted = not quoted
                current.append(ch)
            elif ch.isspace() and not quoted:
                if current:
                    out.append("".join(current))
                current = []
            else:
                current.append(ch)
        if current:
            out.append("".join(current))
    return tuple(out)


def canonical_kernel_type(value: str) -> str:
    """MCO's canonical kernel type: `realtime`, `64k-pages`, or `default` for anything else."""
    return value if value in ("realtime", "64k-pages") else "default"


def normalised(value: Any) -> Any:
    """A JSON value as Go's typed structs compare it: absent, null and empty lists/objects are equal."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            n = normalised(v)
            if n is None or n == [] or n == {}:
                continue
            out[k] = n
        return out
    if isinstance(value, list | tuple):
        return [normalised(v) for v in value]
    return value


def _by_key(entries: Any, key: str) -> dict[str, Mapping[str, Any]]:
    """Index a list of Ignition entries by `key` (later entries win, as after a merge)."""
    out: dict[str, Mapping[str, Any]] = {}
    for entry in entries or ():
        if isinstance(entry, Mapping) and isinstance(entry.get(key), str):
            out[entry[key]] = entry
    return out


def _set_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> SetChange:
    return SetChange(
        added=tuple(sorted(set(new) - set(old))),
        removed=tuple(sorted(set(old) - set(new))),
        changed=tuple(sorted(k for k in set(old) & set(new)
                             if old[k] != new[k] and normalised(old[k]) != normalised(new[k]))),
    )


def files_of(config: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """`storage.files` of an Ignition config, by path."""
    return _by_key((config.get("storage") or {}).get("files"), "path")


def units_of(config: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """`systemd.units` of an Ignition config, by name."""
    return _by_key((config.get("systemd") or {}).get("units"), "name")


def dropins_of(config: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Every unit's drop-ins, keyed `<unit>/<dropin>`."""
    out: dict[str, Mapping[str, Any]] = {}
    for unit_name, unit in units_of(config).items():
        for name, dropin in _by_key(unit.get("dropins"), "name").items():
            out[f"{unit_name}/{name}"] = dropin
    return out


def ssh_keys_of(config: Mapping[str, Any]) -> tuple[str, ...]:
    """Every `sshAuthorizedKeys` entry of every user, in order (what the MCD writes for `core`)."""
    keys: list[str] = []
    for user in (config.get("passwd") or {}).get("users") or ():
        if isinstance(user, Mapping):
            keys += [str(k) for k in user.get("sshAuthorizedKeys") or ()]
    return tuple(keys)


def _value(old: Any, new: Any) -> ValueChange | None:
    return None if old == new else ValueChange(old, new)


def diff_rendered(old: MachineConfigSpec, new: MachineConfigSpec) -> ConfigDiff:
    """Compare two MachineConfig specs (old may be the empty spec for a first apply)."""
    old_cfg, new_cfg = old.config or {}, new.config or {}
    old_files, new_files = files_of(old_cfg), files_of(new_cfg)
    files = _set_change(old_files, new_files)
    old_keys, new_keys = ssh_keys_of(old_cfg), ssh_keys_of(new_cfg)
    return ConfigDiff(
        files=files,
        units=_set_change(units_of(old_cfg), units_of(new_cfg)),
        dropins=_set_change(dropins_of(old_cfg), dropins_of(new_cfg)),
        passwd=normalised(old_cfg.get("passwd") or {}) != normalised(new_cfg.get("passwd") or {}),
        ssh_keys=SetChange(added=tuple(sorted(set(new_keys) - set(old_keys))),
                           removed=tuple(sorted(set(old_keys) - set(new_keys)))),
        kernel_arguments=ListChange(tuple(old.kernel_arguments), tuple(new.kernel_arguments)),
        kernel_type=_value(canonical_kernel_type(old.kernel_type), canonical_kernel_type(new.kernel_type)),
        extensions=ListChange(tuple(old.extensions), tuple(new.extensions)),
        os_image=_value(old.os_image_url, new.os_image_url),
        fips=_value(bool(old.fips), bool(new.fips)),
        old_files={p: old_files[p] for p in files.all if p in old_files},
        new_files={p: new_files[p] for p in files.all if p in new_files},
    )


class ContentsError(PathError, ValueError):
    """A file entry whose contents cannot be decoded; `path` names the file."""


def file_contents(entry: Mapping[str, Any]) -> bytes:
    """The bytes an Ignition file entry declares, read and verified by ignition/resource.py; no source is empty.

    Rendered MachineConfigs carry contents inline; remote sources are refused (the node does not fetch them).
    """
    path = str(entry.get("path", "?"))
    contents = entry.get("contents") or {}
    try:
        return read_resource(contents) or b""
    except ResourceError as exc:
        if exc.code == "remote-source":
            scheme = scheme_of(str(contents.get("source"))) or ""
            raise ContentsError(path, f"unsupported contents source scheme {scheme!r} (only data: URLs are applied)") from exc
        raise ContentsError(path, exc.message) from exc


def file_mode(entry: Mapping[str, Any]) -> int:
    """The file's mode, 0644 when unset (as the MCD does)."""
    mode = entry.get("mode")
    return int(mode) if isinstance(mode, int) and not isinstance(mode, bool) else 0o644
