"""The on-node agent: one `sync()` moves the node one step towards its desired config; `run()` loops.

Flow of a sync (notes/mco.md §4.2–4.7):
  1. A pending update in phase `rebooting` means we are after the reboot (or it never happened): check the
     booted deployment, verify the disk against the pending config, then Done (currentconfig written,
     uncordon) or Degraded with the exact mismatch (optionally rolling back to the previous deployment).
  2. Fetch the desired config. Same as current -> drift check (repair or report).
  3. Otherwise update: report Working; refuse what is not reconcilable (Degraded, nothing changed);
     record pending (`applying`); drain hook if the disruption needs it; files, stale files, units,
     stale units, SSH keys; stage OS changes through the backend; then either record `rebooting` and run
     the reboot command, or run the post-config actions and write currentconfig (Done).
A failure while applying puts the old config's files and units back and reports Degraded naming the
cause. A kill at any point leaves pending (never a currentconfig ahead of the disk); the next sync redoes
the update idempotently. The first sync on a node with no state adopts what is already on disk: entries
that already match the desired config are not rewritten and do not count as changes.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from applier.atomic import sweep_temp
from applier.backends.base import Backend
from applier.drift import DriftChecker, Watcher, watched_paths
from applier.errors import ApplyError, PermanentError, TemporaryError
from applier.fetch import DesiredSource
from applier.files import FileWriter, host_path
from applier.hooks import Hooks
from applier.plan import Plan, effective, make_plan
from applier.report import NodeReport, Reporter
from applier.runner import CommandRunner
from applier.ssh import keys_bytes, keys_path, write_keys
from applier.state import Pending, StateDir
from applier.units import Systemctl, UnitWriter
from applier.verify import check_bytes, check_file, check_unit, on_disk_message, verify_config
from fleet.diff import files_of, units_of
from fleet.disruption import DisruptionPolicy, PolicyError, policy_from_annotations
from fleet.reconcile import not_reconcilable_message
from fleet.rendered import RENDERED_PREFIX, MachineConfigSpec, RenderedConfig

NODE_ANNOTATIONS = "node-annotations.json"
IGNITION_PRESET = "/etc/systemd/system-preset/20-ignition.preset"
MAX_REBOOT_ATTEMPTS = 2


@dataclass(frozen=True)
class AgentSettings:
    """How the agent runs on this node.

    root: the node's filesystem (`/` live); state_dir: defaults to <root>/etc/machine-config-daemon;
    backend: which OS backend manages images and kernel arguments; reboot_command: shell command run
    to reboot (default `systemctl reboot` on `/`, none elsewhere); drift: `repair` or `report`;
    policy: disruption policy overriding the one the rendered config carries; rollback: roll back to
    the previous deployment when post-reboot verification fails.
    """

    node: str
    root: Path = Path("/")
    state_dir: Path | None = None
    pool: str | None = None
    reboot_command: str | None = None
    drift: str = "repair"
    interval: float = 60.0
    policy: DisruptionPolicy | None = None
    overrides: tuple[str, ...] = ()
    hooks: Hooks = field(default_factory=Hooks)
    rollback: bool = False
    durable: bool = True

    @property
    def state_path(self) -> Path:
        """The state directory."""
        return self.state_dir or self.root / "etc" / "machine-config-daemon"


@dataclass(frozen=True)
class SyncResult:
    """What one sync ended with."""

    state: str  # Done | Working | Degraded
    message: str
    current: str
    desired: str
    rebooting: bool = False
    changed: bool = False


def pool_of(name: str) -> str:
    """The pool in a rendered name `rendered-<pool>-<hash>`."""
    if name.startswith(RENDERED_PREFIX) and "-" in name[len(RENDERED_PREFIX):]:
        return name[len(RENDERED_PREFIX):].rsplit("-", 1)[0]
    return ""


class Agent:
    """One node's applier (composition: settings, a desired-config source, a reporter, a backend, a runner)."""

    def __init__(self, settings: AgentSettings, *, source: DesiredSource, reporter: Reporter, backend: Backend,
                 runner: CommandRunner, log: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self.source = source
        self.reporter = reporter
        self.backend = backend
        self.runner = runner
        self.root = Path(settings.root)
        self.state = StateDir(settings.state_path)
        self.files = FileWriter(self.root, self.state, durable=settings.durable)
        self.systemctl = Systemctl(runner, self.root)
        self.units = UnitWriter(self.root, self.files, self.systemctl)
        self.drift = DriftChecker(self.root, self.systemctl)
        self.log = log or (lambda message: None)
        self._stop = False

    # --- reporting ------------------------------------------------------------------------------------------

    def _pool(self, current: RenderedConfig | None, desired: RenderedConfig | None = None) -> str:
        if self.settings.pool:
            return self.settings.pool
        for config in (current, desired):
            if config is not None and config.pool:
                return config.pool
        annotations = self.root / "etc" / "machine-config-daemon" / NODE_ANNOTATIONS  # appended by the server
        try:
            data = json.loads(annotations.read_text())
            name = str(data.get("machineconfiguration.openshift.io/currentConfig", ""))
        except (OSError, ValueError, AttributeError):
            name = ""
        return pool_of(name)

    def _result(self, state: str, message: str, current: RenderedConfig | None, desired: str, **kw: Any) -> SyncResult:
        result = SyncResult(state=state, message=message, current=current.name if current else "", desired=desired,
                            **kw)
        report = NodeReport(node=self.settings.node, pool=self._pool(current), current=result.current,
                            desired=desired, state=state, message=message)
        self._send(report)
        return result

    def _send(self, report: NodeReport) -> None:
        """Deliver a report; an undelivered one stays in the state dir for the next sync."""
        last = self.state.last_report()
        body = {"node": report.node, **report.body()}
        if last and last.get("report") == body and last.get("acked"):
            return
        acked = self.reporter.send(report)
        self.state.set_last_report({"report": body, "acked": bool(acked)})

    def _working(self, current: RenderedConfig | None, desired: RenderedConfig, message: str) -> None:
        self._send(NodeReport(node=self.settings.node, pool=self._pool(current, desired),
                              current=current.name if current else "", desired=desired.name, state="Working",
                              message=message))

    # --- policy ---------------------------------------------------------------------------------------------

    def _policy(self, desired: RenderedConfig) -> DisruptionPolicy:
        if self.settings.policy is not None:
            return self.settings.policy
        try:
            return policy_from_annotations(desired.annotations)
        except PolicyError as exc:
            raise PermanentError(exc.path, exc.message) from exc

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

    def _apply_plan(self, plan: Plan, *, first_run: bool) -> None:
        """Files, stale files, units, stale units, SSH keys (in that order)."""
        old_paths = set(files_of(plan.old.config or {}))
        for entry in plan.write_files:
            self.files.write(entry, managed_before=str(entry.get("path")) in old_paths and not first_run)
        for path in plan.remove_files:
            self.files.remove(path)
        old_units = set(units_of(plan.old.config or {}))
        for unit in plan.write_units:
            self.units.write_unit(unit, managed_before=str(unit.get("name")) in old_units)
        for key in plan.remove_dropins:
            self.units.remove_dropin(key)
        for name in plan.remove_units:
            self.units.remove_unit(name)
        if plan.write_units:
            self.units.set_enablement(plan.write_units)
        if plan.write_ssh:
            write_keys(self.root, plan.new.config or {}, durable=self.settings.durable)
        self.drift.forget([str(e.get("path")) for e in plan.write_files] + list(plan.remove_files))

    def _revert(self, plan: Plan) -> None:
        """Put the old config's files and units back after a failed update (best effort)."""
        back = make_plan(plan.new, plan.old, leftover_paths=[str(e.get("path")) for e in plan.write_files])
        try:
            self._apply_plan(back, first_run=False)
        except ApplyError as exc:
            self.log(f"revert incomplete: {exc}")
        self.files.flush()

    def _sweep(self, configs: Iterable[RenderedConfig | None]) -> None:
        dirs = {host_path(self.root, p).parent for c in configs if c is not None
                for p in watched_paths(c.spec.config or {})}
        for directory in dirs:
            sweep_temp(directory)

    def _post_actions(self, plan: Plan) -> list[str]:
        """Run the disruption's actions on a live system; under a directory root they are listed, not run."""
        done = []
        d = plan.disruption
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

    def _reboot(self, reason: str) -> None:
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

    def update(self, current: RenderedConfig | None, desired: RenderedConfig,
               pending: Pending | None) -> SyncResult:
        """Move from `current` to `desired` (steps 3 of the module docstring)."""
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
            return self._result("Degraded", message, current, desired.name)
        self._working(current, desired, f"applying {desired.name}: {plan.disruption.verdict}")
        previous = current.name if current else None
        self.state.set_pending(Pending(desired, "applying", previous=previous))
        drained = False
        try:
            if first_run:
                self._adopt(old_spec)
                # as the MCD's first run: Ignition's presets would fight later enable/disable decisions
                (self.root / IGNITION_PRESET.lstrip("/")).unlink(missing_ok=True)
            if plan.disruption.drain:
                drained = self.settings.hooks.run_drain(self.settings.node)
            self._apply_plan(plan, first_run=first_run)
            staged = self.backend.stage(plan.diff, plan.old, plan.new) if plan.stage_os else {}
        except ApplyError as exc:
            self._revert(plan)
            self.state.clear_pending()
            return self._result("Degraded", f"failed to apply {desired.name}: {exc}", current, desired.name)
        self.files.flush()
        if plan.disruption.reboot:
            self.state.set_pending(Pending(desired, "rebooting", previous=previous, staged=staged,
                                           reboot_attempts=1))
            self._working(current, desired, f"Node will reboot into config {desired.name}")
            try:
                self._reboot(f"Node will reboot into config {desired.name}")
            except ApplyError as exc:
                return self._result("Degraded", str(exc), current, desired.name)
            return SyncResult("Working", f"rebooting into {desired.name}", previous or "", desired.name,
                              rebooting=True, changed=True)
        try:
            actions = self._post_actions(plan)
        except ApplyError as exc:
            return self._result("Degraded", f"post-config action failed: {exc}", current, desired.name)
        self.state.set_current(desired)
        self.state.clear_pending()
        try:
            if drained:
                self.settings.hooks.run_uncordon(self.settings.node)
        except ApplyError as exc:
            return self._result("Degraded", str(exc), desired, desired.name)
        verdict = plan.disruption.verdict
        detail = f"; actions: {', '.join(actions)}" if actions else ""
        return self._result("Done", f"applied {desired.name} without reboot ({verdict}){detail}", desired,
                            desired.name, changed=True)

    # --- after the reboot -----------------------------------------------------------------------------------

    def after_reboot(self, current: RenderedConfig | None, pending: Pending) -> SyncResult:
        """Verify the node after (what should have been) the reboot into `pending.config`."""
        target = pending.config
        staged_id = str(pending.staged.get("id") or "")
        booted = self.backend.booted()
        if staged_id and booted is not None and booted.id != staged_id \
                and booted.id == pending.staged.get("previous") and pending.reboot_attempts < MAX_REBOOT_ATTEMPTS:
            self.state.set_pending(replace(pending, reboot_attempts=pending.reboot_attempts + 1))
            self._reboot(f"Node will reboot into config {target.name}")
            return SyncResult("Working", f"rebooting into {target.name}", current.name if current else "",
                              target.name, rebooting=True)
        spec = effective(current.spec if current else target.spec, target.spec,
                         manage_os=self.backend.name != "none")
        problems = self.backend.verify(spec, pending.staged) + verify_config(self.root, target.spec.config or {},
                                                                             systemctl=self.systemctl)
        if problems:
            message = on_disk_message(target.name, problems)
            if self.settings.rollback and staged_id and current is not None and current.name != target.name:
                return self._roll_back(current, target, pending, message)
            return self._result("Degraded", message, current, target.name)
        self.state.set_current(target)
        self.state.clear_pending()
        failed = self.state.failed()
        if failed and current is not None and failed.get("name") != target.name:
            # back on the previous config after a rollback: healthy, but the target is still out of reach
            return self._result("Degraded", str(failed.get("message", "")), target, str(failed.get("name")))
        try:
            self.settings.hooks.run_uncordon(self.settings.node)
        except ApplyError as exc:
            return self._result("Degraded", str(exc), target, target.name)
        return self._result("Done", f"rebooted into {target.name}; verification passed", target, target.name,
                            changed=True)

    def _roll_back(self, current: RenderedConfig, target: RenderedConfig, pending: Pending,
                   message: str) -> SyncResult:
        """Verification failed: previous deployment as the default, old files back, reboot into it."""
        try:
            self.backend.rollback()
        except ApplyError as exc:
            return self._result("Degraded", f"{message}; rollback failed: {exc}", current, target.name)
        self._revert(make_plan(current.spec, target.spec, manage_os=self.backend.name != "none"))
        previous = str(pending.staged.get("previous") or "")
        message += f"; rolled back to deployment {previous}"
        self.state.set_failed(target.name, message)
        self.state.set_pending(Pending(current, "rebooting", previous=current.name,
                                       staged={"id": previous, "previous": pending.staged.get("id")},
                                       reboot_attempts=1))
        result = self._result("Degraded", message, current, target.name, rebooting=True)
        self._reboot(f"rolling back to config {current.name}")
        return result

    # --- drift ----------------------------------------------------------------------------------------------

    def check_drift(self, current: RenderedConfig, *, repair: bool) -> SyncResult:
        """Files/units changed behind our back: restore them (repair) or report Degraded naming the path."""
        files, units, problems = self.drift.check(current.spec.config or {})
        if not problems:
            return self._result("Done", "", current, current.name)
        if not repair:
            return self._result("Degraded", on_disk_message(current.name, problems), current, current.name)
        cfg = current.spec.config or {}
        entries = files_of(cfg)
        unit_entries = units_of(cfg)
        try:
            for path in files:
                self.files.write(entries[path], managed_before=True)
            for name in units:
                self.units.write_unit(unit_entries[name], managed_before=True)
            if units:
                self.units.set_enablement(unit_entries[n] for n in units)
        except ApplyError as exc:
            return self._result("Degraded", f"{on_disk_message(current.name, problems)}; repair failed: {exc}",
                                current, current.name)
        self.files.flush()
        self.drift.forget(files)
        left = verify_config(self.root, cfg, systemctl=self.systemctl, paths=files, units=units)
        if left:
            return self._result("Degraded", on_disk_message(current.name, left), current, current.name)
        repaired = [f"file {p}" for p in files] + [f"unit {u}" for u in units]
        return self._result("Done", f"repaired drift: {', '.join(repaired)}", current, current.name, changed=True)

    # --- the sync and the loop ------------------------------------------------------------------------------

    def sync(self, *, repair: bool | None = None) -> SyncResult:
        """One step (module docstring). Raises TemporaryError when the desired config cannot be fetched."""
        self.state.ensure()
        current = self.state.current()
        pending = self.state.pending()
        if pending is not None and pending.phase == "rebooting":
            return self.after_reboot(current, pending)
        desired = self.source.desired(self.settings.node, self._pool(current), current)
        if desired is None:
            if current is None:
                raise PermanentError("desired", "the server has no config for this node yet")
            desired = current
        failed = self.state.failed()
        if failed and failed.get("name") != desired.name:
            self.state.clear_failed()
        elif failed and current is not None and current.name != desired.name and pending is None:
            return self._result("Degraded", str(failed.get("message", "")), current, desired.name)
        if current is not None and desired.name == current.name and pending is None:
            return self.check_drift(current, repair=self.settings.drift == "repair" if repair is None else repair)
        return self.update(current, desired, pending)

    def stop(self, *_: Any) -> None:
        """Ask the loop to end after the current sync (SIGTERM does not interrupt an update)."""
        self._stop = True

    def run(self, *, max_syncs: int | None = None) -> SyncResult | None:
        """Sync every `interval` seconds (sooner when inotify sees a watched path change) until stopped."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.stop)  # an update in progress is finished, then the loop ends
        result: SyncResult | None = None
        count = 0
        delay = 1.0
        while not self._stop and (max_syncs is None or count < max_syncs):
            count += 1
            try:
                result = self.sync()
                delay = 1.0
            except TemporaryError as exc:
                self.log(f"will retry: {exc}")
                time.sleep(min(delay, self.settings.interval))
                delay = min(delay * 2, 60.0)
                continue
            except PermanentError as exc:
                current = self.state.current()
                result = self._result("Degraded", str(exc), current, current.name if current else "")
            self.log(f"{result.state}: {result.message}")
            if result.rebooting or self._stop or (max_syncs is not None and count >= max_syncs):
                break
            self._wait()
        return result

    def _wait(self) -> None:
        """Until the next sync: `interval` seconds, cut short by a watched path changing or by a stop request."""
        current = self.state.current()
        watcher = Watcher(self.root, watched_paths(current.spec.config or {})) if current else None
        deadline = time.monotonic() + self.settings.interval
        try:
            while not self._stop and (remaining := deadline - time.monotonic()) > 0:
                step = min(remaining, 0.5)
                if watcher is not None and watcher.active:
                    if watcher.wait(step):
                        return
                else:
                    time.sleep(step)
        finally:
            if watcher is not None:
                watcher.close()


def reboot_command_for_ostree(sysroot: Path, python: str) -> str:
    """The `--reboot-command` that simulates a reboot of a directory sysroot (tests, demos)."""
    return f"{shlex.quote(python)} -m applier.backends.ostree simulate-reboot {shlex.quote(str(sysroot))}"
