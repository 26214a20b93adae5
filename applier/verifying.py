"""The agent's post-reboot part: a sync with an update waiting for its reboot waits, asks again, gives up, or
verifies the new boot.

Verification after the reboot: the backend's booted deployment against the staged one (booted the previous
deployment: reboot again, within MAX_REBOOT_ATTEMPTS), then the OS fields and the disk against the pending
config; a mismatch is Degraded with the MCD's text, or, with `rollback`, the previous deployment made the
default, the old files put back and a reboot into them. Verified: currentconfig written, uncordon, and Done once
the pool's health gate passes (applier/health.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from applier.backends.base import Backend
from applier.boot import boot_id
from applier.errors import ApplyError
from applier.health import Health
from applier.plan import effective, make_plan
from applier.rebooting import MAX_REBOOT_ATTEMPTS, Rebooter
from applier.repairing import Repairer
from applier.reporting import Reporting
from applier.settings import AgentSettings, SyncResult
from applier.state import Pending, StateDir
from applier.verify import on_disk_message, verify_config
from applier.writing import Writer
from fleet.rendered import RenderedConfig


@dataclass(eq=False)
class AfterReboot:
    """Settles an update after its reboot, with the parts that check, write, reboot, gate and report."""

    settings: AgentSettings
    state: StateDir
    backend: Backend
    writer: Writer
    repairer: Repairer
    rebooter: Rebooter
    health: Health
    reporting: Reporting

    def check(self, current: RenderedConfig | None, pending: Pending, *, repair: bool,
             explicit: bool = False) -> SyncResult:
        """Wait, ask again, give up, or verify the new boot (module docstring).

        `repair`: drift found by the post-reboot check is restored (and named) instead of degrading the node;
        `explicit` (`--once --repair`): drift is repaired against the pending config while still waiting too.
        """
        target, report = pending.config, self.reporting
        step = self.rebooter.step(pending)
        if step in ("wait", "give-up"):
            note, left = self.repairer.note(target, explicit)
            if step == "wait" and not left:
                return report.result("Working", f"waiting for reboot into {target.name}{note}", current,
                                     target.name, rebooting=True)
            message = (f"reboot into {target.name} did not happen: the boot ID is unchanged after "
                       f"{pending.reboot_attempts} reboot requests" if step == "give-up"
                       else f"waiting for reboot into {target.name}")
            return report.result("Degraded", message + note + left, current, target.name)
        if step == "request":
            return self.rebooter.request(current, pending, f"Node will reboot into config {target.name}")
        root = self.writer.root
        report.enter("rebooted", current, target, boot_id(root))
        report.aim = "verified"
        staged_id = str(pending.staged.get("id") or "")
        booted = self.backend.booted()
        if staged_id and booted is not None and booted.id != staged_id \
                and booted.id == pending.staged.get("previous") and pending.reboot_attempts < MAX_REBOOT_ATTEMPTS:
            return self.rebooter.request(current, pending, f"Node will reboot into config {target.name}")
        spec = effective(current.spec if current else target.spec, target.spec,
                         manage_os=self.backend.name != "none")
        self.repairer.drift.forget()  # everything is read again in a new boot
        os_problems = self.backend.verify(spec, pending.staged)
        if os_problems:
            message = on_disk_message(target.name, os_problems + verify_config(
                root, target.spec.config or {}, systemctl=self.writer.systemctl))
            if self.settings.rollback and staged_id and current is not None and current.name != target.name:
                return self._roll_back(current, target, pending, message)
            return report.result("Degraded", message, current, target.name)
        found = self.repairer.check(target, repair=repair)  # services start fresh in this boot: no actions
        if found.left:
            return report.result("Degraded", on_disk_message(target.name, found.left), current, target.name)
        report.enter("verified", current, target)
        self.writer.settle(target, pending.drop)
        failed = self.state.failed()
        if failed and current is not None and failed.get("name") != target.name:
            # back on the previous config after a rollback: healthy, but the target is still out of reach
            return report.result("Degraded", str(failed.get("message", "")), target, str(failed.get("name")))
        report.aim = "uncordoned"
        try:
            if self.settings.hooks.run_uncordon(self.settings.node):
                report.drained = False
                report.enter("uncordoned", target, target)
        except ApplyError as exc:
            return report.result("Degraded", str(exc), target, target.name)
        return self.health.gated_done(target, pending.previous or "",
                                      f"rebooted into {target.name}; verification passed{found.note()}", changed=True)

    def _roll_back(self, current: RenderedConfig, target: RenderedConfig, pending: Pending,
                   message: str) -> SyncResult:
        """Verification failed: previous deployment as the default, old files back, reboot into it."""
        try:
            self.backend.rollback()
        except ApplyError as exc:
            return self.reporting.result("Degraded", f"{message}; rollback failed: {exc}", current, target.name)
        drop = self.writer.revert(make_plan(current.spec, target.spec, manage_os=self.backend.name != "none"))
        previous = str(pending.staged.get("previous") or "")
        message += f"; rolled back to deployment {previous}"
        self.state.set_failed(target.name, message)
        back = Pending(current, "rebooting", previous=current.name,
                       staged={"id": previous, "previous": pending.staged.get("id")}, drop=drop)
        self.rebooter.request(current, back, f"rolling back to config {current.name}")
        return self.reporting.result("Degraded", message, current, target.name, rebooting=True)
