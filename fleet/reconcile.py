"""Day-2 reconcilability (MCO `pkg/controller/common/reconcile.go`: isConfigReconcilable): changes a running node cannot apply in place. Pure, no I/O.

Shared by the renderer (RenderDegraded) and the applier (refuse, change nothing). The checks and their
user-visible texts are MCO's `isConfigReconcilable`, in its order:
  passwd (groups; users only `core` with SSH keys / password hash) -> Ignition kernelArguments ->
  storage.disks / filesystems / raid (unless overridden) -> directories -> links (unless all removed) ->
  files with `append` -> the MCD force file -> spec.fips.
Not checked, as in the MCO: storage.luks, the `ignition` section, systemd (every unit change is allowed),
file ownership and modes. Absent, null and empty values compare equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fleet.diff import normalised
from fleet.rendered import MachineConfigSpec

FORCE_FILE = "/run/machine-config-daemon-force"


def _get(config: Mapping[str, Any], *keys: str) -> Any:
    value: Any = config
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    value = normalised(value)
    return None if value in ([], {}) else value


def _user_error(user: Mapping[str, Any]) -> str | None:
    """verifyUserFields: the last user must be `core` with keys or a password hash, and nothing else."""
    keys = user.get("sshAuthorizedKeys") or []
    if user.get("name") == "core" and (user.get("passwordHash") is not None or len(keys) >= 1):
        rest = {k: v for k, v in normalised(user).items() if k not in ("name", "sshAuthorizedKeys", "passwordHash")}
        if rest:
            return "SSH keys and password hash are not reconcilable"
        return None
    return "ignition passwd user section contains unsupported changes: user must be core and have 1 or more sshKeys"


def _passwd_error(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    if _get(old, "passwd", "groups") != _get(new, "passwd", "groups"):
        return "ignition Passwd Groups section contains changes"
    if _get(old, "passwd", "users") != _get(new, "passwd", "users"):
        users = [u for u in (new.get("passwd") or {}).get("users") or () if isinstance(u, Mapping)]
        if any(u.get("name") != "core" for u in users):
            return "ignition passwd user section contains unsupported changes: non-core user"
        if users:
            return _user_error(users[-1])
    return None


def check_reconcilable(old: MachineConfigSpec, new: MachineConfigSpec, *,
                       overrides: Iterable[str] = ()) -> list[str]:
    """Every reason the change from `old` to `new` cannot be applied on a running node ([] when it can).

    `overrides` are MachineConfiguration `irreconcilableValidationOverrides.storage` values (Disks,
    FileSystems, Raid). The first reason is the one the MCO itself would report.
    """
    allowed = set(overrides)
    o, n = old.config or {}, new.config or {}
    errors: list[str] = []
    if _get(o, "passwd") != _get(n, "passwd"):
        problem = _passwd_error(o, n)
        if problem:
            errors.append(f"invalid passwd change(s): {problem}")
    if _get(o, "kernelArguments") != _get(n, "kernelArguments"):
        errors.append("ignition kargs section contains changes")
    for section, override in (("disks", "Disks"), ("filesystems", "FileSystems"), ("raid", "Raid")):
        if override not in allowed and _get(o, "storage", section) != _get(n, "storage", section):
            errors.append(f"ignition {section} section contains changes")
    if _get(o, "storage", "directories") != _get(n, "storage", "directories"):
        errors.append("ignition directories section contains changes")
    if _get(o, "storage", "links") != _get(n, "storage", "links") and _get(n, "storage", "links"):
        errors.append("ignition links section contains changes")
    for f in (n.get("storage") or {}).get("files") or ():
        if not isinstance(f, Mapping):
            continue
        if f.get("append"):
            errors.append(f"ignition file {f.get('path')} includes append")
        if f.get("path") == FORCE_FILE:
            errors.append(f"cannot create {FORCE_FILE} via Ignition")
    if bool(old.fips) != bool(new.fips):
        errors.append("detected change to FIPS flag; refusing to modify FIPS on a running cluster")
    return errors


def not_reconcilable_message(old_name: str, new_name: str, reason: str) -> str:
    """MCO's wrapping of a reason: `new machineconfig "<old>" is not reconcilable against "<new>": <reason>`."""
    return f'new machineconfig "{old_name}" is not reconcilable against "{new_name}": {reason}'
