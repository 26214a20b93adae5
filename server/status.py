"""Node reports -> MachineConfigPool-style status (MCO `pkg/controller/node/status.go`: calculateStatus), and the report's validation.

Node reports are persisted in the store (`nodes/<node>.json`), so status survives a restart; the pool
status is computed from the store on every read, which keeps several worker processes consistent.

Counts over the nodes whose last report names the pool:
- updated  = state Done, currentConfig == desiredConfig == the node's target (the pool's; a node a machine
  document names: its machine's config on it, and only that one): `updated_count`
- ready    = updated (nodes report no separate readiness)
- degraded = state Degraded
- unavailable = not Done, or desired set and current != desired (mid-update or broken): fleet/rollout.py
  `unavailable`, the very predicate that decides the rollout's slots
Conditions: `Updated` (all nodes updated, none unavailable), `Updating` (not updated and not paused, by
`spec.paused` or by the rollout: `status.rolloutPause` then names the first failing node and why,
fleet/rollout_gates.py; `RolloutPinned` while `mco rollout revert` pins the pool),
`NodeDegraded` (degraded > 0; its message names each degraded node with a message, `Node N is reporting: %q`
with Go's quoting), `RenderDegraded` as the renderer recorded it, and `Degraded` = NodeDegraded or RenderDegraded,
with NodeDegraded's message (none when only the render is degraded). `status.configuration` is the target once Updated,
otherwise the config most nodes are at.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from operator import attrgetter
from typing import Any

from fleet.clock import system_clock, timestamp
from fleet.drift_events import DriftEventError, parse_events
from fleet.image_pulls import PULL_LEASE
from fleet.names import MAX_NAME, valid_name
from fleet.node_labels import LabelError, check_labels
from fleet.node_status import NODE_STATES, NodeStatus
from fleet.phases import DETAIL_LIMIT, PHASES, PhaseEntry
from fleet.rendered import Condition, PoolRecord, pool_config_of
from fleet.rollout import unavailable
from fleet.rollout_gates import FAILED_STATES, rollout_pause
from fleet.rollout_turn import skipped
from ignition.rules.unitfile import go_quote
from server.errors import PathError

SKIPPED_LISTED = 50  # nodes the rollout passed over named in /pools (all are counted)
MESSAGE_LIMIT = 2000  # the MCD truncates its reason annotation to 2000 characters


class StatusReportError(PathError, ValueError):
    """A node's status report is malformed; `path` is the JSON path of the bad field."""


def parse_report(node: str, body: Any, *, reported_at: str) -> NodeStatus:
    """Validate a `POST /nodes/{name}/status` body into a NodeStatus (with the phase it enters, `phase` and
    `detail` (fleet/phases.py), as a one-entry timeline)."""
    if not isinstance(body, Mapping):
        raise StatusReportError("$", "must be a JSON object")
    fields: dict[str, str] = {}
    for key in ("pool", "currentConfig", "desiredConfig", "state"):
        value = body.get(key)
        if not isinstance(value, str):
            raise StatusReportError(f"$.{key}", "required string" if value is None else "must be a string")
        fields[key] = value
    if not fields["pool"]:
        raise StatusReportError("$.pool", "must not be empty")
    if not valid_name(fields["pool"]):
        raise StatusReportError("$.pool", f"must be a lowercase DNS name of at most {MAX_NAME} characters")
    for key in ("currentConfig", "desiredConfig"):
        if fields[key] and not valid_name(fields[key]):
            raise StatusReportError(f"$.{key}", "must be empty or a rendered config name")
    if fields["state"] not in NODE_STATES:
        raise StatusReportError("$.state", f"must be one of {', '.join(NODE_STATES)}")
    message = body.get("message", "")
    if not isinstance(message, str):
        raise StatusReportError("$.message", "must be a string")
    try:  # the labels a node registers with (its first record only: server/node_routes.py)
        labels = check_labels(body.get("labels") or {}, "$.labels")
    except LabelError as exc:
        raise StatusReportError(exc.path, exc.message) from None
    phase, detail = body.get("phase", ""), body.get("detail", "")
    if phase not in ("", *PHASES):
        raise StatusReportError("$.phase", f"must be one of {', '.join(PHASES)}")
    if not isinstance(detail, str) or len(detail) > DETAIL_LIMIT:
        raise StatusReportError("$.detail", f"must be a string of at most {DETAIL_LIMIT} characters")
    try:
        drift = parse_events(body.get("drift"))
    except DriftEventError as exc:
        raise StatusReportError(exc.path, exc.message) from exc
    staged = body.get("staged", "")  # the config whose OS image it pulled and prepared before its slot
    if not isinstance(staged, str) or (staged and not valid_name(staged)):
        raise StatusReportError("$.staged", "must be empty or a rendered config name")
    # (an image staged before the slot is a phase of the update to come: of the staged config)
    entered = (PhaseEntry(phase, reported_at, staged or fields["desiredConfig"], detail),) if phase else ()
    return NodeStatus(name=node, pool=fields["pool"], current_config=fields["currentConfig"],
                      desired_config=fields["desiredConfig"], state=fields["state"],
                      message=message[:MESSAGE_LIMIT], reported_at=reported_at, labels=labels, timeline=entered,
                      drift=drift, staged=staged)


