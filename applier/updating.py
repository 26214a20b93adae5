"""The agent's updating part: from the current config (or, on a node with no state, what is already on disk) to
the desired one.

Report Working; refuse what is not reconcilable (Degraded, nothing changed); record pending (`applying`); pull
the OS image before the drain (the drained window is writes + reboot); drain hook if the disruption needs it;
write the plan (applier/writing.py); stage OS changes through the backend; then either request the reboot
(applier/rebooting.py) or run the post-config actions and write currentconfig (Done once the health gate passes,
applier/health.py). A failure while applying puts the old config's files and units back and reports Degraded
naming the cause. The first sync on a node with no state adopts what is already on disk: entries that already
match the desired config are not rewritten and do not count as changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from applier.backends.base import Backend
from applier.errors import ApplyError
from applier.health import Health
from applier.planning import Planner
from applier.rebooting import Rebooter
from applier.repairing import Repairer
from applier.reporting import Reporting
from applier.settings import AgentSettings, SyncResult
from applier.state import Pending, StateDir
from applier.writing import Writer, removed_paths
from fleet.reconcile import not_reconcilable_message
from fleet.rendered import RenderedConfig

IGNITION_PRESET = "/etc/systemd/system-preset/20-ignition.preset"


@dataclass(eq=False)
class Updater:
    """Moves the node to a new config with the parts that plan, write, reboot, gate and report."""

    settings: AgentSettings
    state: StateDir
    backend: Backend
    planner: Planner
    writer: Writer
    repairer: Repairer
    rebooter: Rebooter
    health: Health
    reporting: Reporting

    def update(self, current: RenderedConfig | None, desired: RenderedConfig,
               pending: Pending | None, *, repair: bool = False) -> SyncResult:
        """Move from `current` to `desired` (module docstring); `repair`: an explicit drift repair, which a
        refused target turns into a repair of the current config."""
        first_run, report, hooks, node = current is None, self.reporting, self.settings.hooks, self.settings.node
        if pending is not None:  # an interrupted update: sweep the temp files a kill may have left
            self.writer.sweep([current, pending.config, desired])
        plan = self.planner.plan(current, desired, pending)
        if plan.unreconcilable:
            message = not_reconcilable_message(current.name if current else "", desired.name,
                                               "; ".join(plan.unreconcilable))
            note, left = self.repairer.note(current, repair)  # the node stays at current: its drift is known
            return report.result("Degraded", message + note + left, current, desired.name)
        report.working(current, desired, f"applying {desired.name}: {plan.disruption.verdict}", phase="prepared")
        previous = current.name if current else None
        # the paths leaving the config, with those of an interrupted update: their markers go at the end
        drop = tuple(sorted({*removed_paths(plan), *(pending.drop if pending is not None else ())}))
        self.state.set_pending(Pending(desired, "applying", previous=previous, drop=drop))
        drained = pulled = False
        try:
            if plan.stage_os and plan.diff.os_image:  # pulled before the drain: the drained window is writes + reboot
                report.aim = "image-staged"
                pulled = bool(note := self.backend.prefetch(plan.new, plan.old))
                if pulled:
                    report.working(current, desired, f"applying {desired.name}: {note}", phase="image-staged")
            if first_run:
                self.writer.adopt(plan.old)
                # as the MCD's first run: Ignition's presets would fight later enable/disable decisions
                (self.writer.root / IGNITION_PRESET.lstrip("/")).unlink(missing_ok=True)
            if plan.disruption.drain:
                report.aim = "drained"
                drained = report.drained = hooks.run_drain(node)
                if drained:
                    report.enter("drained", current, desired)
            report.aim = "written"
            self.writer.apply(plan, first_run=first_run)
            report.enter("written", current, desired)
            report.aim = "image-staged" if not pulled else "written"
            staged = self.backend.stage(plan.diff, plan.old, plan.new) if plan.stage_os else {}
            if plan.stage_os and not pulled:  # (a backend that pulls while drained stages here)
                report.enter("image-staged", current, desired)
        except ApplyError as exc:
            self.writer.undo(plan)
            self.state.clear_pending()
            report.drained = False  # (the node stays cordoned; its Degraded report waits and retries as any)
            return report.result("Degraded", f"failed to apply {desired.name}: {exc}", current, desired.name)
        self.writer.files.flush()
        if plan.disruption.reboot:
            return self.rebooter.request(current, Pending(desired, "rebooting", previous=previous, staged=staged,
                                                          drop=drop), f"Node will reboot into config {desired.name}")
        report.aim = "done"
        try:
            actions = self.writer.post_actions(plan.disruption)
        except ApplyError as exc:
            return report.result("Degraded", f"post-config action failed: {exc}", current, desired.name)
        self.writer.settle(desired, drop)
        report.aim = "uncordoned"
        try:
            if drained and hooks.run_uncordon(node):
                report.drained = False
                report.enter("uncordoned", desired, desired)
        except ApplyError as exc:
            return report.result("Degraded", str(exc), desired, desired.name)
        detail = f"; actions: {', '.join(actions)}" if actions else ""
        return self.health.gated_done(desired, previous or "",
                                      f"applied {desired.name} without reboot ({plan.disruption.verdict}){detail}",
                                      changed=True)
