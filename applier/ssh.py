"""SSH keys and password hashes for `core` (MCO `pkg/daemon/update.go` updateSSHKeys, SetPasswordHash).

Keys: every user's `sshAuthorizedKeys`, in order, one per line, written atomically to
~core/.ssh/authorized_keys.d/ignition (mode 0600, owner core), the directories 0700 and owned by core; as the
MCD does where it uses that path (RHCOS 9+, FCOS, SCOS), the legacy ~core/.ssh/authorized_keys and every other
fragment of authorized_keys.d are removed, and a ~core/.ssh not owned by core is removed and made again.
Password hashes, on every update as the MCD's SetPasswordHash: each user of the config gets its `passwordHash`,
or `*` (no password login) when it has none; a user of the old config missing from the new one gets an empty
hash (deconfigureAbsentUsers). Set with `usermod -p` (`--root=ROOT` under a directory root), only where the hash
on disk differs. No `core` user in the root's passwd -> nothing to do, as the MCD does.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from applier.errors import PermanentError
from applier.files import PASSWD_FILES, account_entry, host_path
from applier.runner import CommandRunner
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


def remove_tree(path: Path) -> None:
    """`os.RemoveAll`: a file, a symlink or a directory tree, nothing when absent."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def write_keys(root: Path, config: Mapping[str, Any], *, durable: bool = True) -> str | None:
    """Write core's keys; returns the path written, or None when there is no core user."""
    account = core_account(root)
    if account is None:
        return None
    uid, gid, home = account
    home_dir = host_path(root, home)
    path = f"{home.rstrip('/')}/{KEYS_FILE}"
    ssh_dir, fragments = home_dir / ".ssh", home_dir / ".ssh" / "authorized_keys.d"
    try:
        if ssh_dir.exists() and ssh_dir.stat().st_uid != uid:  # MCO atomicallyWriteSSHKey (OCPBUGS-11832)
            remove_tree(ssh_dir)
        for directory in (ssh_dir, fragments):
            if directory.exists() and (directory.is_symlink() or directory.stat().st_uid != uid):
                raise PermanentError(str(directory), "exists but is not a directory owned by core")
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chown(directory, uid, gid)
            os.chmod(directory, 0o700)
        # MCO cleanSSHKeyPaths and removeNonIgnitionKeyPathFragments: the config's keys are the only ones left
        for other in [ssh_dir / "authorized_keys", *(e for e in fragments.iterdir() if e.name != "ignition")]:
            remove_tree(other)
        write_atomic(host_path(root, path), keys_bytes(config), mode=0o600, uid=uid, gid=gid, durable=durable)
    except OSError as exc:
        raise PermanentError(path, f"cannot write SSH keys: {exc.strerror or exc}") from exc
    return path


def hash_on_disk(root: Path, name: str) -> str | None:
    """`name`'s password hash as `usermod -p` keeps it: the /etc/shadow entry's, else the /etc/passwd entry's."""
    for rel in ("etc/shadow", "etc/passwd"):
        try:
            lines = (root / rel).read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            fields = line.split(":")
            if len(fields) >= 2 and fields[0] == name and (rel == "etc/shadow" or fields[1] != "x"):
                return fields[1]
    return None


def wanted_hashes(new: Mapping[str, Any], old: Mapping[str, Any]) -> dict[str, str]:
    """User -> the hash SetPasswordHash gives it: absent old users "" first, then each new user's hash or "*"."""
    users = [u for u in (new.get("passwd") or {}).get("users") or () if isinstance(u, Mapping)]
    names = {str(u.get("name")) for u in users}
    wanted = {str(u.get("name")): "" for u in (old.get("passwd") or {}).get("users") or ()
              if isinstance(u, Mapping) and str(u.get("name")) not in names}
    for user in users:
        wanted[str(user.get("name"))] = str(user.get("passwordHash") or "*")
    return wanted


def set_password_hashes(runner: CommandRunner, root: Path, new: Mapping[str, Any], old: Mapping[str, Any], *,
                        live: bool) -> list[str]:
    """Give the config's users their hashes (module docstring); returns the users changed. A failure for a user
    of the new config is an error (the MCD fails the update), for an absent old user it is ignored, as there."""
    if core_account(root) is None:
        return []
    changed = []
    present = {str(u.get("name")) for u in (new.get("passwd") or {}).get("users") or () if isinstance(u, Mapping)}
    for name, value in wanted_hashes(new, old).items():
        if hash_on_disk(root, name) == value:
            continue
        where = [] if live else [f"--root={root}"]
        result = runner.run(["usermod", *where, "-p", value, name], timeout=60)
        if not result.ok:
            if name not in present:
                continue
            detail = (result.stderr or result.stdout).strip().splitlines()
            raise PermanentError(f"passwd.users[{name}].passwordHash",
                                 f"Failed to reset password for {name}: {detail[-1] if detail else result.returncode}")
        changed.append(name)
    return changed
