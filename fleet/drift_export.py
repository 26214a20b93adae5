"""The fleet's drift, read from the node records: the inventory `mco drift list` prints, and the MachineConfig
`mco drift export` makes of one node's unrepaired drift, so a change made by hand becomes declared state.

The exported MachineConfig carries the role label of the node's pool (`machineconfiguration.openshift.io/role`,
what the MCO's pools select on) and the name `99-<pool>-<node>-drift`, sorting after the pool's other
MachineConfigs so that its files win the merge (MCO pkg/controller/common/helpers.go: MergeMachineConfigs); each
drifted file as found (contents and mode) and each unit's enablement as found.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fleet.drift_events import DriftEvent, unrepaired_files
from fleet.node_status import NodeStatus

ROLE_LABEL = "machineconfiguration.openshift.io/role"
EXPORT_IGNITION = "3.4.0"


def inventory(statuses: Iterable[NodeStatus], *, pool: str | None = None) -> list[dict[str, Any]]:
    """Every drift event of the fleet (of `pool`'s nodes only when given), newest first, each with its node and
    pool."""
    rows = [{"node": s.name, "pool": s.pool, **e.to_dict()} for s in statuses if pool is None or s.pool == pool
            for e in s.drift]
    for row in rows:
        row.pop("contents", None)
    return sorted(rows, key=lambda r: (r["at"], r["node"]), reverse=True)


def _unrepaired_units(events: Iterable[DriftEvent]) -> dict[str, str]:
    latest: dict[str, DriftEvent] = {}
    for event in events:
        if event.kind == "unit" and event.path not in latest:
            latest[event.path] = event
    return {name: e.found for name, e in reversed(latest.items())
            if not e.repaired and e.found in ("enabled", "disabled", "masked")}


def export_name(status: NodeStatus) -> str:
    """The exported MachineConfig's name."""
    return f"99-{status.pool}-{status.name}-drift"


def export_machineconfig(status: NodeStatus) -> dict[str, Any] | None:
    """The MachineConfig of `status`'s unrepaired drift (None when it has none to export)."""
    files = unrepaired_files(status.drift)
    units = _unrepaired_units(status.drift)
    if not files and not units:
        return None
    config: dict[str, Any] = {"ignition": {"version": EXPORT_IGNITION}}
    if files:
        config["storage"] = {"files": [{"path": path, "mode": e.mode if e.mode is not None else 0o644,
                                        "overwrite": True, "contents": {"source": e.contents}}
                                       for path, e in files.items()]}
    if units:
        config["systemd"] = {"units": [{"name": name, "mask": True} if found == "masked"
                                       else {"name": name, "enabled": found == "enabled"}
                                       for name, found in units.items()]}
    return {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
            "metadata": {"name": export_name(status), "labels": {ROLE_LABEL: status.pool},
                         "annotations": {"machineconfiguration.openshift.io/exported-from":
                                         f"drift of node {status.name}"}},
            "spec": {"config": config}}
