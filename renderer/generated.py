"""KubeletConfig and ContainerRuntimeConfig -> generated MachineConfigs (notes/mco.md §1.3, §1.4).

For every pool a KubeletConfig's `machineConfigPoolSelector` matches (nil or `{}` matches none):
- the pool's own kubelet config (`/etc/kubernetes/kubelet.conf` from the `01-<role>-kubelet` template;
  custom pools render the worker templates) is deep-merged with the user's `kubeletConfig` (maps merge,
  other values replace), and written back as YAML;
- `logLevel` adds `/etc/systemd/system/kubelet.service.d/20-logging.conf`, `autoSizingReserved` adds
  `/etc/node-sizing-enabled.env`;
- files are mode 0644, overwrite true, `data:text/plain;charset=utf-8;base64,...` contents;
- the MachineConfig is `99-<pool>-generated-kubelet` for the first KubeletConfig of the pool (in
  `mc-name-suffix` annotation order, then name order) and `99-<pool>-generated-kubelet-<N>` for the
  next ones, at most 10 per pool; it is labelled with role = the pool name.
Refused as the MCO refuses them: `cgroupDriver`, `clusterDNS`, `clusterDomain`, `featureGates`,
`failSwapOn`, `memorySwap.swapBehavior`, `staticPodPath`, `systemReserved` with `autoSizingReserved`,
`systemReservedCgroup` different from `systemCgroups`.
ContainerRuntimeConfig: `pidsLimit` (0 or >= 20), `logLevel`, `logSizeMax` (> 8192 bytes when > 0),
`defaultRuntime` (runc, crun), `overlaySize` become CRI-O drop-ins `/etc/crio/crio.conf.d/01-ctrcfg-<field>`
(and `/etc/containers/storage.conf` for the overlay size) in `99-<pool>-generated-containerruntime[-N]`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import yaml

from fleet.rendered import MachineConfigSpec
from ignition.dataurl import decode_data_url, encode_data_url
from renderer.model import (
    GENERATED_BY,
    NAME_SUFFIX,
    ROLE_LABEL,
    ContainerRuntimeConfig,
    KubeletConfig,
    MachineConfig,
    MachineConfigPool,
    Origin,
)
from renderer.problems import Problem
from renderer.templates import CONTROLLER_VERSION, IGNITION_VERSION

KUBELET_CONF = "/etc/kubernetes/kubelet.conf"
LOGGING_DROPIN = "/etc/systemd/system/kubelet.service.d/20-logging.conf"
NODE_SIZING = "/etc/node-sizing-enabled.env"
CRIO_DROPINS = "/etc/crio/crio.conf.d"
STORAGE_CONF = "/etc/containers/storage.conf"
MAX_PER_POOL = 10
FORBIDDEN_KUBELET = ("cgroupDriver", "clusterDNS", "clusterDomain", "featureGates", "failSwapOn", "staticPodPath")
CRIO_LOG_LEVELS = ("error", "fatal", "panic", "warn", "info", "debug", "trace")
RUNTIMES = ("runc", "crun")
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")
_FACTORS = {None: 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
            "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


@dataclass(frozen=True)
class Generated:
    """Generated MachineConfigs per pool, and problems per pool (they degrade only that pool; key "" is
    for problems that concern no pool)."""

    configs: Mapping[str, tuple[MachineConfig, ...]]
    problems: Mapping[str, tuple[Problem, ...]]


def _file(path: str, data: bytes) -> dict[str, Any]:
    source = encode_data_url(data, mediatype="text/plain;charset=utf-8", base64=True)
    return {"path": path, "mode": 0o644, "overwrite": True, "contents": {"source": source}}


def _mc(name: str, pool: str, files: list[dict[str, Any]], origin: Origin, key_origin: str) -> MachineConfig:
    config = {"ignition": {"version": IGNITION_VERSION}, "storage": {"files": files}}
    return MachineConfig(name=name, labels={ROLE_LABEL: pool}, annotations={GENERATED_BY: CONTROLLER_VERSION},
                         spec=MachineConfigSpec(config=config), has_config=True, origin=origin,
                         entry_origins={f"storage.files[{f['path']}]": key_origin for f in files})


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """mergo.Merge(..., WithOverride): nested maps merge, any other override value replaces."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def base_kubelet_config(template_configs: Sequence[MachineConfig]) -> dict[str, Any]:
    """The kubelet.conf a role's templates write, parsed (empty if they write none)."""
    for mc in template_configs:
        for f in (mc.spec.config.get("storage") or {}).get("files") or ():
            if f.get("path") == KUBELET_CONF:
                try:
                    data = yaml.safe_load(decode_data_url((f.get("contents") or {}).get("source", "")))
                except Exception:  # a broken template shows up when the template MC itself is validated
                    return {}
                return dict(data) if isinstance(data, Mapping) else {}
    return {}