def _condition(type_: str, ok: bool, reason: str = "", message: str = "", since: str = "") -> dict[str, str]:
    return Condition(type_, "True" if ok else "False", reason, message, since).to_dict()


_REPORT = attrgetter("state", "current_config", "desired_config")


@dataclass(frozen=True)
class PoolTally:
    """A pool's machines (in the order given: node name), how many report each (state, currentConfig,
    desiredConfig), and those reporting a failure (FAILED_STATES, name order). Every count of a pool's status
    comes from it, so a status costs what it shows: the fleet view (server/fleet_view.py) takes `reports` and
    `failing` from the store's index, kept current per changed record, instead of a pass over 10,000 machines."""

    members: Sequence[NodeStatus]
    reports: Mapping[tuple[str, str, str], int]
    failing: Sequence[NodeStatus] = ()
    _passed: dict[str, tuple[PoolRecord, list[str]]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, members: Sequence[NodeStatus]) -> PoolTally:
        """The tally of `members`, the reports of one pool."""
        return cls(members, Counter(map(_REPORT, members)), [n for n in members if n.state in FAILED_STATES])

    def passed_over(self, record: PoolRecord) -> list[str]:
        """fleet/rollout_turn.py `skipped` for these members, worked out once per tally and pool record (a pass
        over every member: the fleet view keeps a tally while the store hands back the same listing)."""
        held = self._passed.get(record.name)
        if held is None or not (held[0] is record or held[0] == record):
            lease_from = timestamp(system_clock() - timedelta(seconds=PULL_LEASE))  # (a pull let before: lapsed)
            held = self._passed[record.name] = (record, skipped(record, self.members, lease_from))
        return held[1]

    def count(self, state: str | None = None, *, settled: bool | None = None,
              at: str | frozenset[str] | None = None) -> int:
        """Machines in `state` (None: any), with current == desired (`settled`) or not, at current config `at`
        (or at one of them)."""
        among = frozenset((at,)) if isinstance(at, str) else at
        return sum(n for (s, current, desired), n in self.reports.items()
                   if (state is None or s == state) and (settled is None or (current == desired) == settled)
                   and (among is None or current in among))

    def states(self) -> dict[str, int]:
        """Machines per state (every known state present, 0 when none)."""
        counts = dict.fromkeys(NODE_STATES, 0)
        for (state, _, _), n in self.reports.items():
            counts[state] = counts.get(state, 0) + n
        return counts


def tally(pool: str, nodes: Sequence[NodeStatus]) -> PoolTally:
    """The tally of the reports in `nodes` that name `pool`."""
    return PoolTally.of([n for n in nodes if n.pool == pool])


def node_item(node: NodeStatus) -> dict[str, str]:
    """A machine as its pool's status lists it."""
    return {"name": node.name, "currentConfig": node.current_config, "desiredConfig": node.desired_config,
            "state": node.state, "message": node.message, "reportedAt": node.reported_at}


def with_machines(body: dict[str, Any], record: PoolRecord, nodes: Any) -> dict[str, Any]:
    """`pool_summary`'s body with the pool's machines: `nodes` (its `node_item`s, or their JSON already encoded)
    and each machine document."""
    body["status"]["nodes"] = nodes
    if record.machines:  # each machine document: its config on the target, the pool's config and overlay in it
        body["status"]["machines"] = [
            {"name": m.name, "node": m.node, "source": m.source, "config": m.rendered,
             "poolConfig": pool_config_of(m.rendered), "overlay": m.overlay_hash} for m in record.machines]
    return body


