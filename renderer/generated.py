"""KubeletConfig and ContainerRuntimeConfig -> generated MachineConfigs (MCO kubelet-config and
container-runtime-config controllers).

For every pool an object's `machineConfigPoolSelector` matches (nil or `{}` matches none), the object's
files (renderer/kubelet_config.py, renderer/crio_config.py) become the MachineConfig named as MCO
`getManagedKubeletConfigKey` / `getManagedKeyCtrCfg` (kubelet-config/helpers.go,
container-runtime-config/helpers.go) name it, the objects of a pool taken as created one after another
(those with a `machineconfiguration.openshift.io/mc-name-suffix` annotation first, then by name): an
annotation `""` names `99-<pool>-generated-kubelet` (`-containerruntime`), an annotation `N` names
`...-N`; an object without one gets the plain name when it is the pool's first, else `...-<M+1>` where M is
the largest suffix of the pool so far, refused past 9 (`max number of supported kubelet config (10) has
been reached`). Files are mode 0644, overwrite true, `data:text/plain;charset=utf-8;base64,...`, and the
MachineConfig is labelled with role = the pool name. Custom pools render the worker templates' kubelet
config as their base.

An object the MCO refuses does not stop its pools (as in the MCO, where only that object gets a
`Failure` condition): it is reported as a `Failure` for each pool it selects, with its problems, and
generates nothing; render.py keeps that pool's MachineConfig of the last successful sync, if any.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import yaml

from fleet.rendered import MachineConfigSpec
from ignition.dataurl import encode_data_url
from ignition.resource import ResourceError, read_resource
from renderer.crio_config import crio_config
from renderer.kubelet_config import KUBELET_CONF, kubelet_files, kubelet_problems
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

MAX_SUFFIX = 9  # MCO ctrlcommon.MaxMCNameSuffix: ten objects a pool
MAX_REACHED = {"kubelet": "max number of supported kubelet config (10) has been reached. Please delete old kubelet "
                          "configs before retrying",
               "containerruntime": "max number of supported ctrcfgs (10) has been reached. Please delete old "
                                   "ctrcfgs before retrying"}
KINDS = {"kubelet": "KubeletConfig", "containerruntime": "ContainerRuntimeConfig"}
FAILURE_CONDITIONS = ("KubeletConfigFailure", "ContainerRuntimeConfigFailure", "ImageConfigFailure")


@dataclass(frozen=True)
class Failure:
    """A KubeletConfig or ContainerRuntimeConfig refused for one pool: it generates nothing there."""

    kind: str                    # "KubeletConfig" | "ContainerRuntimeConfig" | an image-registry kind
    name: str                    # the object's name
    machine_config: str          # the generated MachineConfig it would have written
    problems: tuple[Problem, ...]
    condition: str = ""          # the pool condition carrying it, when not `<kind>Failure`

    @property
    def condition_type(self) -> str:
        """The pool condition that carries it (`KubeletConfigFailure`, `ContainerRuntimeConfigFailure`,
        `ImageConfigFailure` for the image-registry kinds)."""
        return self.condition or f"{self.kind}Failure"

    def message(self) -> str:
        """Every error, each with file:line and field."""
        return f"{self.kind} {self.name}: " + "; ".join(p.format() for p in self.problems if p.severity == "error")


@dataclass(frozen=True)
class Generated:
    """Generated MachineConfigs per pool, warnings per pool (key "" for those concerning no pool), and the
    objects refused for each pool (key "": refused objects that select no pool)."""

    configs: Mapping[str, tuple[MachineConfig, ...]]
    problems: Mapping[str, tuple[Problem, ...]]
    failures: Mapping[str, tuple[Failure, ...]] = field(default_factory=dict)


def file_entry(path: str, data: bytes) -> dict[str, Any]:
    """A generated Ignition file (MCO NewIgnFileBytesOverwriting: 0644, overwrite, a base64 data URL)."""
    source = encode_data_url(data, mediatype="text/plain;charset=utf-8", base64=True)
    return {"path": path, "mode": 0o644, "overwrite": True, "contents": {"source": source}}


def generated_machine_config(name: str, pool: str, files: list[dict[str, Any]], origin: Origin) -> MachineConfig:
    """The generated MachineConfig `name` for `pool` holding `files`."""
    config = {"ignition": {"version": IGNITION_VERSION}, "storage": {"files": files}}
    return MachineConfig(name=name, labels={ROLE_LABEL: pool}, annotations={GENERATED_BY: CONTROLLER_VERSION},
                         spec=MachineConfigSpec(config=config), has_config=True, origin=origin,
                         entry_origins={f"storage.files[{f['path']}]": str(origin) for f in files})


def base_kubelet_config(template_configs: Sequence[MachineConfig]) -> dict[str, Any]:
    """The kubelet.conf a role's templates write, parsed (empty if they write none)."""
    for mc in template_configs:
        for f in (mc.spec.config.get("storage") or {}).get("files") or ():
            if f.get("path") == KUBELET_CONF:
                try:
                    data = yaml.safe_load(read_resource(f.get("contents")) or b"")
                except (ResourceError, yaml.YAMLError):  # shows up when the template MC itself is validated
                    return {}
                return dict(data) if isinstance(data, Mapping) else {}
    return {}


T = TypeVar("T", KubeletConfig, ContainerRuntimeConfig)
Build = Callable[[T, MachineConfigPool], tuple[list[tuple[str, bytes]], list[Problem]]]


def _suffix_order(obj: KubeletConfig | ContainerRuntimeConfig) -> tuple[bool, str]:
    """Annotated objects first (the MCO named them before), then by name (creation order unknown)."""
    return (NAME_SUFFIX not in obj.annotations, obj.name)