def _kubelet_problems(kc: KubeletConfig) -> list[Problem]:
    doc = kc.doc
    assert doc is not None
    problems = []
    user = kc.kubelet_config
    base = ("spec", "kubeletConfig")
    for key in FORBIDDEN_KUBELET:
        if key in user:
            problems.append(doc.problem("kubelet-forbidden", (*base, key),
                                        f"KubeletConfiguration: {key} is not allowed to be set"))
    swap = user.get("memorySwap")
    if isinstance(swap, Mapping) and "swapBehavior" in swap:
        problems.append(doc.problem("kubelet-forbidden", (*base, "memorySwap", "swapBehavior"),
                                    "KubeletConfiguration: memorySwap.swapBehavior is not allowed to be set"))
    if user.get("systemReserved") and kc.auto_sizing_reserved:
        problems.append(doc.problem("kubelet-conflict", (*base, "systemReserved"),
                                    "KubeletConfiguration: autoSizingReserved and systemReserved cannot be "
                                    "set together"))
    if "systemReservedCgroup" in user and "systemCgroups" in user and \
            user["systemReservedCgroup"] != user["systemCgroups"]:
        problems.append(doc.problem("kubelet-conflict", (*base, "systemReservedCgroup"),
                                    "KubeletConfiguration: systemReservedCgroup should match systemCgroups"))
    return problems


def _kubelet_files(kc: KubeletConfig, base: Mapping[str, Any]) -> list[dict[str, Any]]:
    files = []
    if kc.kubelet_config or base:
        merged = deep_merge(base, kc.kubelet_config)
        merged.setdefault("apiVersion", "kubelet.config.k8s.io/v1beta1")
        merged.setdefault("kind", "KubeletConfiguration")
        files.append(_file(KUBELET_CONF, yaml.safe_dump(merged, sort_keys=True, default_flow_style=False).encode()))
    if kc.log_level is not None:
        files.append(_file(LOGGING_DROPIN, f'[Service]\nEnvironment="KUBELET_LOG_LEVEL={kc.log_level}"\n'.encode()))
    if kc.auto_sizing_reserved is not None:
        files.append(_file(NODE_SIZING, (
            f"NODE_SIZING_ENABLED={str(kc.auto_sizing_reserved).lower()}\nSYSTEM_RESERVED_MEMORY=1Gi\n"
            "SYSTEM_RESERVED_CPU=500m\nSYSTEM_RESERVED_ES=1Gi\n").encode()))
    return files


