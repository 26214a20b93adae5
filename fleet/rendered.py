"""The rendered-config model: what the renderer produces and the server, image builder and applier consume.

A `RenderedConfig` is one pool's merged MachineConfig, named `rendered-<pool>-<hash>`. It is pure data
(no I/O), so the applier may import it. Its JSON form is a `machineconfiguration.openshift.io/v1`
MachineConfig object, so `oc`-style tooling reads it unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from fleet.conditions import ConditionProblem
from fleet.errors import PathError
from fleet.label_selector import LabelSelector, parse_selector, role_selector
from fleet.machine_entry import MachineEntry
from fleet.rollout_settings import RolloutSettings
from ignition.canonical import canonical_json

API_VERSION = "machineconfiguration.openshift.io/v1"
RENDERED_PREFIX = "rendered-"

# The MCO's SupportedExtensions (MCO `pkg/controller/common/helpers.go`): extension name -> the packages it installs. Shared by the
# renderer (the default allow-list), the image builder and the node agent (what each installs).
SUPPORTED_EXTENSIONS: Mapping[str, tuple[str, ...]] = {
    "two-node-ha": ("pacemaker", "pcs", "fence-agents-all"),
    "ipsec": ("NetworkManager-libreswan", "libreswan", "openvswitch3.5-ipsec"),
    "usbguard": ("usbguard",),
    "kerberos": ("krb5-workstation", "libkadm5"),
    "kernel-devel": ("kernel-devel", "kernel-headers"),
    "sandboxed-containers": ("kata-containers",),
    "sysstat": ("sysstat",),
}


class ModelError(PathError, ValueError):
    """A rendered config or pool record that does not have the expected shape; `path` says where."""


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
class Pause:
    """The rollout paused by a failing node: which, why, since when (RFC 3339), on which target. Recorded in the
    pool's record by the first failing report (fleet/rollout_control.py `record_pause`), so it keeps naming that
    node whoever reads it, after any restart or failover; `mco rollout resume` and `revert` clear it."""

    node: str
    reason: str
    since: str
    target: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON form (under `rolloutPause` in /pools)."""
        return {"node": self.node, "reason": self.reason, "since": self.since}

    @classmethod
    def from_dict(cls, data: Any) -> Pause | None:
        """The stored form (`to_dict` and the target); None for anything else."""
        if not isinstance(data, Mapping) or not all(isinstance(data.get(k), str) for k in ("node", "since", "target")):
            return None
        return cls(data["node"], str(data.get("reason") or ""), data["since"], data["target"])


@dataclass(frozen=True)
class PoolRecord:
    """What the store keeps per pool: the current target, its sources, conditions and history.

    `max_unavailable` is the pool's `spec.maxUnavailable` (an int or a percentage string such as "10%"),
    `node_selector` its `spec.nodeSelector` (None: the pool's role label `node-role.kubernetes.io/<name>`, as the
    MCO's built-in pools have it; an empty selector matches no node), `paused` its `spec.paused`. `rollout` holds the settings
    of its `rollout.machine-config.io/` annotations (fleet/rollout_settings.py). The operator's rollout state:
    `resumed_at` (RFC 3339; failures reported before it no longer pause the pool, `mco rollout resume`) and
    `reverted_from` (the target `mco rollout revert` left: while a render still yields it, the pool stays pinned
    to `current`); `pause`, the automatic pause as first recorded (fleet/rollout_gates.py `rollout_pause`). The
    renderer carries them over.
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
    pause: Pause | None = None
    require_machine: bool = False  # a booting machine no machine document matches gets a 404, not the pool's config

    def __post_init__(self) -> None:
        if self.node_selector is None:  # so a record read back equals the one written
            object.__setattr__(self, "node_selector", role_selector(self.name))

    def condition(self, type_: str) -> Condition | None:
        """The condition of this type, if any."""
        return next((c for c in self.conditions if c.type == type_), None)

    @cached_property
    def machine_targets(self) -> dict[str, str]:
        """Each machine document's node and its config: with `current`, all that `target_for` reads (callers
        must not modify it)."""
        return {m.node: m.rendered for m in self.machines if m.node and m.rendered}

    def target_for(self, node: str) -> str | None:
        """The config node `node` is to run: its machine's config (a machine document names it as its
        hostname), else the pool's target."""
        if self.machines:
            found = self.machine_targets.get(node)
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
            **({"rolloutPause": {**self.pause.to_dict(), "target": self.pause.target}} if self.pause else {}),
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
            pause=Pause.from_dict(data.get("rolloutPause")),
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
