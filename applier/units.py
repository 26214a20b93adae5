"""systemd units and drop-ins under a root (MCO `pkg/daemon/file_writers.go`, `update.go` "Units"), enablement via `systemctl`.

On `/` the live `systemctl` is used; under any other root `systemctl --root=ROOT`, which edits the
enablement symlinks without a running systemd. Units go to /etc/systemd/system/<name>, drop-ins to
/etc/systemd/system/<unit>.d/<name>, mode 0644, with the same backup rules as files. As the MCD: a unit whose
contents are rewritten is disabled first when enabled (its old [Install] links go); `mask: false` without
contents clears the unit's path; `enabled` is acted on only for a unit with contents or an existing unit file,
and a unit that sets neither gets its preset. No daemon-reload or restart happens here: that is the disruption's job.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from applier.errors import PermanentError
from applier.files import FileWriter, host_path
from applier.runner import CommandRunner, check

UNIT_DIR = "/etc/systemd/system"
VENDOR_DIRS = ("/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system", "/usr/etc/systemd/system")


def unit_path(name: str) -> str:
    """Config path of a unit."""
    if not name or "/" in name:
        raise PermanentError(f"systemd.units[{name}]", "invalid unit name")
    return f"{UNIT_DIR}/{name}"


def dropin_path(unit: str, name: str) -> str:
    """Config path of a drop-in."""
    if not name or "/" in name:
        raise PermanentError(f"systemd.units[{unit}].dropins[{name}]", "invalid drop-in name")
    return f"{unit_path(unit)}.d/{name}"


def unit_file_exists(root: Path, name: str) -> bool:
    """Whether a unit file of `name` is in /etc or a vendor directory under `root`."""
    return any(host_path(root, f"{d}/{name}").exists() for d in VENDOR_DIRS)


def enablement_applies(root: Path, unit: Mapping[str, Any]) -> bool:
    """Whether the entry's `enabled` is acted on: only for a unit with contents or one whose file exists (MCO
    `pkg/daemon/update.go` writeUnits, OCPBUGS-56648: a contents-less entry naming no unit is skipped)."""
    return bool(unit.get("contents")) or unit_file_exists(root, str(unit.get("name", "")))


class Systemctl:
    """`systemctl` on the live system (root `/`) or on a directory (`--root`)."""

    def __init__(self, runner: CommandRunner, root: Path) -> None:
        self.runner = runner
        self.root = Path(root)
        self.live = str(self.root.resolve()) == "/"

    def _cmd(self, *args: str) -> list[str]:
        return ["systemctl", *args] if self.live else ["systemctl", f"--root={self.root}", *args]

    def enable(self, units: Iterable[str]) -> None:
        """`systemctl enable u1 u2 ...` (one call)."""
        names = list(units)
        if names:
            check(self.runner.run(self._cmd("enable", *names), timeout=60), f"systemd.units[{','.join(names)}]")

    def disable(self, units: Iterable[str], *, ignore_errors: bool = False) -> None:
        """`systemctl disable u1 u2 ...` (one call)."""
        names = list(units)
        if names:
            result = self.runner.run(self._cmd("disable", *names), timeout=60)
            if not ignore_errors:
                check(result, f"systemd.units[{','.join(names)}]")

    def preset(self, unit: str) -> None:
        """`systemctl preset unit`, failures ignored (as the MCD does)."""
        self.runner.run(self._cmd("preset", unit), timeout=60)

    def is_enabled(self, unit: str) -> str:
        """What `systemctl is-enabled` prints (`enabled`, `disabled`, `masked`, `not-found`, ...)."""
        result = self.runner.run(self._cmd("is-enabled", unit), timeout=60)
        out = result.stdout.strip().splitlines()
        if out:
            return out[-1].strip()
        return "not-found" if "No such file" in result.stderr else result.stderr.strip() or "unknown"

    def show(self, unit: str, properties: Iterable[str]) -> dict[str, str]:
        """`systemctl show -p P ... unit` as a mapping (live systems only; {} under a directory root)."""
        if not self.live:
            return {}
        args = ["show", *[f"--property={p}" for p in properties], unit]
        result = check(self.runner.run(self._cmd(*args), timeout=60), f"systemctl show {unit}")
        return dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)

    def live_action(self, verb: str, unit: str = "") -> bool:
        """Run a live action (daemon-reload, reload, restart); under a directory root there is no live system."""
        if not self.live:
            return False
        args = [verb, unit] if unit else [verb]
        check(self.runner.run(self._cmd(*args), timeout=300), f"systemctl {' '.join(args)}")
        return True


class UnitWriter:
    """Writes units and drop-ins and sets their enablement."""

    def __init__(self, root: Path, files: FileWriter, systemctl: Systemctl) -> None:
        self.root = Path(root)
        self.files = files
        self.systemctl = systemctl

    def _unit_file_exists(self, name: str) -> bool:
        return unit_file_exists(self.root, name)

    def write_dropin(self, unit: str, dropin: Mapping[str, Any], *, managed_before: bool) -> None:
        """Write one drop-in; empty contents remove it."""
        path = dropin_path(unit, str(dropin.get("name", "")))
        contents = dropin.get("contents")
        if not contents:
            target = host_path(self.root, path)
            if target.exists() or target.is_symlink():
                self.files.record_original(path, target, managed_before)
                target.unlink()
            return
        self.files.write_bytes(path, str(contents).encode(), mode=0o644, managed_before=managed_before)

    def write_unit(self, unit: Mapping[str, Any], *, managed_before: bool,
                   dropins: Iterable[str] | None = None) -> None:
        """Write one unit: drop-ins first (only `dropins` when given), then mask / contents / unmask."""
        name = str(unit.get("name", ""))
        path = unit_path(name)
        wanted = set(dropins) if dropins is not None else None
        for dropin in unit.get("dropins") or ():
            if wanted is None or f"{name}/{dropin.get('name')}" in wanted:
                self.write_dropin(name, dropin, managed_before=managed_before)
        if unit.get("mask"):
            self.files.symlink(path, "/dev/null", managed_before=managed_before)
            return
        contents = unit.get("contents")
        target = host_path(self.root, path)
        if contents:
            if target.exists() and self.systemctl.is_enabled(name) == "enabled":
                # as MCO writeUnit (OCPBUGS-33694), whatever `enabled` says: the links of a changed [Install]
                # section go, and set_enablement links the new one
                self.systemctl.disable([name], ignore_errors=True)
            self.files.write_bytes(path, str(contents).encode(), mode=0o644, managed_before=managed_before)
        elif unit.get("mask") is False and (target.is_symlink() or target.is_file()):
            # MCO writeUnit removes whatever is at the path (a mask, or contents an earlier config wrote): ours
            # is restored or deleted by the backup rules, a mask link goes in any case
            self.files.remove(path)
            if target.is_symlink() and os.readlink(target) == "/dev/null":
                target.unlink()

    def set_enablement(self, units: Iterable[Mapping[str, Any]]) -> None:
        """One enable call, one disable call, presets for the rest (MCO `pkg/daemon/file_writers.go`, `update.go`)."""
        enable: list[str] = []
        disable: list[str] = []
        for unit in units:
            name = str(unit.get("name", ""))
            if unit.get("mask"):
                continue
            if unit.get("enabled") is not None:
                if enablement_applies(self.root, unit):
                    (enable if unit["enabled"] else disable).append(name)
            elif self._unit_file_exists(name):
                self.systemctl.preset(name)
        self.systemctl.enable(enable)
        self.systemctl.disable(disable)

    def remove_unit(self, name: str) -> None:
        """A unit left the config: disable it (errors ignored), restore or delete its file, and when the OS
        still ships the unit, give it back its preset enablement (the MCD runs `systemctl preset`)."""
        if self._unit_file_exists(name):
            self.systemctl.disable([name], ignore_errors=True)
        self.files.remove(unit_path(name))
        if self._unit_file_exists(name):
            self.systemctl.preset(name)

    def remove_dropin(self, key: str) -> None:
        """A drop-in (`unit/name`) left the config."""
        unit, _, name = key.partition("/")
        self.files.remove(dropin_path(unit, name))
        parent = host_path(self.root, f"{unit_path(unit)}.d")
        try:
            parent.rmdir()
        except OSError:
            pass