def _suffix_number(suffix: str) -> int | None:
    """An annotation's suffix as Go's strconv.Atoi reads it ("" is the plain name: 0), None when it is not one."""
    if suffix == "":
        return 0
    digits = suffix[1:] if suffix[:1] in "+-" else suffix
    return int(suffix) if digits.isascii() and digits.isdigit() else None


def _machine_config_names(objs: Sequence[T], pool: str, kind: str) -> list[tuple[str, str | None]]:
    """(MachineConfig name, refusal or None) for each of a pool's objects, in `_suffix_order`."""
    base = f"99-{pool}-generated-{kind}"
    named: list[str] = []  # the suffixes taken so far
    out: list[tuple[str, str | None]] = []
    for obj in objs:
        suffix = obj.annotations.get(NAME_SUFFIX)
        if suffix is None:
            if obj is objs[0]:  # no annotated object: it came first, alone in the pool
                suffix = ""
            else:
                numbers = [_suffix_number(s) for s in named]
                bad = next((s for s, n in zip(named, numbers, strict=True) if n is None), None)
                if bad is not None:
                    out.append((base, f'error converting {bad} to int: strconv.Atoi: parsing "{bad}": invalid '
                                      "syntax"))
                    continue
                top = max((n for n in numbers if n is not None), default=0) + 1
                if top > MAX_SUFFIX:
                    out.append((f"{base}-{top}", MAX_REACHED[kind]))
                    continue
                suffix = str(top)
        name = f"{base}-{suffix}" if suffix else base
        if suffix in named:
            out.append((name, f"names the MachineConfig {name} as an earlier {KINDS[kind]} of pool {pool} does "
                              f"({NAME_SUFFIX} {suffix!r}); the MCO would let them overwrite each other"))
            continue
        named.append(suffix)
        out.append((name, None))
    return out


@dataclass
class _Out:
    configs: dict[str, list[MachineConfig]]
    problems: dict[str, list[Problem]]
    failures: dict[str, list[Failure]]


def _generate(objects: Sequence[T], pools: Sequence[MachineConfigPool], kind: str, build: Build[T],
              check: Callable[[T], list[Problem]], out: _Out) -> None:
    per_pool: dict[str, list[T]] = {}
    for obj in sorted(objects, key=_suffix_order):
        sel = obj.pool_selector
        matched = [p for p in pools if sel is not None and sel.matches(p.labels)]
        if not matched and obj.doc is not None:
            out.problems.setdefault("", []).append(obj.doc.problem(
                "selects-no-pool", ("spec", "machineConfigPoolSelector"),
                f"{type(obj).__name__} {obj.name} selects no MachineConfigPool; it has no effect", severity="warning"))
            # the MCO validates an object before it looks for pools: refused even when it selects none
            found = check(obj)
            out.problems[""].extend(p for p in found if p.severity != "error")
            errors = tuple(p for p in found if p.severity == "error")
            if errors:
                out.failures.setdefault("", []).append(Failure(KINDS[kind], obj.name, "", errors))
        for pool in matched:
            per_pool.setdefault(pool.name, []).append(obj)
    for pool_name, objs in per_pool.items():
        pool = next(p for p in pools if p.name == pool_name)
        for obj, (name, refusal) in zip(objs, _machine_config_names(objs, pool_name, kind), strict=True):
            if refusal is not None:
                assert obj.doc is not None
                path = ("metadata", "annotations", NAME_SUFFIX) if NAME_SUFFIX in obj.annotations else \
                    ("metadata", "name")
                found = [obj.doc.problem("max-generated", path, refusal)]
                files: list[tuple[str, bytes]] = []
            else:
                files, found = build(obj, pool)
            errors = tuple(p for p in found if p.severity == "error")
            out.problems.setdefault(pool_name, []).extend(p for p in found if p.severity != "error")
            if errors:
                out.failures.setdefault(pool_name, []).append(Failure(KINDS[kind], obj.name, name, errors))
                continue
            if files:
                out.configs.setdefault(pool_name, []).append(generated_machine_config(
                    name, pool_name, [file_entry(p, d) for p, d in files], obj.origin))


def generate(kubelet_configs: Sequence[KubeletConfig], runtime_configs: Sequence[ContainerRuntimeConfig],
             pools: Sequence[MachineConfigPool], *,
             base_kubelet: Callable[[str], Mapping[str, Any]]) -> Generated:
    """Generated MachineConfigs for every pool; `base_kubelet(pool)` gives the pool's template kubelet config."""
    out = _Out({}, {}, {})

    def kubelet(kc: KubeletConfig, pool: MachineConfigPool) -> tuple[list[tuple[str, bytes]], list[Problem]]:
        found = kubelet_problems(kc, pool.name)
        if any(p.severity == "error" for p in found):
            return [], found
        return kubelet_files(kc, base_kubelet(pool.name)), found

    def runtime(crc: ContainerRuntimeConfig, pool: MachineConfigPool) -> tuple[list[tuple[str, bytes]], list[Problem]]:
        return crio_config(crc)

    _generate(kubelet_configs, pools, "kubelet", kubelet, lambda kc: kubelet_problems(kc, ""), out)
    _generate(runtime_configs, pools, "containerruntime", runtime, lambda crc: crio_config(crc)[1], out)
    return Generated(configs={k: tuple(v) for k, v in out.configs.items()},
                     problems={k: tuple(v) for k, v in out.problems.items()},
                     failures={k: tuple(v) for k, v in out.failures.items()})
