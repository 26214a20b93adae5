"""The reboot half of an update: request the reboot (recording the boot that asked), then on a later sync
either wait (same boot), ask again after `reboot_wait` seconds (up to MAX_REBOOT_ATTEMPTS requests, then
Degraded), or verify the node in the new boot (applier/boot.py has the rule; notes on the MCD there).

Verification after the reboot: the backend's booted deployment against the staged one (booted the previous
deployment: reboot again, within the same limit), then the OS fields and the disk against the pending
config; a mismatch is Degraded with the MCD's text, or, with `rollback`, the previous deployment made the
default, the old files put back and a reboot into them.
"""

from __future__ import annotations

from dataclasses import replace

from applier.boot import boot_id, reboot_step
from applier.errors import ApplyError
from applier.health import HealthSteps
from applier.plan import effective, make_plan
from applier.repairing import RepairSteps
from applier.settings import SyncResult
from applier.state import Pending
from applier.verify import on_disk_message, verify_config
from fleet.rendered import RenderedConfig

MAX_REBOOT_ATTEMPTS = 3


class RebootSteps(RepairSteps, HealthSteps):
    """Requesting a reboot and checking the node after it."""

    def request_reboot(self, current: RenderedConfig | None, pending: Pending, reason: str) -> SyncResult:
        """Record the request (this boot's ID, the time, one more attempt), then run the reboot command."""
        pending = replace(pending, phase="rebooting", reboot_attempts=pending.reboot_attempts + 1,
                          boot_id=boot_id(self.root), requested_at=self.clock().timestamp())
        self.state.set_pending(pending)
        target = pending.config
        self.reporting.working(current, target, reason, phase="reboot-requested", detail=pending.boot_id)
        self.reporting.aim = "rebooted"
        try:
            self._reboot(reason)
        except ApplyError as exc:
            return self.reporting.result("Degraded", str(exc), current, target.name)
        return SyncResult("Working", f"waiting for reboot into {target.name}", current.name if current else "",
                          target.name, rebooting=True, changed=True)

    def after_reboot(self, current: RenderedConfig | None, pending: Pending, *, repair: bool,
                     explicit: bool = False) -> SyncResult:
        """A sync with an update waiting for its reboot: wait, ask again, give up, or verify the new boot.

        `repair`: drift found by the post-reboot check is restored (and named) instead of degrading the node;
        `explicit` (`--once --repair`): drift is repaired against the pending config while still waiting too.
        """
        target = pending.config
        step = reboot_step(recorded=pending.boot_id, booted=boot_id(self.root),
                           waited=self.clock().timestamp() - pending.requested_at, wait=self.settings.reboot_wait,
                           attempts=pending.reboot_attempts, limit=MAX_REBOOT_ATTEMPTS)
        if step in ("wait", "give-up"):
            note, left = self._repair_note(target, explicit)
            if step == "wait" and not left:
                return self.reporting.result("Working", f"waiting for reboot into {target.name}{note}", current,
                                    target.name, rebooting=True)
            message = (f"reboot into {target.name} did not happen: the boot ID is unchanged after "
                       f"{pending.reboot_attempts} reboot requests" if step == "give-up"
                       else f"waiting for reboot into {target.name}")
            return self.reporting.result("Degraded", message + note + left, current, target.name)
        if step == "request":
            return self.request_reboot(current, pending, f"Node will reboot into config {target.name}")
        self.reporting.enter("rebooted", current, target, boot_id(self.root))
        self.reporting.aim = "verified"
        staged_id = str(pending.staged.get("id") or "")
        booted = self.backend.booted()
        if staged_id and booted is not None and booted.id != staged_id \
                and booted.id == pending.staged.get("previous") and pending.reboot_attempts < MAX_REBOOT_ATTEMPTS:
            return self.request_reboot(current, pending, f"Node will reboot into config {target.name}")
        spec = effective(current.spec if current else target.spec, target.spec,
                         manage_os=self.backend.name != "none")
        self.drift.forget()  # everything is read again in a new boot
        os_problems = self.backend.verify(spec, pending.staged)
        if os_problems:
            message = on_disk_message(target.name, os_problems + verify_config(
                self.root, target.spec.config or {}, systemctl=self.systemctl))
            if self.settings.rollback and staged_id and current is not None and current.name != target.name:
                return self._roll_back(current, target, pending, message)
            return self.reporting.result("Degraded", message, current, target.name)
        found = self._check_drift(target, repair=repair)  # services start fresh in this boot: no actions
        if found.left:
            return self.reporting.result("Degraded", on_disk_message(target.name, found.left), current, target.name)
        self.reporting.enter("verified", current, target)
        self._settle(target, pending.drop)
        failed = self.state.failed()
        if failed and current is not None and failed.get("name") != target.name:
            # back on the previous config after a rollback: healthy, but the target is still out of reach
            return self.reporting.result("Degraded", str(failed.get("message", "")), target, str(failed.get("name")))
        self.reporting.aim = "uncordoned"
        try:
            if self.settings.hooks.run_uncordon(self.settings.node):
                self.reporting.enter("uncordoned", target, target)
        except ApplyError as exc:
            return self.reporting.result("Degraded", str(exc), target, target.name)
        note = f"; repaired drift: {', '.join(found.names)}" if found.names else ""
        return self.gated_done(target, pending.previous or "", f"rebooted into {target.name}; verification passed{note}",
                               changed=True)

    def _roll_back(self, current: RenderedConfig, target: RenderedConfig, pending: Pending,
                   message: str) -> SyncResult:
        """Verification failed: previous deployment as the default, old files back, reboot into it."""
        try:
            self.backend.rollback()
        except ApplyError as exc:
            return self.reporting.result("Degraded", f"{message}; rollback failed: {exc}", current, target.name)
        drop = self._revert(make_plan(current.spec, target.spec, manage_os=self.backend.name != "none"))
        previous = str(pending.staged.get("previous") or "")
        message += f"; rolled back to deployment {previous}"
        self.state.set_failed(target.name, message)
        back = Pending(current, "rebooting", previous=current.name,
                       staged={"id": previous, "previous": pending.staged.get("id")}, drop=drop)
        self.request_reboot(current, back, f"rolling back to config {current.name}")
        return self.reporting.result("Degraded", message, current, target.name, rebooting=True)
