"""The rendered-config model: what the renderer produces and the server, image builder and applier consume.

A `RenderedConfig` is one pool's merged MachineConfig, named `rendered-<pool>-<hash>`. It is pure data
(no I/O), so the applier may import it. Its JSON form is a `machineconfiguration.openshift.io/v1`
MachineConfig object, so `oc`-style tooling reads it unchanged.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, NamedTuple

from fleet.conditions import ConditionProblem
from fleet.drift_events import DriftEvent, kept, stored_events
from fleet.errors import FleetError
from fleet.label_selector import LabelSelector, parse_selector, role_labels, role_selector
from fleet.machine_entry import MachineEntry
from fleet.phases import PhaseEntry, Timeline, advance, timeline_from, updates_from
from fleet.rollout_settings import RolloutSettings
from ignition.canonical import canonical_json

API_VERSION = "machineconfiguration.openshift.io/v1"
RENDERED_PREFIX = "rendered-"

# The MCO's SupportedExtensions (MCO `pkg/controller/common/helpers.go`): extension name -> the packages it installs. Shared by the
# renderer (the default allow-list) and the image builder (what to install).
SUPPORTED_EXTENSIONS: Mapping[str, tuple[str, ...]] = {
    "two-node-ha": ("pacemaker", "pcs", "fence-agents-all"),
    "ipsec": ("NetworkManager-libreswan", "libreswan", "openvswitch3.5-ipsec"),
    "usbguard": ("usbguard",),
    "kerberos": ("krb5-workstation", "libkadm5"),
    "kernel-devel": ("kernel-devel", "kernel-headers"),
    "sandboxed-containers": ("kata-containers",),
    "sysstat": ("sysstat",),
}


class ModelError(FleetError, ValueError):
    """A rendered config or pool record that does not have the expected shape; `path` says where."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True)
class MachineConfigSpec:
    """The fields of a MachineConfig's `spec`, with MCO's defaults."""

    config: Mapping[str, Any]
    os_image_url: str = ""
    base_os_extensions_container_image: str = ""
    kernel_arguments: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    fips: bool = False
    kernel_type: str = "default"

    def to_dict(self) -> dict[str, Any]:
        """The camelCase `spec` object as it appears in a manifest (every field present)."""
        return {
            "config": dict(self.config),
            "osImageURL": self.os_image_url,
            "baseOSExtensionsContainerImage": self.base_os_extensions_container_image,
            "kernelArguments": list(self.kernel_arguments),
            "extensions": list(self.extensions),
            "fips": self.fips,
            "kernelType": self.kernel_type,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, path: str = "$.spec") -> MachineConfigSpec:
        """Read a `spec` object; missing fields take MCO's defaults."""
        if not isinstance(data, Mapping):
            raise ModelError(path, "must be an object")
        config = data.get("config") or {}
        if not isinstance(config, Mapping):
            raise ModelError(f"{path}.config", "must be an object")
        return cls(
            config=config,
            os_image_url=str(data.get("osImageURL") or ""),
            base_os_extensions_container_image=str(data.get("baseOSExtensionsContainerImage") or ""),
            kernel_arguments=tuple(str(a) for a in (data.get("kernelArguments") or ())),
            extensions=tuple(str(e) for e in (data.get("extensions") or ())),
            fips=bool(data.get("fips") or False),
            kernel_type=str(data.get("kernelType") or "default"),
        )


def machine_config_name(pool_config: str, overlay_hash: str) -> str:
    """A machine's config: its pool's rendered config name and the overlay's hash, `rendered-<pool>-<hash>-<hash>`
    (content-addressed: the merge of the two is determined by them)."""
    return f"{pool_config}-{overlay_hash}"


def _is_hash(text: str) -> bool:
    return len(text) == 32 and all(c in "0123456789abcdef" for c in text)


def pool_config_of(name: str) -> str:
    """The pool's rendered config a (machine's) rendered config name is built on: the name itself for a pool's
    config, without the overlay hash for a machine's (`machine_config_name`)."""
    head, _, last = name.rpartition("-")
    before, _, middle = head.rpartition("-")
    if before.startswith(RENDERED_PREFIX) and _is_hash(last) and _is_hash(middle):
        return head
    return name


