"""Builders for Ignition entries and node roots used by the applier tests (rendered configs: tests/builders.py)."""

from __future__ import annotations

import shlex
import urllib.parse
import uuid
from pathlib import Path
from typing import Any


def data_url(text: str) -> str:
    """A percent-encoded `data:,` URL (as the MCS writes them)."""
    return "data:," + urllib.parse.quote(text, safe="")


def file_entry(path: str, text: str, mode: int = 0o644, **extra: Any) -> dict[str, Any]:
    """An Ignition storage.files entry."""
    return {"path": path, "mode": mode, "overwrite": True, "contents": {"source": data_url(text)}, **extra}


def unit(name: str, contents: str | None = None, enabled: bool | None = None, **extra: Any) -> dict[str, Any]:
    """An Ignition systemd.units entry."""
    entry: dict[str, Any] = {"name": name, **extra}
    if contents is not None:
        entry["contents"] = contents
    if enabled is not None:
        entry["enabled"] = enabled
    return entry


SERVICE = "[Unit]\nDescription={name}\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"



BOOT_ID = "proc/sys/kernel/random/boot_id"  # read under --root when present (applier/boot.py)


def new_boot(root: Path) -> str:
    """Write a fresh boot ID under `root` (what a reboot does); returns it."""
    value = str(uuid.uuid4())
    (root / BOOT_ID).parent.mkdir(parents=True, exist_ok=True)
    (root / BOOT_ID).write_text(value + "\n")
    return value


def reboot_command(root: Path, log: Path | None = None) -> str:
    """A `--reboot-command` that simulates a reboot: a new boot ID under `root` (and `reboot` logged)."""
    target = shlex.quote(str(root / BOOT_ID))
    command = f"cat /proc/sys/kernel/random/uuid > {target}"
    return command + (f" && echo reboot >> {shlex.quote(str(log))}" if log else "")


def make_root(path: Path, *, core: bool = True) -> Path:
    """A minimal node root: /etc with passwd/group (core user 1000), /home/core, its own boot ID."""
    (path / "etc").mkdir(parents=True, exist_ok=True)
    new_boot(path)
    passwd = "root:x:0:0:root:/root:/bin/sh\n"
    group = "root:x:0:\n"
    if core:
        passwd += "core:x:1000:1000:CoreOS Admin:/home/core:/bin/bash\n"
        group += "core:x:1000:\n"
        (path / "home" / "core").mkdir(parents=True, exist_ok=True)
    (path / "etc" / "passwd").write_text(passwd)
    (path / "etc" / "group").write_text(group)
    return path


def fips_root(path: Path, *, enabled: str = "1", policy: str = "FIPS") -> Path:
    """A node root in FIPS mode as far as the agent reads it (applier/live.py): the root's own fips_enabled and
    crypto policy file."""
    root = make_root(path)
    (root / "proc/sys/crypto").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/crypto/fips_enabled").write_text(enabled + "\n")
    (root / "etc/crypto-policies").mkdir(parents=True, exist_ok=True)
    (root / "etc/crypto-policies/config").write_text(policy + "\n")
    return root
