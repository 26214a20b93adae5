"""Typed manifests: MachineConfig, MachineConfigPool, KubeletConfig, ContainerRuntimeConfig, MachineConfiguration,
and the image-registry kinds of renderer/registries_model.py and the machine document of
renderer/machines_model.py.

Second stage of the flow: a loaded `Document` becomes one of these, or `Problem`s naming file:line:col and
the field path. Only the shape is checked here (types, required fields, names); what a MachineConfig's
Ignition config means is checked in `validate_machineconfigs.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet.label_selector import NOTHING, LabelSelector
from fleet.rendered import MachineConfigSpec
from fleet.rollout_settings import RolloutSettings, parse_settings
from renderer import machines_model, registries_model
from renderer.load import Document
from renderer.problems import Path, Problem
from renderer.shape import Checker, Origin, origin_of, read_metadata

MCO_API = "machineconfiguration.openshift.io/v1"
OPERATOR_API = "operator.openshift.io/v1"
REQUIRE_MACHINE = "machine-config.io/require-machine"  # pool annotation: serve only machines a document matches
ROLE_LABEL = "machineconfiguration.openshift.io/role"
GENERATED_BY = "machineconfiguration.openshift.io/generated-by-controller-version"
NAME_SUFFIX = "machineconfiguration.openshift.io/mc-name-suffix"
_SPEC_KEYS = frozenset(("config", "osImageURL", "baseOSExtensionsContainerImage", "kernelArguments", "extensions",
              "fips", "kernelType"))



@dataclass(frozen=True)
class MachineConfig:
    """A MachineConfig manifest (or one generated from templates, Butane or a KubeletConfig)."""

    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    spec: MachineConfigSpec
    has_config: bool                   # `spec.config` was given (MCO checks extensions only then)
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)
    config_path: Path = ("spec", "config")   # where spec.config sits in `doc`
    entry_origins: Mapping[str, str] = field(default_factory=dict, compare=False)  # provenance key -> file:line

    @property
    def role(self) -> str:
        """The `machineconfiguration.openshift.io/role` label ("" if absent)."""
        return self.labels.get(ROLE_LABEL, "")


@dataclass(frozen=True)
class MachineConfigPool:
    """A MachineConfigPool: which MachineConfigs it merges and how it rolls out."""

    name: str
    labels: Mapping[str, str]
    mc_selector: LabelSelector | None
    node_selector: LabelSelector  # absent or empty: matches no node
    paused: bool
    max_unavailable: int | str
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)
    broken: bool = False   # its manifest did not parse: the pool only carries its errors
    rollout: RolloutSettings = field(default_factory=RolloutSettings)  # its rollout.machine-config.io/ annotations
    require_machine: bool = False  # annotation REQUIRE_MACHINE "true": a booting machine must match a document


@dataclass(frozen=True)
class KubeletConfig:
    """A KubeletConfig: kubelet settings for the pools its selector picks."""

    name: str
    annotations: Mapping[str, str]
    pool_selector: LabelSelector | None
    kubelet_config: Mapping[str, Any]
    log_level: int | None
    auto_sizing_reserved: bool | None
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ContainerRuntimeConfig:
    """A ContainerRuntimeConfig: CRI-O settings for the pools its selector picks."""

    name: str
    annotations: Mapping[str, str]
    pool_selector: LabelSelector | None
    settings: Mapping[str, Any]
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)


def raw_spec(config: KubeletConfig | ContainerRuntimeConfig) -> Mapping[str, Any]:
    """The manifest's `spec` as written ({} when it is not an object)."""
    data = config.doc.data if config.doc is not None else None
    spec = data.get("spec") if isinstance(data, Mapping) else None
    return spec if isinstance(spec, Mapping) else {}


@dataclass(frozen=True)
class MachineConfiguration:
    """The `cluster` MachineConfiguration (operator.openshift.io/v1): node disruption policies and overrides."""

    name: str
    spec: Mapping[str, Any]
    origin: Origin


Manifest = (MachineConfig | MachineConfigPool | KubeletConfig | ContainerRuntimeConfig | MachineConfiguration
            | registries_model.RegistriesManifest | machines_model.Machine)




def machine_config_spec(check: Checker, spec: Mapping[str, Any], path: Path) -> tuple[MachineConfigSpec, bool]:
    """Read a MachineConfig `spec` (types only); returns it and whether `config` was given."""
    for key in spec:
        if key not in _SPEC_KEYS:
            check.add("unused-key", (*path, key), f"unused key {key}", severity="warning")
    config = spec.get("config")
    has_config = config is not None
    if has_config and type(config) is not dict and not isinstance(config, Mapping):
        check.type_error((*path, "config"), "an Ignition config object", config)
        config, has_config = None, False
    fips = check.boolean(spec, "fips", path)
    return MachineConfigSpec(
        config=config or {},
        os_image_url=check.string(spec, "osImageURL", path),
        base_os_extensions_container_image=check.string(spec, "baseOSExtensionsContainerImage", path),
        kernel_arguments=check.strings(spec, "kernelArguments", path),
        extensions=check.strings(spec, "extensions", path),
        fips=bool(fips),
        kernel_type=check.string(spec, "kernelType", path) or "default",
    ), has_config


def _machine_config(check: Checker, data: Mapping[str, Any]) -> MachineConfig:
    name, labels, annotations = read_metadata(check, data)
    spec = check.mapping(data, "spec", ())
    mc_spec, has_config = machine_config_spec(check, spec, ("spec",))
    return MachineConfig(name=name, labels=labels, annotations=annotations, spec=mc_spec, has_config=has_config,
                         origin=origin_of(check.doc), doc=check.doc)


