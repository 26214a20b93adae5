"""The agent's rebooting part: a reboot requested (recording the boot that asked), and on a later sync what to do
about it: wait (same boot), ask again after `reboot_wait` seconds (up to MAX_REBOOT_ATTEMPTS requests, then give
up), or verify the new boot (applier/boot.py has the rule; notes on the MCD there; applier/verifying.py verifies).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from applier.boot import boot_id, reboot_step
from applier.errors import ApplyError, PermanentError
from applier.reporting import Reporting
from applier.settings import AgentSettings, LogFn, SyncResult, no_log
from applier.state import Pending, StateDir
from applier.units import Systemctl
from fleet.clock import Clock, system_clock
from fleet.rendered import RenderedConfig

MAX_REBOOT_ATTEMPTS = 3


@dataclass(eq=False)
class Rebooter:
    """Requests reboots with the settings' command (`systemctl reboot` on a live system), recording each in
    `state`."""

    settings: AgentSettings
    root: Path
    state: StateDir
    systemctl: Systemctl
    reporting: Reporting
    clock: Clock = system_clock
    log: LogFn = no_log

    def request(self, current: RenderedConfig | None, pending: Pending, reason: str) -> SyncResult:
        """Record the request (this boot's ID, the time, one more attempt), then run the reboot command."""
        pending = replace(pending, phase="rebooting", reboot_attempts=pending.reboot_attempts + 1,
                          boot_id=boot_id(self.root), requested_at=self.clock().timestamp())
        self.state.set_pending(pending)
        target = pending.config
        self.reporting.working(current, target, reason, phase="reboot-requested", detail=pending.boot_id)
        self.reporting.aim = "rebooted"
        try:
            self.run_command(reason)
        except ApplyError as exc:
            return self.reporting.result("Degraded", str(exc), current, target.name)
        return SyncResult("Working", f"waiting for reboot into {target.name}", current.name if current else "",
                          target.name, rebooting=True, changed=True)

    def step(self, pending: Pending) -> str:
        """What this sync does about `pending`'s reboot: `wait`, `request`, `give-up` or `verify`."""
        return reboot_step(recorded=pending.boot_id, booted=boot_id(self.root),
                           waited=self.clock().timestamp() - pending.requested_at, wait=self.settings.reboot_wait,
                           attempts=pending.reboot_attempts, limit=MAX_REBOOT_ATTEMPTS)

    def can_reboot(self) -> bool:
        """Whether there is a way to reboot: a `--reboot-command`, or `systemctl reboot` on a live system."""
        return bool(self.settings.reboot_command or self.systemctl.live)

    def run_command(self, reason: str) -> None:
        """Run the reboot command (only logged when there is none)."""
        command = self.settings.reboot_command
        if command is None and self.systemctl.live:
            command = "systemctl reboot"
        if not command:
            self.log(f"reboot required ({reason}) but no --reboot-command is configured")
            return
        self.log(f"rebooting: {reason}")
        proc = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0:
            raise PermanentError("reboot", f"`{command}` exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