def updated_count(record: PoolRecord, counted: PoolTally) -> int:
    """Machines Done at their own target (MCO `status.go` getUpdatedMachines: current == desired == the target):
    the pool's, or for a node a machine document names, its machine's config (`PoolRecord.target_for`). Counted
    from the tally's reports, then corrected by the few nodes machine documents name: a node at another node's
    machine config, or a machine still at the pool's target, is not at its own."""
    if not record.current:
        return 0
    updated = counted.count("Done", settled=True, at=record.current)
    own = record.machine_targets
    if own:
        for node in counted.members:
            config = own.get(node.name)
            if config is not None and node.state == "Done" and node.current_config == node.desired_config:
                updated += (node.current_config == config) - (node.current_config == record.current)
    return updated


def pool_summary(record: PoolRecord, counted: PoolTally) -> dict[str, Any]:
    """The MachineConfigPool-style object for one pool (rules in the module docstring) without the per-node list
    (`with_machines` adds it for /pools): the counts and conditions (what the fleet page shows)."""
    members = counted.members
    target = record.current
    updated = updated_count(record, counted)
    degraded = [n for n in counted.failing if n.state == "Degraded"]
    unavailable_count = sum(n for report, n in counted.reports.items() if unavailable(*report))
    all_updated = updated == len(members) and not unavailable_count
    passed = counted.passed_over(record) if target and not all_updated else []
    pause = rollout_pause(record, counted.failing)
    render = record.condition("RenderDegraded")
    render_degraded = render is not None and render.status == "True"
    conditions = []
    if all_updated:
        conditions.append(_condition("Updated", True, message=f"All nodes are updated with MachineConfig {target}"))
        conditions.append(_condition("Updating", False))
    else:
        conditions.append(_condition("Updated", False))
        if record.paused:
            conditions.append(_condition("Updating", False,
                                         message=f"Pool is paused; will not update to MachineConfig {target}"))
        elif pause is not None:
            conditions.append(_condition("Updating", False, "RolloutPaused",
                                         f"Rollout paused by node {pause.node}: {pause.reason}"))
        else:
            conditions.append(_condition("Updating", True,
                                         message=f"All nodes are updating to MachineConfig {target}"))
    node_message = ", ".join(f"Node {n.name} is reporting: {go_quote(n.message.encode('utf-8', 'surrogatepass'))}"
                             for n in degraded if n.message)  # MCO: %q of each non-empty reason annotation
    conditions.append(_condition("NodeDegraded", bool(degraded),
                                 f"{len(degraded)} nodes are reporting degraded status on sync" if degraded else "",
                                 node_message))
    conditions.append(render.to_dict() if render is not None else _condition("RenderDegraded", False))
    # Degraded carries NodeDegraded's message, none when only the render is degraded (RenderDegraded has that one)
    conditions.append(_condition("Degraded", bool(degraded) or render_degraded, message=node_message))
    # the render's other conditions (a refused KubeletConfig or ContainerRuntimeConfig: `<Kind>Failure`)
    conditions += [c.to_dict() for c in record.conditions if c.type.endswith("Failure") or c.type == "RolloutPinned"]
    if all_updated or not members:
        configuration = target
    else:
        at: Counter[str] = Counter()
        for (_, current, _), n in counted.reports.items():
            at[current] += n
        configuration = at.most_common(1)[0][0]
    return {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfigPool",
        "metadata": {"name": record.name},
        "spec": {
            "configuration": {"name": target, "source": list(record.sources)},
            "maxUnavailable": record.max_unavailable,
            "paused": record.paused,
            "nodeSelector": record.selector.to_dict(),
        },
        "status": {
            "configuration": {"name": configuration},
            "machineCount": len(members),
            "updatedMachineCount": updated,
            "readyMachineCount": updated,
            "unavailableMachineCount": unavailable_count,
            "degradedMachineCount": len(degraded),
            "conditions": conditions,
            **({"rolloutPause": pause.to_dict()} if pause is not None else {}),
            **({"rolloutSkipped": {"count": len(passed), "nodes": passed[:SKIPPED_LISTED]}} if passed else {}),
            **({"revertedFrom": record.reverted_from} if record.reverted_from else {}),
        },
    }
