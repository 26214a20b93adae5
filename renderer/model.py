"""Typed manifests: MachineConfig, MachineConfigPool, KubeletConfig, ContainerRuntimeConfig, MachineConfiguration.

Second stage of the flow: a loaded `Document` becomes one of these, or `Problem`s naming file:line:col and
the field path. Only the shape is checked here (types, required fields, names); what a MachineConfig's
Ignition config means is checked in `validate_machineconfigs.py`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet.names import is_dns_subdomain
from fleet.rendered import MachineConfigSpec
from fleet.rollout_settings import RolloutSettings, parse_settings
from renderer.label_selector import LabelSelector, parse_selector
from renderer.load import Document
from renderer.problems import Path, Problem

MCO_API = "machineconfiguration.openshift.io/v1"
OPERATOR_API = "operator.openshift.io/v1"
ROLE_LABEL = "machineconfiguration.openshift.io/role"
GENERATED_BY = "machineconfiguration.openshift.io/generated-by-controller-version"
NAME_SUFFIX = "machineconfiguration.openshift.io/mc-name-suffix"
_SPEC_KEYS = frozenset(("config", "osImageURL", "baseOSExtensionsContainerImage", "kernelArguments", "extensions",
              "fips", "kernelType"))


@dataclass(frozen=True)
class Origin:
    """Where an object was written: `manifests/50-chrony.yaml:3` (the document's first line)."""

    source: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.source}:{self.line}" if self.line else self.source


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

    @property
    def generated(self) -> bool:
        """Carries the generated-by-controller-version annotation (ignored as an osImageURL source)."""
        return bool(self.annotations.get(GENERATED_BY))


@dataclass(frozen=True)
class MachineConfigPool:
    """A MachineConfigPool: which MachineConfigs it merges and how it rolls out."""

    name: str
    labels: Mapping[str, str]
    mc_selector: LabelSelector | None
    node_selector: Mapping[str, str]
    paused: bool
    max_unavailable: int | str
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)
    broken: bool = False   # its manifest did not parse: the pool only carries its errors
    rollout: RolloutSettings = field(default_factory=RolloutSettings)  # its rollout.machine-config.io/ annotations


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


@dataclass(frozen=True)
class MachineConfiguration:
    """The `cluster` MachineConfiguration (operator.openshift.io/v1): node disruption policies and overrides."""

    name: str
    spec: Mapping[str, Any]
    origin: Origin


Manifest = MachineConfig | MachineConfigPool | KubeletConfig | ContainerRuntimeConfig | MachineConfiguration