def pool_of_name(name: str) -> str:
    """The pool in a rendered name (`rendered-<pool>-<hash>` or a machine's `rendered-<pool>-<hash>-<hash>`)."""
    base = pool_config_of(name)
    if base.startswith(RENDERED_PREFIX) and "-" in base[len(RENDERED_PREFIX):]:
        return base[len(RENDERED_PREFIX):].rsplit("-", 1)[0]
    return ""


@dataclass(frozen=True)
class RenderedConfig:
    """One pool's merged, content-addressed MachineConfig.

    `sources` are the MachineConfig names merged, in merge order. `provenance` maps a field of the
    result (for example `storage.files[/etc/chrony.conf]` or `kernelArguments[nosmt]`) to the manifest
    (`name (file:line)`) that set it last, for `mco render --explain`.
    """

    name: str
    pool: str
    spec: MachineConfigSpec
    sources: tuple[str, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict)
    provenance: Mapping[str, str] = field(default_factory=dict)

    @property
    def hash(self) -> str:
        """The content hash suffix of the name."""
        prefix = f"{RENDERED_PREFIX}{self.pool}-"
        return self.name[len(prefix):] if self.name.startswith(prefix) else self.name

    @property
    def ignition(self) -> Mapping[str, Any]:
        """The merged Ignition config."""
        return self.spec.config

    def to_dict(self) -> dict[str, Any]:
        """The MachineConfig object, with our provenance in an annotation-free side field."""
        return {
            "apiVersion": API_VERSION,
            "kind": "MachineConfig",
            "metadata": {
                "name": self.name,
                "labels": {"machineconfiguration.openshift.io/pool": self.pool},
                "annotations": dict(self.annotations),
            },
            "spec": self.spec.to_dict(),
            "sources": list(self.sources),
            "provenance": dict(self.provenance),
        }

    def to_json_bytes(self) -> bytes:
        """Stable JSON bytes (sorted keys), as stored in `rendered/<name>.json`."""
        return canonical_json(self.to_dict(), pretty=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RenderedConfig:
        """Read the form written by `to_dict`."""
        if not isinstance(data, Mapping) or data.get("kind") != "MachineConfig":
            raise ModelError("$.kind", "not a MachineConfig")
        meta = data.get("metadata") or {}
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            raise ModelError("$.metadata.name", "required")
        pool = (meta.get("labels") or {}).get("machineconfiguration.openshift.io/pool", "")
        return cls(
            name=name,
            pool=str(pool),
            spec=MachineConfigSpec.from_dict(data.get("spec") or {}),
            sources=tuple(data.get("sources") or ()),
            annotations=dict(meta.get("annotations") or {}),
            provenance=dict(data.get("provenance") or {}),
        )

    @classmethod
    def from_json_bytes(cls, raw: bytes) -> RenderedConfig:
        """Parse stored bytes."""
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise ModelError("$", f"not valid JSON: {exc}") from exc
        return cls.from_dict(data)


@dataclass(frozen=True)
class Condition:
    """A MachineConfigPool-style status condition (type `RenderDegraded`, `Updated`, `Updating`, `Degraded`, ...);
    `problems` are the message's problems as data (fleet/conditions.py), when the writer had them."""

    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str = ""
    message: str = ""
    last_transition_time: str = ""
    problems: tuple[ConditionProblem, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Kubernetes condition JSON (plus `problems` when there are any)."""
        data: dict[str, Any] = {
            "type": self.type,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": self.last_transition_time,
        }
        if self.problems:
            data["problems"] = [p.to_dict() for p in self.problems]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Condition:
        """Read condition JSON (one written before `problems` existed has none)."""
        problems = data.get("problems")
        return cls(
            type=str(data["type"]),
            status=str(data["status"]),
            reason=str(data.get("reason", "")),
            message=str(data.get("message", "")),
            last_transition_time=str(data.get("lastTransitionTime", "")),
            problems=tuple(ConditionProblem.from_dict(p) for p in problems if isinstance(p, Mapping))
            if isinstance(problems, list) else (),
        )


@dataclass(frozen=True)
class HistoryEntry:
    """A target the pool once had, and when it became the target (RFC 3339)."""

    name: str
    time: str

    def to_dict(self) -> dict[str, str]:
        """JSON form."""
        return {"name": self.name, "time": self.time}


@dataclass(frozen=True)
class PoolRecord:
    """What the store keeps per pool: the current target, its sources, conditions and history.

    `max_unavailable` is the pool's `spec.maxUnavailable` (an int or a percentage string such as "10%"),
    `node_selector` its `spec.nodeSelector` (None: the pool's role label `node-role.kubernetes.io/<name>`, as the
    MCO's built-in pools have it; an empty selector matches no node), `paused` its `spec.paused`. `rollout` holds the settings
    of its `rollout.machine-config.io/` annotations (fleet/rollout_settings.py). The operator's rollout state:
    `resumed_at` (RFC 3339; failures reported before it no longer pause the pool, `mco rollout resume`) and
    `reverted_from` (the target `mco rollout revert` left: while a render still yields it, the pool stays pinned
    to `current`). The renderer carries both over.
    """

    name: str
    current: str | None = None
    sources: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()
    history: tuple[HistoryEntry, ...] = ()
    max_unavailable: int | str = 1
    node_selector: LabelSelector | None = None
    paused: bool = False
    # the cluster's MachineConfiguration `spec.nodeDisruptionPolicy` as written (None: none given); beside
    # the target, not in it, so a policy-only change moves no rendered name (MCO: the daemon reads it live)
    disruption_policy: Mapping[str, Any] | None = None
    # the pool's machine documents (fleet/machines.py), each with its config on `current`
    machines: tuple[MachineEntry, ...] = ()
    rollout: RolloutSettings = field(default_factory=RolloutSettings)
    resumed_at: str = ""
    reverted_from: str = ""
    require_machine: bool = False  # a booting machine no machine document matches gets a 404, not the pool's config

    def __post_init__(self) -> None:
        if self.node_selector is None:  # so a record read back equals the one written
            object.__setattr__(self, "node_selector", role_selector(self.name))

    def condition(self, type_: str) -> Condition | None:
        """The condition of this type, if any."""
        return next((c for c in self.conditions if c.type == type_), None)

    @cached_property
    def _machine_targets(self) -> dict[str, str]:
        return {m.node: m.rendered for m in self.machines if m.node and m.rendered}

    def target_for(self, node: str) -> str | None:
        """The config node `node` is to run: its machine's config (a machine document names it as its
        hostname), else the pool's target."""
        if self.machines:
            found = self._machine_targets.get(node)
            if found is not None:
                return found
        return self.current

    @property
    def selector(self) -> LabelSelector:
        """The nodeSelector that decides which nodes are this pool's (fleet/membership.py)."""
        return self.node_selector if self.node_selector is not None else role_selector(self.name)

    @property
    def targets(self) -> frozenset[str]:
        """Every config a member at its target runs: the pool's target and each machine's config on it."""
        return frozenset([*([self.current] if self.current else []), *(m.rendered for m in self.machines)])

    def to_dict(self) -> dict[str, Any]:
        """JSON form stored in `pools/<name>.json`."""
        return {
            "name": self.name,
            "current": self.current,
            "sources": list(self.sources),
            "conditions": [c.to_dict() for c in self.conditions],
            "history": [h.to_dict() for h in self.history],
            "maxUnavailable": self.max_unavailable,
            "nodeSelector": self.selector.to_dict(),
            "paused": self.paused,
            **({"nodeDisruptionPolicy": self.disruption_policy} if self.disruption_policy is not None else {}),
            **({"machines": [m.to_dict() for m in self.machines]} if self.machines else {}),
            **({"rollout": settings} if (settings := self.rollout.to_dict()) else {}),
            **({"resumedAt": self.resumed_at} if self.resumed_at else {}),
            **({"revertedFrom": self.reverted_from} if self.reverted_from else {}),
            **({"requireMachine": True} if self.require_machine else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PoolRecord:
        """Read the stored JSON form."""
        return cls(
            name=str(data["name"]),
            current=data.get("current"),
            sources=tuple(data.get("sources") or ()),
            conditions=tuple(Condition.from_dict(c) for c in data.get("conditions") or ()),
            history=tuple(HistoryEntry(str(h["name"]), str(h["time"])) for h in data.get("history") or ()),
            max_unavailable=data.get("maxUnavailable", 1),
            node_selector=_node_selector(data.get("nodeSelector")),
            paused=bool(data.get("paused", False)),
            disruption_policy=data.get("nodeDisruptionPolicy"),
            machines=tuple(MachineEntry.from_dict(m) for m in data.get("machines") or () if isinstance(m, Mapping)),
            rollout=RolloutSettings.from_dict(data.get("rollout")),
            resumed_at=str(data.get("resumedAt") or ""),
            reverted_from=str(data.get("revertedFrom") or ""),
            require_machine=data.get("requireMachine") is True,
        )


def _node_selector(data: Any) -> LabelSelector | None:
    """A stored `nodeSelector`: the `metav1.LabelSelector` object, or (records written before it) a flat map of
    labels; absent: None (the pool's role label)."""
    if data is None:
        return None
    if isinstance(data, Mapping) and not {"matchLabels", "matchExpressions"} & data.keys():
        data = {"matchLabels": data}
    selector, problems = parse_selector(data, ("nodeSelector",))
    if problems or selector is None:
        raise ModelError("$.nodeSelector", problems[0][2] if problems else "must be an object")
    return selector


NODE_STATES = ("Done", "Working", "Degraded")
HISTORY_LIMIT = 12     # distinct reports a node's record keeps (an update is ~3: handed out, Working, Done)
HISTORY_MESSAGE = 500  # characters of a message a history entry keeps (the record keeps the whole last one)


class Transition(NamedTuple):
    """One distinct report in a node's history: what it said, and when it first said it (`reported_at`).

    A named tuple: a replica decodes every record its watch delivers, and a tuple is built several times
    faster than a frozen dataclass."""

    state: str
    current_config: str
    desired_config: str
    message: str
    reported_at: str

    @classmethod
    def of(cls, status: NodeStatus) -> Transition:
        """The entry for a report (its message cut at HISTORY_MESSAGE characters)."""
        message = status.message
        if len(message) > HISTORY_MESSAGE:
            message = message[:HISTORY_MESSAGE - 1] + "…"
        return cls(status.state, status.current_config, status.desired_config, message, status.reported_at)

    def same(self, other: Transition) -> bool:
        """Whether `other` says the same (only its time differs): a repeat, not a new entry."""
        return self[:4] == other[:4]

    def to_dict(self) -> dict[str, str]:
        """JSON form (the report's field names)."""
        return {"state": self.state, "currentConfig": self.current_config, "desiredConfig": self.desired_config,
                "message": self.message, "reportedAt": self.reported_at}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Transition:
        """Read the stored form (state and config names interned: 10,000 records share a few of each)."""
        get = data.get
        return cls(sys.intern(str(get("state", ""))), sys.intern(str(get("currentConfig", ""))),
                   sys.intern(str(get("desiredConfig", ""))), str(get("message", "")), str(get("reportedAt", "")))


@dataclass(frozen=True, slots=True)
class NodeStatus:
    """What a node last reported: its pool, current and desired rendered config, state and message.

    `history` is the node's last HISTORY_LIMIT distinct reports, newest first, the first being this one
    (`with_report` builds it; empty in a record written before histories, or by a writer that keeps none).
    `registered_at` is when the node first reported or claimed (`with_report` keeps it): the rollout order's
    age (MCO `sortNodeList` uses the Node's creation time). `labels` are the node's labels (fleet/node_labels.py):
    set when it registers, changed only by an administrator; `pool` is the pool they put it in
    (fleet/membership.py; "" for none). `timeline` holds the phases of its current (or last) update and `updates`
    those of earlier ones, newest first (fleet/phases.py; a report carries the phase it enters as a one-entry
    timeline, which `with_report` adds).
    """

    name: str
    pool: str
    current_config: str
    desired_config: str
    state: str
    message: str = ""
    reported_at: str = ""
    history: tuple[Transition, ...] = ()
    registered_at: str = ""
    labels: Mapping[str, str] = None  # type: ignore[assignment]  # None: its pool's role label (__post_init__)
    timeline: Timeline = ()
    updates: tuple[Timeline, ...] = ()
    drift: tuple[DriftEvent, ...] = ()  # the last drift events, newest first (fleet/drift_events.py)

    def __post_init__(self) -> None:
        if self.labels is None:  # a record made before labels: the role label it registered with
            object.__setattr__(self, "labels", role_labels(self.pool))

    def transitions(self) -> tuple[Transition, ...]:
        """The history, newest first; a record without one has its own report as its history."""
        return self.history or (Transition.of(self),)

    @property
    def phase(self) -> PhaseEntry | None:
        """The phase its update is in (the last one entered), if it reported any."""
        return self.timeline[-1] if self.timeline else None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the POST body's field names; `history` only when there is one)."""
        data: dict[str, Any] = {
            "name": self.name,
            "pool": self.pool,
            "currentConfig": self.current_config,
            "desiredConfig": self.desired_config,
            "state": self.state,
            "message": self.message,
            "reportedAt": self.reported_at,
            "labels": dict(self.labels),
        }
        if self.history:
            data["history"] = [t.to_dict() for t in self.history]
        if self.registered_at:
            data["registeredAt"] = self.registered_at
        if self.timeline:
            data["timeline"] = [e.to_dict() for e in self.timeline]
        if self.updates:
            data["updates"] = [[e.to_dict() for e in t] for t in self.updates]
        if self.drift:
            data["drift"] = [e.to_dict() for e in self.drift]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NodeStatus:
        """Read the stored JSON form (a record without `history` loads with none). Pool, state and config names
        are interned: 10,000 records share a few of each, in less memory, and a pass over every record's state
        (the page's counts) compares one string object."""
        history = data.get("history")
        pool = sys.intern(str(data["pool"]))
        labels = data.get("labels")
        return cls(
            name=str(data["name"]),
            pool=pool,
            current_config=sys.intern(str(data.get("currentConfig", ""))),
            desired_config=sys.intern(str(data.get("desiredConfig", ""))),
            state=sys.intern(str(data.get("state", ""))),
            message=str(data.get("message", "")),
            reported_at=str(data.get("reportedAt", "")),
            history=tuple(Transition.from_dict(t) for t in history[:HISTORY_LIMIT] if isinstance(t, Mapping))
            if isinstance(history, list) else (),
            registered_at=str(data.get("registeredAt", "")),
            labels=_shared_labels(labels) if isinstance(labels, Mapping) else role_labels(pool),
            timeline=timeline_from(data.get("timeline")),
            updates=updates_from(data.get("updates")),
            drift=stored_events(data.get("drift")),
        )


_LABEL_SETS: dict[frozenset[tuple[str, str]], dict[str, str]] = {}
LABEL_SETS_KEPT = 4096


def _shared_labels(labels: Mapping[Any, Any]) -> dict[str, str]:
    """Stored labels as one dict per distinct label set: 10,000 records share a few dozen (less memory, and a
    listing looks each set's pool up once). The dicts are never changed: relabelling builds a new one."""
    items = frozenset((str(k), str(v)) for k, v in labels.items())
    found = _LABEL_SETS.get(items)
    if found is None:
        if len(_LABEL_SETS) >= LABEL_SETS_KEPT:
            _LABEL_SETS.clear()
        found = _LABEL_SETS[items] = dict(sorted(items))
    return found


def with_report(previous: NodeStatus | None, report: NodeStatus) -> NodeStatus:
    """`report` as the node's new record, carrying the history of `previous` (the record it replaces).

    A report that says what the last entry says (only its time differs) adds nothing; any other becomes
    the newest entry and the oldest beyond HISTORY_LIMIT is dropped. `report`'s own history is ignored,
    so building again on the same `previous` gives the same record. The labels are `previous`'s: a report
    never changes them (only a node's first record takes the report's). The phase a report enters (the last
    entry of its `timeline`) is added to `previous`'s timeline (fleet/phases.py: advance).
    """
    entry = Transition.of(report)
    past = previous.transitions() if previous is not None else ()
    history = past if past and past[0].same(entry) else (entry, *past[:HISTORY_LIMIT - 1])
    first = (previous.registered_at or (past[-1].reported_at if past else "")) if previous is not None else ""
    timeline, updates = (previous.timeline, previous.updates) if previous is not None else ((), ())
    if report.timeline:
        timeline, updates = advance(timeline, updates, report.timeline[-1])
    drift = kept(report.drift, previous.drift if previous is not None else ())
    return replace(report, history=history, registered_at=first or report.reported_at,
                   labels=previous.labels if previous is not None else report.labels, timeline=timeline,
                   updates=updates, drift=drift)
