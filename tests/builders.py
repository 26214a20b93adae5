"""The one builder of rendered configs for every package's tests (the renderer's output type, made by hand), and
of the MachineConfig manifests they put in a cluster directory (the renderer's input)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from fleet.rendered import MachineConfigSpec, RenderedConfig
from renderer.naming import rendered_name

VERSION = "3.4.0"  # the Ignition version of configs built from files, units and keys


def rendered_config(name: str | None = None, files: Sequence[Mapping[str, Any]] | None = None,
                    units: Sequence[Mapping[str, Any]] | None = None, keys: Sequence[str] | None = None, *,
                    config: Mapping[str, Any] | None = None, pool: str = "worker",
                    annotations: Mapping[str, str] | None = None, sources: Sequence[str] = (),
                    provenance: Mapping[str, str] | None = None, **spec: Any) -> RenderedConfig:
    """A RenderedConfig of `pool` holding `config`, or the config `files`, `units` and `keys` (core's SSH keys)
    make; `spec` holds the other MachineConfigSpec fields. Named `name` when it is a whole `rendered-...`
    name, `rendered-<pool>-<name>` for a short one, and from the spec's hash as the renderer names them when
    no name is given."""
    if config is None:
        built: dict[str, Any] = {"ignition": {"version": VERSION}}
        if files:
            built["storage"] = {"files": [dict(f) for f in files]}
        if units:
            built["systemd"] = {"units": [dict(u) for u in units]}
        if keys is not None:
            built["passwd"] = {"users": [{"name": "core", "sshAuthorizedKeys": list(keys)}]}
        config = built
    machine_config = MachineConfigSpec(config=dict(config), **spec)
    if name is None:
        name = rendered_name(pool, machine_config)
    elif not name.startswith("rendered-"):
        name = f"rendered-{pool}-{name}"
    return RenderedConfig(name=name, pool=pool, spec=machine_config, sources=tuple(sources),
                          annotations=dict(annotations or {}), provenance=dict(provenance or {}))


def machine_config_manifest(name: str, role: str, *, files: Mapping[str, str] | None = None, mode: int | None = None,
                            kernel_arguments: Sequence[str] = (), os_image: str = "") -> str:
    """A MachineConfig document (YAML) named `name` for pools selecting `role`: Ignition `VERSION` with `files`
    (path -> contents source, each with `mode` when given), `kernel_arguments` and the OS image `os_image`."""
    spec: dict[str, Any] = {}
    if files:
        entries = [{"path": path, **({"mode": mode} if mode is not None else {}), "contents": {"source": source}}
                   for path, source in files.items()]
        spec["config"] = {"ignition": {"version": VERSION}, "storage": {"files": entries}}
    if kernel_arguments:
        spec["kernelArguments"] = list(kernel_arguments)
    if os_image:
        spec["osImageURL"] = os_image
    return yaml.safe_dump({"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
                           "metadata": {"name": name, "labels": {"machineconfiguration.openshift.io/role": role}},
                           "spec": spec}, sort_keys=False)


def custom_pool_manifest(name: str, *, max_unavailable: object = 1) -> str:
    """A custom MachineConfigPool document (YAML) as the MCO's custom-pools convention has it: MachineConfigs of
    roles `worker` and `name`, nodes labelled `node-role.kubernetes.io/<name>`."""
    return yaml.safe_dump({"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
                           "metadata": {"name": name},
                           "spec": {"machineConfigSelector": {"matchExpressions": [
                               {"key": "machineconfiguration.openshift.io/role", "operator": "In",
                                "values": ["worker", name]}]},
                               "nodeSelector": {"matchLabels": {f"node-role.kubernetes.io/{name}": ""}},
                               "maxUnavailable": max_unavailable}}, sort_keys=False)
