"""Reference trees for comparing images with what the real tools make of the same config.

`snapshot(root)` describes a directory tree as {path: (kind, mode, owner, content-or-target)}. The reference
for a rendered config is what the real `ignition-apply --root` writes (files, dirs, links, units, dropins,
masks, presets) plus what the real `systemctl --root enable` links for the units the config enables.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.tools import real_tool

Snapshot = dict[str, tuple[str, int, tuple[int, int], Any]]

PRESET = "/etc/systemd/system-preset/20-ignition.preset"


def snapshot(root: Path, *, skip: Iterable[str] = ()) -> Snapshot:
    """Every entry under root (paths absolute inside it); presets normalised to a set of word lists."""
    skipped = tuple(skip)
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = "/" + str(full.relative_to(root))
            if any(rel == s or rel.startswith(s + "/") for s in skipped):
                continue
            st = full.lstat()
            owner = (st.st_uid, st.st_gid)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("symlink", 0, owner, os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), owner, None)
            else:
                data = full.read_bytes()
                if rel == PRESET:
                    data = frozenset(tuple(line.split()) for line in data.decode().splitlines() if line.strip())
                out[rel] = ("file", stat.S_IMODE(st.st_mode), owner, data)
    return out


def ignition_apply(config_file: Path, root: Path, tmp: Path) -> None:
    """Run the real Ignition's files stage (`ignition-apply`) into root.

    Debian's 2.14 finishes writing, then tries to reach systemd over D-Bus (absent in this sandbox) and exits 1
    with `dial unix /run/systemd/private`; that one failure is accepted, any other fails the test."""
    binary = real_tool("ignition")
    bindir = tmp / "ignbin"
    bindir.mkdir(exist_ok=True)
    link = bindir / "ignition-apply"
    if not link.exists():
        link.symlink_to(binary)
    root.mkdir(parents=True, exist_ok=True)
    for p in (tmp, root):
        os.chmod(p, 0o755)
    env = {**os.environ, "container": "oci"}
    proc = subprocess.run([str(link), "--ignore-unsupported", "--offline", "--root", str(root), str(config_file)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0 and "/run/systemd/private" not in proc.stdout + proc.stderr:
        pytest.fail(f"ignition-apply failed:\n{proc.stdout}\n{proc.stderr}")


def systemctl_enable(root: Path, units: Iterable[str]) -> None:
    """`systemctl --root=ROOT enable UNIT...` with the real systemctl."""
    names = list(units)
    if not names:
        return
    systemctl = real_tool("systemctl")
    proc = subprocess.run([str(systemctl), f"--root={root}", "enable", *names], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"systemctl enable failed:\n{proc.stdout}\n{proc.stderr}")


def enabled_units(config: Mapping[str, Any]) -> list[str]:
    """Units the config enables and defines (or whose template it defines)."""
    units = (config.get("systemd") or {}).get("units") or []
    defined = {u["name"] for u in units if u.get("contents") is not None and not u.get("mask")}
    out = []
    for u in units:
        if not u.get("enabled") or u.get("mask"):
            continue
        name = u["name"]
        stem, _, suffix = name.rpartition(".")
        template = stem.partition("@")[0] + "@." + suffix if "@" in stem else name
        if name in defined or template in defined:
            out.append(name)
    return out


def kargs_of(root: Path) -> list[str]:
    """Kernel arguments from every kargs.d TOML (sorted file order), read with tomllib."""
    kargs: list[str] = []
    d = root / "usr/lib/bootc/kargs.d"
    for f in sorted(d.glob("*.toml")) if d.exists() else ():
        kargs.extend(tomllib.loads(f.read_text())["kargs"])
    return kargs


def strip_dirs(snap: Snapshot, keep: Iterable[str] = ()) -> Snapshot:
    """Snapshot without implicit directories (Ignition and systemctl create parents as they please)."""
    kept = set(keep)
    return {k: v for k, v in snap.items() if v[0] != "dir" or k in kept}
