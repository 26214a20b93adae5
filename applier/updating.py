"""The update half of a sync: from the current config (or, on a node with no state, what is already on
disk) to the desired one.

Report Working; refuse what is not reconcilable (Degraded, nothing changed); record pending (`applying`);
drain hook if the disruption needs it; files, stale files, units, stale units, SSH keys; stage OS changes
through the backend; then either request the reboot (applier/rebooting.py) or run the post-config actions
and write currentconfig (Done). A failure while applying puts the old config's files and units back and
reports Degraded naming the cause. The first sync on a node with no state adopts what is already on disk:
entries that already match the desired config are not rewritten and do not count as changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from applier.agentbase import removed_paths
from applier.drift import watched_paths
from applier.errors import ApplyError
from applier.plan import make_plan
from applier.rebooting import RebootSteps
from applier.settings import SyncResult
from applier.ssh import keys_bytes, keys_path
from applier.state import Pending
from applier.verify import check_bytes, check_file, check_unit
from fleet.diff import files_of, units_of
from fleet.disruption import Disruption
from fleet.reconcile import not_reconcilable_message
from fleet.rendered import MachineConfigSpec, RenderedConfig

IGNITION_PRESET = "/etc/systemd/system-preset/20-ignition.preset"


class UpdateSteps(RebootSteps):
    """Applying a new config."""

    # --- first run: adopt what is on disk -------------------------------------------------------------------

    def baseline(self, desired: MachineConfigSpec) -> MachineConfigSpec:
        """The old side for a node with no recorded state: the desired entries already on disk, the booted OS."""
        cfg = desired.config or {}
        ok_files = [e for e in files_of(cfg).values() if check_file(self.root, e) is None]
        ok_units = [u for u in units_of(cfg).values() if not check_unit(self.root, u, self.systemctl)]
        # users and groups were created at first boot (Ignition): kept as they are; core's key file is
        # checked separately (`_keys_out_of_date`) and rewritten when it differs
        config: dict[str, Any] = {k: v for k, v in cfg.items() if k not in ("storage", "systemd")}
        storage = {k: v for k, v in (cfg.get("storage") or {}).items() if k != "files"}
        config["storage"] = {**storage, "files": ok_files}
        config["systemd"] = {**{k: v for k, v in (cfg.get("systemd") or {}).items() if k != "units"},
                             "units": ok_units}
        booted = self.backend.booted()
        if booted is None:
            return replace(desired, config=config)
        image = desired.os_image_url if not desired.os_image_url or booted.image == desired.os_image_url \
            else booted.image
        kargs = tuple(a for a in desired.kernel_arguments if a in booted.kargs)
        return replace(desired, config=config, os_image_url=image, kernel_arguments=kargs)

    def _keys_out_of_date(self, config: Mapping[str, Any]) -> bool:
        """True when core's key file does not hold the config's keys."""
        keys_file = keys_path(self.root)
        return keys_file is not None and check_bytes(self.root, keys_file, keys_bytes(config), 0o600) is not None

    def _adopt(self, spec: MachineConfigSpec) -> None:
        """Stamp the adopted entries as ours, so they are deleted (not left) when they leave the config."""
        for path in files_of(spec.config or {}):
            self.files.adopt(path)


    # --- applying -------------------------------------------------------------------------------------------

    def _post_actions(self, d: Disruption) -> list[str]:
        """Run the disruption's actions on a live system (the ones run, in order); under a directory root there
        is no running service to act on, so none is run."""
        done = []
        if d.daemon_reload and self.systemctl.live_action("daemon-reload"):
            done.append("daemon-reload")
        for unit in d.reload_units:
            if self.systemctl.live_action("reload", unit):
                done.append(f"reload {unit}")
        for unit in d.restart_units:
            if self.systemctl.live_action("restart", unit):
                done.append(f"restart {unit}")
        if any(a.type == "Special" for a in d.actions) and self.systemctl.live_action("reload", "crio.service"):
            done.append("reload crio.service")
        return done


    def update(self, current: RenderedConfig | None, desired: RenderedConfig,
               pending: Pending | None, *, repair: bool = False) -> SyncResult:
        """Move from `current` to `desired` (module docstring); `repair`: an explicit drift repair, which a
        refused target turns into a repair of the current config."""
        first_run = current is None
        old_spec = current.spec if current is not None else self.baseline(desired.spec)
        manage_os = self.backend.name != "none"
        interrupted = pending.config.spec if pending is not None and pending.config.name != desired.name else None
        if pending is not None:  # an interrupted update: sweep the temp files a kill may have left
            self._sweep([current, pending.config, desired])
        plan = make_plan(old_spec, desired.spec, policy=self._policy(desired), manage_os=manage_os,
                         overrides=self.settings.overrides, interrupted=interrupted)
        if first_run and not plan.write_ssh and self._keys_out_of_date(desired.spec.config or {}):
            plan = replace(plan, write_ssh=True)
        if plan.unreconcilable:
            message = not_reconcilable_message(current.name if current else "", desired.name,
                                               "; ".join(plan.unreconcilable))
            note, left = self._repair_note(current, repair)  # the node stays at current: its drift is known
            return self.reporting.result("Degraded", message + note + left, current, desired.name)
        self.reporting.working(current, desired, f"applying {desired.name}: {plan.disruption.verdict}", phase="prepared")
        previous = current.name if current else None
        # the paths leaving the config, with those of an interrupted update: their markers go at the end
        drop = tuple(sorted({*removed_paths(plan), *(pending.drop if pending is not None else ())}))
        self.state.set_pending(Pending(desired, "applying", previous=previous, drop=drop))
        drained = pulled = False
        try:
            if plan.stage_os and plan.diff.os_image:  # pulled before the drain: the drained window is writes + reboot
                self.reporting.aim = "image-staged"
                pulled = bool(note := self.backend.prefetch(plan.new))
                if pulled:
                    self.reporting.working(current, desired, f"applying {desired.name}: {note}", phase="image-staged")
            if first_run:
                self._adopt(old_spec)
                # as the MCD's first run: Ignition's presets would fight later enable/disable decisions
                (self.root / IGNITION_PRESET.lstrip("/")).unlink(missing_ok=True)
            if plan.disruption.drain:
                self.reporting.aim = "drained"
                drained = self.settings.hooks.run_drain(self.settings.node)
                if drained:
                    self.reporting.enter("drained", current, desired)
            self.reporting.aim = "written"
            self._apply_plan(plan, first_run=first_run)
            self.reporting.enter("written", current, desired)
            self.reporting.aim = "image-staged" if not pulled else "written"
            staged = self.backend.stage(plan.diff, plan.old, plan.new) if plan.stage_os else {}
            if plan.stage_os and not pulled:  # (a backend that pulls while drained stages here)
                self.reporting.enter("image-staged", current, desired)
        except ApplyError as exc:
            self.files.drop_markers(self._revert(plan), keep=watched_paths(plan.old.config or {}))
            self.state.clear_pending()
            return self.reporting.result("Degraded", f"failed to apply {desired.name}: {exc}", current, desired.name)
        self.files.flush()
        if plan.disruption.reboot:
            return self.request_reboot(current, Pending(desired, "rebooting", previous=previous, staged=staged,
                                                        drop=drop),
                                       f"Node will reboot into config {desired.name}")
        self.reporting.aim = "done"
        try:
            actions = self._post_actions(plan.disruption)
        except ApplyError as exc:
            return self.reporting.result("Degraded", f"post-config action failed: {exc}", current, desired.name)
        self._settle(desired, drop)
        self.reporting.aim = "uncordoned"
        try:
            if drained and self.settings.hooks.run_uncordon(self.settings.node):
                self.reporting.enter("uncordoned", desired, desired)
        except ApplyError as exc:
            return self.reporting.result("Degraded", str(exc), desired, desired.name)
        verdict = plan.disruption.verdict
        detail = f"; actions: {', '.join(actions)}" if actions else ""
        return self.gated_done(desired, previous or "", f"applied {desired.name} without reboot ({verdict}){detail}",
                               changed=True)

