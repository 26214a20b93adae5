"""The boot ID: how the agent tells a reboot that happened from one that did not.

As the MCD does (MCO pkg/daemon/daemon.go: the pending config is saved with the boot ID, and a pending config
whose boot ID matches the running one means "Failed to reboot?"), the boot ID is recorded with an update
waiting for its reboot; only a different boot ID lets the next sync verify and claim the reboot. Linux
gives every boot a random ID in /proc/sys/kernel/random/boot_id; under a directory root (tests, demos)
`<root>/proc/sys/kernel/random/boot_id` is read when it exists, so a simulated reboot writes a new one there.
"""

from __future__ import annotations

from pathlib import Path

from applier.errors import PermanentError

BOOT_ID = "proc/sys/kernel/random/boot_id"


def boot_id(root: Path) -> str:
    """The running boot's ID (the root's own file first, then the kernel's)."""
    for path in (Path(root) / BOOT_ID, Path("/") / BOOT_ID):
        try:
            value = path.read_text().strip()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise PermanentError(f"/{BOOT_ID}", f"cannot read the boot ID: {exc.strerror or exc}") from exc
        if value:
            return value
    raise PermanentError(f"/{BOOT_ID}", "cannot read the boot ID: no such file")


def reboot_step(*, recorded: str, booted: str, waited: float, wait: float, attempts: int, limit: int) -> str:
    """What a sync does about an update waiting for its reboot.

    `verify`: the boot changed (or no ID was recorded, by an agent older than this rule); `wait`: same boot,
    within `wait` seconds of the last request; `request`: same boot after the wait, fewer than `limit`
    requests so far; `give-up`: same boot after `limit` requests (the node turns Degraded, still waiting).
    """
    if not recorded or recorded != booted:
        return "verify"
    if waited < wait:
        return "wait"
    return "request" if attempts < limit else "give-up"
