"""The agent's planning part: what an update from the current config (or, on a node with no state, what is already
on disk) to the desired one does, and what a drift repair asks of the running system.

The plan's rules are applier/plan.py's (fleet.diff, fleet.reconcile, fleet.disruption: the same `mco diff` uses);
this part brings what the node knows to them: the disruption policy (`--policy`, else the rendered config's
annotation, else the MCO's defaults), `--allow` overrides, the booted deployment, and the entries on disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from applier.backends.base import Backend
from applier.errors import PermanentError
from applier.live import fips_refusal
from applier.plan import Plan, make_plan
from applier.repairing import Repair
from applier.settings import AgentSettings
from applier.ssh import keys_bytes, keys_path
from applier.state import Pending
from applier.units import Systemctl
from applier.verify import check_bytes, check_file, check_unit
from fleet.diff import ConfigDiff, SetChange, files_of, units_of
from fleet.disruption import Disruption, disruption
from fleet.disruption_policy import DisruptionPolicy, PolicyError, policy_from_annotations
from fleet.rendered import MachineConfigSpec, RenderedConfig


@dataclass(eq=False)
class Planner:
    """Plans updates and repairs from the settings' policy and overrides, the disk and the booted deployment."""

    settings: AgentSettings
    root: Path
    systemctl: Systemctl
    backend: Backend

    @property
    def manage_os(self) -> bool:
        """Whether the backend manages the OS image and kernel arguments (the `none` backend does not)."""
        return self.backend.name != "none"

    def policy(self, desired: RenderedConfig) -> DisruptionPolicy:
        """The disruption policy: `--policy`, else the one the rendered config carries."""
        if self.settings.policy is not None:
            return self.settings.policy
        try:
            return policy_from_annotations(desired.annotations)
        except PolicyError as exc:
            raise PermanentError(exc.path, exc.message) from exc

    def plan(self, current: RenderedConfig | None, desired: RenderedConfig, pending: Pending | None) -> Plan:
        """The update from `current` (None: what is on disk) to `desired`; paths of an interrupted update
        (`pending`, never current) count as old."""
        old_spec = current.spec if current is not None else self.baseline(desired.spec)
        interrupted = pending.config.spec if pending is not None and pending.config.name != desired.name else None
        plan = make_plan(old_spec, desired.spec, policy=self.policy(desired), manage_os=self.manage_os,
                         overrides=self.settings.overrides, interrupted=interrupted)
        if current is None and not plan.write_ssh and self.keys_out_of_date(desired.spec.config or {}):
            plan = replace(plan, write_ssh=True)
        refusal = fips_refusal(self.root, desired.spec)
        if refusal and refusal not in plan.unreconcilable:  # the MCD's second check, against the node itself
            plan = replace(plan, unreconcilable=(*plan.unreconcilable, refusal))
        return plan

    def baseline(self, desired: MachineConfigSpec) -> MachineConfigSpec:
        """The old side for a node with no recorded state: the desired entries already on disk, the booted OS."""
        cfg = desired.config or {}
        ok_files = [e for e in files_of(cfg).values() if check_file(self.root, e) is None]
        ok_units = [u for u in units_of(cfg).values() if not check_unit(self.root, u, self.systemctl)]
        # users and groups were created at first boot (Ignition): kept as they are; core's key file is
        # checked separately (`keys_out_of_date`) and rewritten when it differs
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

    def keys_out_of_date(self, config: Mapping[str, Any]) -> bool:
        """True when core's key file does not hold the config's keys."""
        keys_file = keys_path(self.root)
        return keys_file is not None and check_bytes(self.root, keys_file, keys_bytes(config), 0o600) is not None

    def repair_disruption(self, config: RenderedConfig, repair: Repair) -> Disruption:
        """What the policy asks for the repaired paths and units (those no policy names ask nothing)."""
        policy = self.policy(config)
        files = tuple(sorted(p for p in repair.files if policy.for_file(p) is not None))
        units = tuple(sorted(u for u in repair.units if policy.for_unit(u) is not None))
        cfg = config.spec.config or {}
        entries = {p: e for e in (cfg.get("storage") or {}).get("files") or () if (p := str(e.get("path"))) in files}
        return disruption(ConfigDiff(files=SetChange(changed=files), units=SetChange(changed=units),
                                     new_files=entries), policy)