def _max_unavailable(check: Checker, spec: Mapping[str, Any]) -> int | str:
    """`spec.maxUnavailable` as MCO `pkg/controller/node/node_controller.go` `maxUnavailable` reads it (Kubernetes
    `intstr.GetScaledValueFromIntOrPercent`, rounded down, at least 1): an integer, or a percentage of the pool,
    which may exceed 100%; a string without `%` or a negative count is refused here rather than stalling the pool."""
    value = spec.get("maxUnavailable")
    path: Path = ("spec", "maxUnavailable")
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int | str):
        check.type_error(path, "an integer or a percentage string", value)
        return 1
    if isinstance(value, int):
        if value < 0:
            check.add("max-unavailable", path, "maxUnavailable must not be negative")
        return value
    if not re.fullmatch(r"[0-9]{1,9}%", value):  # over 100% scales to every node (ASCII digits: Go's strconv.Atoi)
        check.add("max-unavailable", path, f"maxUnavailable {value!r} is not an integer or a percentage")
        return 1
    return value


def _pool(check: Checker, data: Mapping[str, Any]) -> MachineConfigPool:
    name, labels, annotations = read_metadata(check, data)
    rollout, problems = parse_settings(annotations)
    for key, message in problems:
        check.add("rollout-setting", ("metadata", "annotations", key), message)
    required = annotations.get(REQUIRE_MACHINE, "false")
    if required not in ("true", "false"):
        check.add("annotation", ("metadata", "annotations", REQUIRE_MACHINE), f"{REQUIRE_MACHINE} must be "
                  f"\"true\" or \"false\", got {required!r}")
    spec = check.mapping(data, "spec", ())
    selector = check.selector(spec, "machineConfigSelector", ("spec",))
    node_selector = check.selector(spec, "nodeSelector", ("spec",)) or NOTHING
    paused = check.boolean(spec, "paused", ("spec",))
    return MachineConfigPool(name=name, labels=labels, mc_selector=selector, node_selector=node_selector,
                             paused=bool(paused), max_unavailable=_max_unavailable(check, spec),
                             origin=origin_of(check.doc), doc=check.doc, rollout=rollout,
                             require_machine=required == "true")


def _kubelet_config(check: Checker, data: Mapping[str, Any]) -> KubeletConfig:
    name, _, annotations = read_metadata(check, data)
    spec = check.mapping(data, "spec", ())
    selector = check.selector(spec, "machineConfigPoolSelector", ("spec",))
    log_level = spec.get("logLevel")  # its range is the MCO's to refuse (renderer/kubelet_config.py)
    if log_level is not None and (isinstance(log_level, bool) or not isinstance(log_level, int)):
        check.type_error(("spec", "logLevel"), "an integer", log_level)
        log_level = None
    return KubeletConfig(name=name, annotations=annotations, pool_selector=selector,
                         kubelet_config=check.mapping(spec, "kubeletConfig", ("spec",)), log_level=log_level,
                         auto_sizing_reserved=check.boolean(spec, "autoSizingReserved", ("spec",)),
                         origin=origin_of(check.doc), doc=check.doc)


def _container_runtime_config(check: Checker, data: Mapping[str, Any]) -> ContainerRuntimeConfig:
    name, _, annotations = read_metadata(check, data)
    spec = check.mapping(data, "spec", ())
    selector = check.selector(spec, "machineConfigPoolSelector", ("spec",))
    return ContainerRuntimeConfig(name=name, annotations=annotations, pool_selector=selector,
                                  settings=check.mapping(spec, "containerRuntimeConfig", ("spec",)),
                                  origin=origin_of(check.doc), doc=check.doc)


def _machine_configuration(check: Checker, data: Mapping[str, Any]) -> MachineConfiguration:
    name, _, _ = read_metadata(check, data)
    if name and name != "cluster":
        check.add("invalid-name", ("metadata", "name"), "the MachineConfiguration must be named 'cluster'")
    return MachineConfiguration(name=name, spec=check.mapping(data, "spec", ()), origin=origin_of(check.doc))


_KINDS: dict[tuple[str, str], Callable[[Checker, Mapping[str, Any]], Manifest]] = {
    (MCO_API, "MachineConfig"): _machine_config,
    (MCO_API, "MachineConfigPool"): _pool,
    (MCO_API, "KubeletConfig"): _kubelet_config,
    (MCO_API, "ContainerRuntimeConfig"): _container_runtime_config,
    (OPERATOR_API, "MachineConfiguration"): _machine_configuration,
    **registries_model.KINDS,
    **machines_model.KINDS,
}


def parse_manifest(doc: Document) -> tuple[Manifest | None, list[Problem]]:
    """The typed object for a document, or None (problems say why); unknown kinds are a warning and skipped."""
    check = Checker(doc)
    data = doc.data
    if type(data) is not dict and not isinstance(data, Mapping):
        check.type_error((), "a Kubernetes object (a mapping with apiVersion and kind)", data)
        return None, check.problems
    api, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(kind, str) or not kind:
        check.add("required", ("kind",), "kind is required")
        return None, check.problems
    if not isinstance(api, str) or not api:
        check.add("required", ("apiVersion",), "apiVersion is required")
        return None, check.problems
    build = _KINDS.get((api, kind))
    if build is None:
        known = ", ".join(f"{k} ({a})" for a, k in _KINDS)
        check.add("unknown-kind", ("kind",), f"{kind} ({api}) is not a kind the renderer reads ({known}); ignored",
                  severity="warning")
        return None, check.problems
    obj = build(check, data)
    if any(p.severity == "error" for p in check.problems):
        return None, check.problems
    return obj, check.problems