def parse_quantity(value: Any) -> int | None:
    """A Kubernetes quantity (`8Ki`, `1G`, `4096`) in bytes, or None if it is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return None
    m = _QUANTITY.match(value.strip())
    if not m:
        return None
    return int(float(m.group(1)) * _FACTORS[m.group(2)])


def _crc_files(crc: ContainerRuntimeConfig) -> tuple[list[dict[str, Any]], list[Problem]]:
    doc = crc.doc
    assert doc is not None
    s = crc.settings
    base = ("spec", "containerRuntimeConfig")
    files: list[dict[str, Any]] = []
    problems: list[Problem] = []

    def dropin(field: str, body: str) -> None:
        files.append(_file(f"{CRIO_DROPINS}/01-ctrcfg-{field}", f"[crio.runtime]\n{body}\n".encode()))

    known = {"pidsLimit", "logLevel", "logSizeMax", "overlaySize", "defaultRuntime"}
    for key in s:
        if key not in known:
            problems.append(doc.problem("unused-key", (*base, key), f"unused key {key}", severity="warning"))
    if "pidsLimit" in s:
        v = s["pidsLimit"]
        if isinstance(v, bool) or not isinstance(v, int) or (v != 0 and v < 20) or v < 0:
            problems.append(doc.problem("crio-pids-limit", (*base, "pidsLimit"),
                                        f"invalid PidsLimit {v!r}: must be 0 or at least 20"))
        else:
            dropin("pidsLimit", f"pids_limit = {v}")
    if "logLevel" in s:
        v = s["logLevel"]
        if v not in CRIO_LOG_LEVELS:
            problems.append(doc.problem("crio-log-level", (*base, "logLevel"),
                                        f"invalid LogLevel {v!r}, must be one of {', '.join(CRIO_LOG_LEVELS)}"))
        else:
            dropin("logLevel", f'log_level = "{v}"')
    if "logSizeMax" in s:
        size = parse_quantity(s["logSizeMax"])
        if size is None or (0 < size <= 8192):
            problems.append(doc.problem("crio-log-size", (*base, "logSizeMax"),
                                        f"invalid LogSizeMax {s['logSizeMax']!r}: must be a quantity above 8k"))
        else:
            dropin("logSizeMax", f"log_size_max = {size}")
    if "defaultRuntime" in s:
        v = s["defaultRuntime"]
        if v not in RUNTIMES and v != "":
            problems.append(doc.problem("crio-runtime", (*base, "defaultRuntime"),
                                        f"invalid defaultRuntime {v!r}, must be one of {', '.join(RUNTIMES)}"))
        elif v:
            dropin("defaultRuntime", f'default_runtime = "{v}"')
    if "overlaySize" in s:
        size = parse_quantity(s["overlaySize"])
        if size is None or size < 0:
            problems.append(doc.problem("crio-overlay-size", (*base, "overlaySize"),
                                        f"invalid overlaySize {s['overlaySize']!r}: must be a quantity >= 0"))
        else:
            files.append(_file(STORAGE_CONF, (
                '[storage]\ndriver = "overlay"\nrunroot = "/run/containers/storage"\n'
                'graphroot = "/var/lib/containers/storage"\n\n[storage.options.overlay]\n'
                f'size = "{s["overlaySize"]}"\n').encode()))
    return files, problems


T = TypeVar("T", KubeletConfig, ContainerRuntimeConfig)


def _pools_of(obj: T, pools: Sequence[MachineConfigPool]) -> list[MachineConfigPool]:
    sel = obj.pool_selector
    return [p for p in pools if sel is not None and sel.matches(p.labels)]


def _suffix_order(obj: T) -> tuple[int, str]:
    raw = obj.annotations.get(NAME_SUFFIX)
    if raw is None:
        return (1_000, obj.name)
    return (int(raw) if raw.isdigit() else 0, obj.name)


def _generate(objects: Sequence[T], pools: Sequence[MachineConfigPool], kind: str,
              build: Callable[[T, MachineConfigPool], tuple[list[dict[str, Any]], list[Problem]]],
              out: dict[str, list[MachineConfig]], problems: dict[str, list[Problem]]) -> None:
    per_pool: dict[str, list[T]] = {}
    for obj in sorted(objects, key=_suffix_order):
        matched = _pools_of(obj, pools)
        if not matched and obj.doc is not None:
            problems.setdefault("", []).append(obj.doc.problem(
                "selects-no-pool", ("spec", "machineConfigPoolSelector"),
                f"{type(obj).__name__} {obj.name} selects no MachineConfigPool; it has no effect", severity="warning"))
        for pool in matched:
            per_pool.setdefault(pool.name, []).append(obj)
    for pool_name, objs in per_pool.items():
        pool = next(p for p in pools if p.name == pool_name)
        for n, obj in enumerate(objs):
            if n >= MAX_PER_POOL:
                assert obj.doc is not None
                problems.setdefault(pool_name, []).append(obj.doc.problem(
                    "max-generated", ("metadata", "name"),
                    f"max number of supported {kind} config ({MAX_PER_POOL}) has been reached"))
                continue
            files, found = build(obj, pool)
            problems.setdefault(pool_name, []).extend(found)
            if any(p.severity == "error" for p in found) or not files:
                continue
            name = f"99-{pool_name}-generated-{kind}" + (f"-{n}" if n else "")
            out.setdefault(pool_name, []).append(_mc(name, pool_name, files, obj.origin, str(obj.origin)))


def generate(kubelet_configs: Sequence[KubeletConfig], runtime_configs: Sequence[ContainerRuntimeConfig],
             pools: Sequence[MachineConfigPool], *,
             base_kubelet: Callable[[str], Mapping[str, Any]]) -> Generated:
    """Generated MachineConfigs for every pool; `base_kubelet(pool)` gives the pool's template kubelet config."""
    out: dict[str, list[MachineConfig]] = {}
    problems: dict[str, list[Problem]] = {}

    def kubelet(kc: KubeletConfig, pool: MachineConfigPool) -> tuple[list[dict[str, Any]], list[Problem]]:
        found = _kubelet_problems(kc)
        return ([] if found else _kubelet_files(kc, base_kubelet(pool.name))), found

    def runtime(crc: ContainerRuntimeConfig, pool: MachineConfigPool) -> tuple[list[dict[str, Any]], list[Problem]]:
        return _crc_files(crc)

    _generate(kubelet_configs, pools, "kubelet", kubelet, out, problems)
    _generate(runtime_configs, pools, "containerruntime", runtime, out, problems)
    return Generated(configs={k: tuple(v) for k, v in out.items()},
                     problems={k: tuple(v) for k, v in problems.items()})
