"""SSH keys for `core` (MCO `pkg/daemon/update.go`, `rpm-ostree.go`): every user's `sshAuthorizedKeys`, in order, one per line.

Written atomically to ~core/.ssh/authorized_keys.d/ignition (mode 0600, owner core), the directories
0700 and owned by core. No `core` user in the root's passwd -> nothing to do, as the MCD does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from applier.errors import PermanentError
from applier.files import PASSWD_FILES, account_entry, host_path
from fleet.atomic import write_atomic
from fleet.diff import ssh_keys_of

KEYS_FILE = ".ssh/authorized_keys.d/ignition"


def core_account(root: Path) -> tuple[int, int, str] | None:
    """(uid, gid, home) of `core` from the root's passwd files, or None."""
    parts = account_entry(root, PASSWD_FILES, "core")
    if parts is None or len(parts) < 6 or not parts[3].isdigit():
        return None
    return int(parts[2]), int(parts[3]), parts[5] or "/home/core"


def keys_path(root: Path) -> str | None:
    """Config-style path of core's key file, or None without a core user."""
    account = core_account(root)
    return f"{account[2].rstrip('/')}/{KEYS_FILE}" if account else None


def keys_bytes(config: Mapping[str, Any]) -> bytes:
    """The key file's content for a config."""
    return "".join(f"{k}\n" for k in ssh_keys_of(config)).encode()


def write_keys(root: Path, config: Mapping[str, Any], *, durable: bool = True) -> str | None:
    """Write core's keys; returns the path written, or None when there is no core user."""
    account = core_account(root)
    if account is None:
        return None
    uid, gid, home = account
    home_dir = host_path(root, home)
    path = f"{home.rstrip('/')}/{KEYS_FILE}"
    try:
        for directory in (home_dir / ".ssh", home_dir / ".ssh" / "authorized_keys.d"):
            if directory.exists() and (directory.is_symlink() or directory.stat().st_uid != uid):
                raise PermanentError(str(directory), "exists but is not a directory owned by core")
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chown(directory, uid, gid)
            os.chmod(directory, 0o700)
        write_atomic(host_path(root, path), keys_bytes(config), mode=0o600, uid=uid, gid=gid, durable=durable)
    except OSError as exc:
        raise PermanentError(path, f"cannot write SSH keys: {exc.strerror or exc}") from exc
    return path
