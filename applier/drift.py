"""Drift: files and units changed behind the applier's back (MCO `pkg/daemon/on_disk_validation.go`).

`DriftChecker.check(config)` verifies the current config's files and units (or only some of them: what the
watch saw change); a file whose `lstat` (mtime, ctime, size, inode, mode) is unchanged since it last verified is
not re-read, so a periodic check of a large config is cheap. ctime is in the key because only the kernel sets
it: an edit that puts the mtime back (`touch -r`) still moves it; where a filesystem reports no ctime the file
is read every time. `watch_map` says which path the inotify watch (applier/watch.py) covers for which file or
unit: files, unit files, drop-ins, and the unit's links in every `*.wants/`/`*.requires/` directory that exists and
in those its [Install] section names (WantedBy=, RequiredBy=) whether they exist or not: `systemctl disable` removes
a directory it empties, and a watch set up while it is gone must still see the link made and removed again.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from applier.files import host_path
from applier.units import UNIT_DIR, VENDOR_DIRS, Systemctl, dropin_path, unit_path
from applier.verify import check_file, check_unit
from fleet.diff import ContentsError, dropins_of, file_contents, file_mode, files_of, units_of
from fleet.drift_events import CONTENTS_LIMIT, DriftEvent
from ignition.dataurl import encode_data_url
from ignition.rules.unitfile import UnitParseError, deserialize

WANTS_SUFFIXES = (".wants", ".requires")
_INSTALL_LINKS = {"WantedBy": ".wants", "RequiredBy": ".requires"}
StatKey = tuple[int, int, int, int, int]


class DriftChecker:
    """Verifies the current config on disk, remembering what it already verified."""

    def __init__(self, root: Path, systemctl: Systemctl | None) -> None:
        self.root = Path(root)
        self.systemctl = systemctl
        self._seen: dict[str, StatKey] = {}

    def _stat_key(self, path: str) -> StatKey | None:
        try:
            st = os.lstat(host_path(self.root, path))
        except OSError:
            return None
        if not st.st_ctime_ns:  # no ctime on this filesystem: never trust the key, read the contents
            return None
        return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode)

    def forget(self, paths: Iterable[str] | None = None) -> None:
        """Drop remembered verifications (all, or of some paths) after the applier wrote them."""
        if paths is None:
            self._seen.clear()
        else:
            for p in paths:
                self._seen.pop(p, None)

    def check(self, config: Mapping[str, Any], *, paths: Iterable[str] | None = None,
              units: Iterable[str] | None = None) -> tuple[list[str], list[str], list[str]]:
        """(drifted file paths, drifted unit names, problem texts) for the config, or for only the files `paths`
        and the units `units` when either is given."""
        only = paths is not None or units is not None
        wanted_paths, wanted_units = set(paths or ()), set(units or ())
        drifted_files, drifted_units, problems = [], [], []
        for name, unit in units_of(config).items():
            if only and name not in wanted_units:
                continue
            unit_problems = check_unit(self.root, unit, self.systemctl)
            if unit_problems:
                drifted_units.append(name)
                problems += unit_problems
        entries = files_of(config)
        for path in sorted(wanted_paths & set(entries)) if only else entries:
            key = self._stat_key(path)
            if key is not None and self._seen.get(path) == key:
                continue
            problem = check_file(self.root, entries[path])
            if problem:
                drifted_files.append(path)
                problems.append(problem)
                self._seen.pop(path, None)
            elif key is not None:
                self._seen[path] = key
        return drifted_files, drifted_units, problems


def watched_paths(config: Mapping[str, Any]) -> set[str]:
    """Every path of the config the applier writes: files, unit files, drop-ins."""
    paths = set(files_of(config))
    paths |= {unit_path(n) for n in units_of(config)}
    paths |= {dropin_path(*k.split("/", 1)) for k in dropins_of(config)}
    return paths


def watch_map(root: Path, config: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Each path the drift watch covers -> what it belongs to: ("file", path) or ("unit", name).

    Enablement links are looked for in the `*.wants/` and `*.requires/` directories that exist now under
    /etc/systemd/system (a link made in a new directory is found by the periodic check)."""
    watched: dict[str, tuple[str, str]] = {p: ("file", p) for p in files_of(config)}
    units = units_of(config)
    link_dirs: list[str] = []  # *.wants/ and *.requires/ directories there now
    if any(u.get("enabled") is not None for u in units.values()):
        try:
            with os.scandir(host_path(Path(root), UNIT_DIR)) as entries:
                link_dirs = sorted(f"{UNIT_DIR}/{e.name}" for e in entries
                                   if e.name.endswith(WANTS_SUFFIXES) and e.is_dir(follow_symlinks=False))
        except OSError:
            link_dirs = []
    for name, unit in units.items():
        watched[unit_path(name)] = ("unit", name)
        watched[f"{unit_path(name)}.d"] = ("unit", name)
        for dropin in unit.get("dropins") or ():
            watched[dropin_path(name, str(dropin.get("name", "")))] = ("unit", name)
        if unit.get("enabled") is not None:
            for directory in {*link_dirs, *install_dirs(root, unit)}:
                watched[f"{directory}/{name}"] = ("unit", name)
    return watched