class _Checker:
    """Collects shape problems for one document."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.problems: list[Problem] = []

    def add(self, code: str, path: Path, message: str, *, severity: str = "error") -> None:
        self.problems.append(self.doc.problem(code, path, message, severity=severity))

    def type_error(self, path: Path, expected: str, value: Any) -> None:
        got = _type_name(value)
        note = self.doc.parsed_as(path)
        self.add("json-type", path, f"expected {expected}, got {got}" + (f" ({note})" if note else ""))

    def string(self, data: Mapping[str, Any], key: str, path: Path, default: str = "") -> str:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.type_error((*path, key), "a string", value)
            return default
        return value

    def strings(self, data: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...]:
        value = data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.type_error((*path, key), "a list of strings", value)
            return ()
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.type_error((*path, key, i), "a string", item)
            else:
                out.append(item)
        return tuple(out)

    def string_map(self, data: Mapping[str, Any], key: str, path: Path) -> dict[str, str]:
        value = data.get(key)
        if value is None:
            return {}
        if type(value) is not dict and not isinstance(value, Mapping):
            self.type_error((*path, key), "an object of strings", value)
            return {}
        out: dict[str, str] = {}
        for k, v in value.items():
            if not isinstance(v, str):
                self.type_error((*path, key, k), "a string", v)
            else:
                out[str(k)] = v
        return out

    def boolean(self, data: Mapping[str, Any], key: str, path: Path) -> bool | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            self.type_error((*path, key), "a boolean", value)
            return None
        return value

    def mapping(self, data: Mapping[str, Any], key: str, path: Path) -> Mapping[str, Any]:
        value = data.get(key)
        if value is None:
            return {}
        if type(value) is not dict and not isinstance(value, Mapping):
            self.type_error((*path, key), "an object", value)
            return {}
        return value

    def selector(self, data: Mapping[str, Any], key: str, path: Path) -> LabelSelector | None:
        selector, problems = parse_selector(data.get(key), (*path, key))
        for ppath, code, message in problems:
            self.add(code, ppath, message)
        return selector


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _origin(doc: Document) -> Origin:
    return Origin(doc.source, doc.first_line())


def _metadata(check: _Checker, data: Mapping[str, Any]) -> tuple[str, dict[str, str], dict[str, str]]:
    meta = data.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        if meta is None:
            check.add("required", ("metadata",), "metadata.name is required")
        else:
            check.type_error(("metadata",), "an object", meta)
        return "", {}, {}
    name = meta.get("name")
    if name is None:
        check.add("required", ("metadata", "name"), "metadata.name is required")
        name = ""
    elif not isinstance(name, str):
        check.type_error(("metadata", "name"), "a string", name)
        name = ""
    elif not is_dns_subdomain(name):
        check.add("invalid-name", ("metadata", "name"),
                  f"name {name!r} is not a lowercase DNS subdomain name (a-z, 0-9, '-', '.')")
    labels = check.string_map(meta, "labels", ("metadata",))
    annotations = check.string_map(meta, "annotations", ("metadata",))
    return name, labels, annotations


def machine_config_spec(check: _Checker, spec: Mapping[str, Any], path: Path) -> tuple[MachineConfigSpec, bool]:
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


def _machine_config(check: _Checker, data: Mapping[str, Any]) -> MachineConfig:
    name, labels, annotations = _metadata(check, data)
    spec = check.mapping(data, "spec", ())
    mc_spec, has_config = machine_config_spec(check, spec, ("spec",))
    return MachineConfig(name=name, labels=labels, annotations=annotations, spec=mc_spec, has_config=has_config,
                         origin=_origin(check.doc), doc=check.doc)


def _max_unavailable(check: _Checker, spec: Mapping[str, Any]) -> int | str:
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
    if not re.fullmatch(r"\d{1,3}%", value) or int(value[:-1]) > 100:
        check.add("max-unavailable", path, f"maxUnavailable {value!r} is not an integer or a percentage 0%-100%")
        return 1
    return value


def _pool(check: _Checker, data: Mapping[str, Any]) -> MachineConfigPool:
    name, labels, annotations = _metadata(check, data)
    rollout, problems = parse_settings(annotations)
    for key, message in problems:
        check.add("rollout-setting", ("metadata", "annotations", key), message)
    spec = check.mapping(data, "spec", ())
    selector = check.selector(spec, "machineConfigSelector", ("spec",))
    node_sel = check.mapping(spec, "nodeSelector", ("spec",))
    node_labels = check.string_map(node_sel, "matchLabels", ("spec", "nodeSelector"))
    paused = check.boolean(spec, "paused", ("spec",))
    return MachineConfigPool(name=name, labels=labels, mc_selector=selector, node_selector=node_labels,
                             paused=bool(paused), max_unavailable=_max_unavailable(check, spec),
                             origin=_origin(check.doc), doc=check.doc, rollout=rollout)


def _kubelet_config(check: _Checker, data: Mapping[str, Any]) -> KubeletConfig:
    name, _, annotations = _metadata(check, data)
    spec = check.mapping(data, "spec", ())
    selector = check.selector(spec, "machineConfigPoolSelector", ("spec",))
    log_level = spec.get("logLevel")
    if log_level is not None and (isinstance(log_level, bool) or not isinstance(log_level, int)):
        check.type_error(("spec", "logLevel"), "an integer", log_level)
        log_level = None
    elif isinstance(log_level, int) and not 0 <= log_level <= 10:
        check.add("kubelet-log-level", ("spec", "logLevel"), f"logLevel {log_level} is not in the range 0-10")
    return KubeletConfig(name=name, annotations=annotations, pool_selector=selector,
                         kubelet_config=check.mapping(spec, "kubeletConfig", ("spec",)), log_level=log_level,
                         auto_sizing_reserved=check.boolean(spec, "autoSizingReserved", ("spec",)),
                         origin=_origin(check.doc), doc=check.doc)


def _container_runtime_config(check: _Checker, data: Mapping[str, Any]) -> ContainerRuntimeConfig:
    name, _, annotations = _metadata(check, data)
    spec = check.mapping(data, "spec", ())
    selector = check.selector(spec, "machineConfigPoolSelector", ("spec",))
    return ContainerRuntimeConfig(name=name, annotations=annotations, pool_selector=selector,
                                  settings=check.mapping(spec, "containerRuntimeConfig", ("spec",)),
                                  origin=_origin(check.doc), doc=check.doc)


def _machine_configuration(check: _Checker, data: Mapping[str, Any]) -> MachineConfiguration:
    name, _, _ = _metadata(check, data)
    if name and name != "cluster":
        check.add("invalid-name", ("metadata", "name"), "the MachineConfiguration must be named 'cluster'")
    return MachineConfiguration(name=name, spec=check.mapping(data, "spec", ()), origin=_origin(check.doc))


_KINDS = {
    (MCO_API, "MachineConfig"): _machine_config,
    (MCO_API, "MachineConfigPool"): _pool,
    (MCO_API, "KubeletConfig"): _kubelet_config,
    (MCO_API, "ContainerRuntimeConfig"): _container_runtime_config,
    (OPERATOR_API, "MachineConfiguration"): _machine_configuration,
}


def parse_manifest(doc: Document) -> tuple[Manifest | None, list[Problem]]:
    """The typed object for a document, or None (problems say why); unknown kinds are a warning and skipped."""
    check = _Checker(doc)
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
    obj: Manifest = build(check, data)  # type: ignore[assignment]
    if any(p.severity == "error" for p in check.problems):
        return None, check.problems
    return obj, check.problems
