"""How disruptive a change is: the MCO's post-config-change decision (MCO pkg/daemon/update.go:
calculatePostConfigChangeNodeDisruptionAction) over a diff and the policies of disruption_policy.py. Pure, no I/O.

Used by `mco diff` (to say what a rollout will do) and by the applier (to do it).

Rules, in the order they are applied (`calculatePostConfigChangeNodeDisruptionAction`):
  1. A change of osImageURL, kernelArguments, fips, kernelType or extensions -> [Reboot].
  2. No file, unit or passwd change -> [None].
  3. Each changed file path takes the actions of the policy with the LONGEST `path` (as written) equal to it or
     a parent directory of it (`DisruptionPolicy.for_file`); no policy -> [Reboot]. Each changed unit takes the exact-name unit policy; none ->
     [Reboot]. A passwd change appends the `sshkey` actions.
  4. Any Reboot -> [Reboot]. None actions are dropped when any other action is present; only Nones -> [None].
     Otherwise the concatenated list, duplicates kept, files then units then sshkey.
Drain: any Reboot or Drain; a Special (registries.conf) drains only when the change is not "safe".
The verdict summarises the actions: reboot > restart > reload (Reload, DaemonReload, Special) > none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.diff import ConfigDiff
from fleet.disruption_policy import NONE, REBOOT, Action, DisruptionPolicy
from fleet.registries_conf import REGISTRIES_CONF, registries_change_is_safe

VERDICTS = ("none", "reload", "restart", "reboot")


@dataclass(frozen=True)
class Disruption:
    """The decision: verdict, ordered actions, whether to drain, and why (one reason per change)."""

    verdict: str
    actions: tuple[Action, ...]
    drain: bool
    reasons: tuple[str, ...] = field(default=())

    @property
    def reboot(self) -> bool:
        """True when the node must reboot."""
        return self.verdict == "reboot"

    @property
    def reload_units(self) -> tuple[str, ...]:
        """Services to `systemctl reload`, in order, without repeats."""
        return tuple(dict.fromkeys(a.service for a in self.actions if a.type == "Reload"))

    @property
    def restart_units(self) -> tuple[str, ...]:
        """Services to `systemctl restart`, in order, without repeats."""
        return tuple(dict.fromkeys(a.service for a in self.actions if a.type == "Restart"))

    @property
    def daemon_reload(self) -> bool:
        """True when `systemctl daemon-reload` is among the actions."""
        return any(a.type == "DaemonReload" for a in self.actions)

    def to_dict(self) -> dict[str, Any]:
        """JSON form for `mco diff --json`."""
        return {"verdict": self.verdict, "drain": self.drain, "actions": [a.to_dict() for a in self.actions],
                "reasons": list(self.reasons)}


def _verdict(actions: Sequence[Action]) -> str:
    kinds = {a.type for a in actions}
    if "Reboot" in kinds:
        return "reboot"
    if "Restart" in kinds:
        return "restart"
    if kinds & {"Reload", "DaemonReload", "Special"}:
        return "reload"
    return "none"


def disruption(diff: ConfigDiff, policy: DisruptionPolicy | None = None, *, force: bool = False) -> Disruption:
    """Decide the post-config actions and drain for a diff (rules in the module docstring)."""
    policy = policy or DisruptionPolicy.defaults()
    if force:
        return Disruption("reboot", (REBOOT,), True, ("force file present",))
    if diff.os_changes:
        return Disruption("reboot", (REBOOT,), True, tuple(f"{n} changed: reboot" for n in diff.os_changes))
    if not (diff.files or diff.units or diff.passwd):
        return Disruption("none", (NONE,), False, ())
    actions: list[Action] = []
    reasons: list[str] = []
    for path in diff.files.all:
        found = policy.for_file(path)
        if found is None:
            return Disruption("reboot", (REBOOT,), True, (f"file {path}: no disruption policy matches: reboot",))
        actions += found.actions
        reasons.append(f"file {path}: policy {found.path}: {', '.join(map(str, found.actions))}")
    for name in diff.units.all:
        unit = policy.for_unit(name)
        if unit is None:
            return Disruption("reboot", (REBOOT,), True, (f"unit {name}: no disruption policy matches: reboot",))
        actions += unit.actions
        reasons.append(f"unit {name}: policy {unit.name}: {', '.join(map(str, unit.actions))}")
    if diff.passwd:
        actions += policy.sshkey
        reasons.append(f"sshkey: {', '.join(map(str, policy.sshkey))}")
    if any(a.type == "Reboot" for a in actions):
        return Disruption("reboot", (REBOOT,), True, tuple(reasons))
    if any(a.type != "None" for a in actions):
        actions = [a for a in actions if a.type != "None"]
    else:
        actions = [NONE]
    drain = any(a.type == "Drain" for a in actions)
    if not drain and any(a.type == "Special" for a in actions):
        drain = not registries_change_is_safe(diff.old_files.get(REGISTRIES_CONF),
                                              diff.new_files.get(REGISTRIES_CONF))
        reasons.append(f"{REGISTRIES_CONF}: change is {'unsafe: drain' if drain else 'safe: no drain'}")
    return Disruption(_verdict(actions), tuple(actions), drain, tuple(reasons))
