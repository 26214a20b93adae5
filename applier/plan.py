"""From (current, desired) to a plan: what to write, remove, stage, and how disruptive it is. Pure.

The plan is computed against the *effective* specs: with the `none` backend the OS fields are not
managed, so the desired spec's osImageURL, kernel arguments, kernel type and extensions are taken as they
are on the old side (no OS change, no reboot for it). Paths left over from an interrupted update
(`interrupted`: a pending config that never became current) count as old paths, so a stale file from a
half-applied update is removed, and its entries that the new config has differently are rewritten.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from applier.units import dropin_path, unit_path
from fleet.diff import ConfigDiff, diff_rendered, dropins_of, files_of, units_of
from fleet.disruption import VERDICTS, Disruption, disruption
from fleet.disruption_policy import DisruptionPolicy
from fleet.reconcile import check_reconcilable
from fleet.rendered import MachineConfigSpec


@dataclass(frozen=True)
class Plan:
    """Everything one update does, in order: files, stale files, units, stale units, SSH keys, OS stage."""

    old: MachineConfigSpec
    new: MachineConfigSpec
    diff: ConfigDiff
    disruption: Disruption
    write_files: tuple[Mapping[str, Any], ...] = ()
    remove_files: tuple[str, ...] = ()
    write_units: tuple[Mapping[str, Any], ...] = ()
    remove_units: tuple[str, ...] = ()
    remove_dropins: tuple[str, ...] = ()
    write_ssh: bool = False
    unreconcilable: tuple[str, ...] = field(default=())

    @property
    def stage_os(self) -> bool:
        """True when the backend has something to stage."""
        return bool(self.diff.os_changes)

    def summary(self) -> dict[str, Any]:
        """Counts and verdict, for logs and reports."""
        return {"writeFiles": len(self.write_files), "removeFiles": len(self.remove_files),
                "writeUnits": len(self.write_units), "removeUnits": len(self.remove_units),
                "sshKeys": self.write_ssh, "os": list(self.diff.os_changes), "verdict": self.disruption.verdict}


def effective(old: MachineConfigSpec, new: MachineConfigSpec, *, manage_os: bool) -> MachineConfigSpec:
    """`new` with the OS fields of `old` when the backend does not manage the OS."""
    if manage_os:
        return new
    return replace(new, os_image_url=old.os_image_url, kernel_arguments=old.kernel_arguments,
                   kernel_type=old.kernel_type, extensions=old.extensions)


def make_plan(old: MachineConfigSpec, new: MachineConfigSpec, *, policy: DisruptionPolicy | None = None,
              manage_os: bool = True, overrides: Iterable[str] = (), leftover_paths: Iterable[str] = (),
              leftover_units: Iterable[str] = (), interrupted: MachineConfigSpec | None = None,
              force: bool = False) -> Plan:
    """Plan the update from `old` to `new` (rules in the module docstring).

    `interrupted`: the spec of an update that was killed half-way (some of its files may be on disk): its
    files and units are removed when `new` lacks them, and rewritten when `new` has them differently.
    """
    new_eff = effective(old, new, manage_os=manage_os)
    problems = tuple(check_reconcilable(old, new_eff, overrides=overrides))
    diff = diff_rendered(old, new_eff)
    decided = disruption(diff, policy, force=force)
    extra_files: set[str] = set()
    extra_units: set[str] = set()
    if interrupted is not None:
        half = diff_rendered(effective(old, interrupted, manage_os=manage_os), new_eff)
        extra_files = set(half.files.added) | set(half.files.changed)
        extra_units = set(half.units.added) | set(half.units.changed)
        leftover_paths = {*leftover_paths, *files_of(interrupted.config or {})}
        leftover_units = {*leftover_units, *units_of(interrupted.config or {})}
        other = disruption(half, policy, force=force)
        if VERDICTS.index(other.verdict) > VERDICTS.index(decided.verdict):
            decided = other
    old_cfg, new_cfg = old.config or {}, new_eff.config or {}
    new_files = files_of(new_cfg)
    new_units = units_of(new_cfg)
    unit_paths = {unit_path(n) for n in new_units} | {dropin_path(*k.split("/", 1)) for k in dropins_of(new_cfg)}
    old_paths = set(files_of(old_cfg)) | set(leftover_paths)
    write_files = tuple(new_files[p] for p in sorted(new_files)
                        if p in diff.files.added or p in diff.files.changed or p in extra_files)
    remove_files = tuple(sorted(p for p in old_paths - set(new_files) if p not in unit_paths))
    changed_units = set(diff.units.added) | set(diff.units.changed) | extra_units
    old_unit_names = set(units_of(old_cfg)) | set(leftover_units)
    return Plan(
        old=old, new=new_eff, diff=diff, disruption=decided,
        write_files=write_files,
        remove_files=remove_files,
        write_units=tuple(new_units[n] for n in sorted(new_units) if n in changed_units),
        remove_units=tuple(sorted(old_unit_names - set(new_units))),
        remove_dropins=tuple(sorted(set(dropins_of(old_cfg)) - set(dropins_of(new_cfg)))),
        write_ssh=diff.passwd,
        unreconcilable=problems,
    )
