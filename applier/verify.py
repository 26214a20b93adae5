"""On-disk verification against a config (MCO `pkg/daemon/on_disk_validation.go`), with the MCD's mismatch texts.

Files: `os.Lstat` mode must equal the expected mode (a symlink never matches), bytes must equal the
decoded contents. Units: drop-ins (empty expected content and missing is fine), masked units must resolve
to /dev/null, units with contents are checked like files (mode 0644), then `systemctl is-enabled` against
`enabled`. Ownership is not checked, as in the MCD.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from applier.errors import PermanentError
from applier.files import host_path
from applier.units import Systemctl, dropin_path, enablement_applies, unit_path
from fleet.diff import ContentsError, file_contents, file_mode, files_of, units_of


def go_mode(mode: int) -> str:
    """Go's os.FileMode `%v/%d/%#o` for a permission-only mode (`-rw-r--r--/420/0644`)."""
    perm = stat.filemode(stat.S_IFREG | (mode & 0o777))
    return f"{perm}/{mode}/{mode:#o}".replace("0o", "0")


def check_bytes(root: Path, path: str, expected: bytes, mode: int) -> str | None:
    """Mode and content check of one path; the MCD's text on mismatch."""
    target = host_path(root, path)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return f'could not stat file "{path}": no such file or directory'
    except OSError as exc:
        return f'could not stat file "{path}": {exc.strerror}'
    if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != mode:
        received = stat.S_IMODE(st.st_mode)
        kind = "" if stat.S_ISREG(st.st_mode) else f" ({stat.filemode(st.st_mode)[0]} type)"
        return (f'mode mismatch for file: "{path}"; expected: {go_mode(mode)}; '
                f"received: {go_mode(received)}{kind}")
    try:
        if st.st_size != len(expected) or target.read_bytes() != expected:
            return f'content mismatch for file "{path}"'
    except OSError as exc:
        return f'could not read file "{path}": {exc.strerror}'
    return None


def check_file(root: Path, entry: Mapping[str, Any]) -> str | None:
    """One Ignition file entry."""
    path = str(entry.get("path", ""))
    if entry.get("append"):
        return f"found an append section when writing files. Append is not supported: {path}"
    try:
        data = file_contents(entry)
    except ContentsError as exc:
        return str(exc)
    return check_bytes(root, path, data, file_mode(entry))


def check_unit(root: Path, unit: Mapping[str, Any], systemctl: Systemctl | None) -> list[str]:
    """One unit and its drop-ins."""
    name = str(unit.get("name", ""))
    problems: list[str] = []
    for dropin in unit.get("dropins") or ():
        path = dropin_path(name, str(dropin.get("name", "")))
        contents = dropin.get("contents") or ""
        if not contents and not host_path(root, path).exists():
            continue
        problem = check_bytes(root, path, str(contents).encode(), 0o644)
        if problem:
            problems.append(problem)
    path = unit_path(name)
    if unit.get("mask"):
        target = host_path(root, path)
        link = os.readlink(target) if target.is_symlink() else ""
        if link != "/dev/null":
            problems.append(f'state validation: invalid unit masked setting. path: "{path}"; expected: /dev/null; '
                            f'received: {link or "not a symlink"}')
        return problems
    if unit.get("contents"):
        problem = check_bytes(root, path, str(unit["contents"]).encode(), 0o644)
        if problem:
            problems.append(problem)
    enabled = unit.get("enabled")
    if systemctl is not None and enabled is not None and enablement_applies(root, unit):
        state = systemctl.is_enabled(name)
        bad = ("disabled", "masked", "masked-runtime", "not-found") if enabled else ("enabled", "enabled-runtime")
        if state in bad:
            problems.append(f'state validation: unit "{name}" expected enabled={str(bool(enabled)).lower()}, '
                            f'systemctl is-enabled reports "{state}"')
    return problems


def verify_config(root: Path, config: Mapping[str, Any], *, systemctl: Systemctl | None,
                  paths: Iterable[str] | None = None, units: Iterable[str] | None = None) -> list[str]:
    """Every mismatch between the disk and the config's units and files (optionally only some of them)."""
    wanted_units = set(units) if units is not None else None
    wanted_paths = set(paths) if paths is not None else None
    problems: list[str] = []
    try:
        for name, unit in units_of(config).items():
            if wanted_units is None or name in wanted_units:
                problems += check_unit(root, unit, systemctl)
        for path, entry in files_of(config).items():
            if wanted_paths is None or path in wanted_paths:
                problem = check_file(root, entry)
                if problem:
                    problems.append(problem)
    except PermanentError as exc:
        problems.append(str(exc))
    return problems


def on_disk_message(name: str, problems: list[str]) -> str:
    """The MCD's Degraded text."""
    return f"unexpected on-disk state validating against {name}: {'; '.join(problems)}"