def install_dirs(root: Path, unit: Mapping[str, Any]) -> list[str]:
    """The `*.wants/`/`*.requires/` directories a unit's [Install] section links it into (its contents in the
    config, else its unit file under `root`); [] when it has none or does not parse."""
    name = str(unit.get("name", ""))
    contents = unit.get("contents")
    if not contents:
        for directory in VENDOR_DIRS:
            try:
                contents = host_path(Path(root), f"{directory}/{name}").read_text(errors="replace")
                break
            except (OSError, ValueError):
                continue
    try:
        options = deserialize(str(contents or ""))
    except UnitParseError:
        return []
    return sorted({f"{UNIT_DIR}/{target}{_INSTALL_LINKS[o.name]}" for o in options
                   if o.section == "Install" and o.name in _INSTALL_LINKS
                   for target in o.value.split() if "/" not in target and target not in (".", "..")})


def _fingerprint(data: bytes, mode: int) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()} mode:{mode:04o}"


def file_event(root: Path, entry: Mapping[str, Any], *, at: str, repaired: bool, carry: bool) -> DriftEvent:
    """The drift event of one file entry as it is on disk now (before its repair); `carry`: the file as found
    goes with it (for `mco drift export`) when it is a regular file of at most CONTENTS_LIMIT bytes."""
    path = str(entry.get("path", ""))
    try:
        expected = _fingerprint(file_contents(entry), file_mode(entry))
    except ContentsError:
        expected = "unreadable contents"
    target = host_path(Path(root), path)
    contents, mode = "", None
    try:
        st = os.lstat(target)
        if not stat.S_ISREG(st.st_mode):
            found = f"not a regular file ({stat.filemode(st.st_mode)[0]} type)"
        else:
            data = target.read_bytes()
            found = _fingerprint(data, stat.S_IMODE(st.st_mode))
            if carry and len(data) <= CONTENTS_LIMIT:
                contents, mode = encode_data_url(data), stat.S_IMODE(st.st_mode)
    except FileNotFoundError:
        found = "missing"
    except OSError as exc:
        found = f"unreadable: {exc.strerror}"
    return DriftEvent("file", path, expected, found, at, repaired, contents, mode)


def unit_event(unit: Mapping[str, Any], systemctl: Systemctl | None, *, at: str, repaired: bool) -> DriftEvent:
    """The drift event of one unit: its enablement as declared and as systemctl reports it now."""
    name = str(unit.get("name", ""))
    enabled = unit.get("enabled")
    expected = "masked" if unit.get("mask") else "enabled" if enabled is True else "disabled" if enabled is False \
        else "as declared"
    found = systemctl.is_enabled(name) if systemctl is not None else "unknown"
    if found == expected:
        found = f"{found}; unit file or drop-in changed"
    return DriftEvent("unit", name, expected, found, at, repaired)
