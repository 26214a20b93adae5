"""What the server adds to a served config for a booting node, as the MCS does (MCO `pkg/server/cluster_server.go`: GetConfig).

- `/etc/machine-config-daemon/node-annotations.json`: the node's first annotations (current, desired and
  first-pivot config = the served rendered name, state Done; images when the config names a pre-built one),
  so the on-node agent starts from the config the machine was provisioned with.
- `/etc/mcs-machine-config-content.json`: the whole MachineConfig served, Ignition part included, indented by
  four spaces as the MCS's `json.MarshalIndent(mc, "", "    ")` (MCO `pkg/server/server.go`
  appendInitialMachineConfig), with its keys sorted and non-ASCII escaped (the same JSON, not the same bytes):
  what the machine was provisioned with, to compare with what its pool renders later.
- `/etc/ignition-machine-config-encapsulated.json` (always last): the MachineConfig with its Ignition part
  replaced by an empty config of the version the MCS renders (3.5.0: `ctrlcommon.NewIgnConfig()` for every
  spec-3 request, not the served version; server.go appendEncapsulated); the first-boot agent reads
  osImageURL and kernel arguments from it.
- For a spec below 3.3.0 (no `kernelArguments` in Ignition), `kernelArguments.shouldExist` moves into the
  `spec.kernelArguments` of both MachineConfig files; `shouldNotExist` cannot travel and is refused
  (server.go MigrateKernelArgsIfNecessary).

Added files have mode 0644 (420), `overwrite: true` and `data:,` contents percent-escaped like Go's
`dataurl.Escape` (bytes outside `[A-Za-z0-9-_.!~*'()]` become `%XX`). A file of the config at the same
path is replaced rather than duplicated, so the result stays valid.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fleet.rendered import RenderedConfig
from ignition.canonical import canonical_json
from renderer.merge_machineconfigs import IGNITION_VERSION as RENDERED_VERSION
from server.convert import ConversionRefused

ANNOTATIONS_PATH = "/etc/machine-config-daemon/node-annotations.json"
ENCAPSULATED_PATH = "/etc/ignition-machine-config-encapsulated.json"
CONTENT_PATH = "/etc/mcs-machine-config-content.json"
ANNOTATION_PREFIX = "machineconfiguration.openshift.io/"
PRE_BUILT_IMAGE = ANNOTATION_PREFIX + "pre-built-image"
KARGS_SINCE = (3, 3, 0)


@dataclass(frozen=True)
class AppendOptions:
    """Which MCS-style files to append (all on by default, as the MCS always does)."""

    node_annotations: bool = True
    encapsulated: bool = True
    machine_config_content: bool = True


def escape_data_url(data: bytes) -> str:
    """A `data:,` URL with Go's `dataurl.Escape` percent-encoding (not base64, as the MCS writes them)."""
    return "data:," + quote(data, safe="-_.!~*'()")


def file_entry(path: str, data: bytes) -> dict[str, Any]:
    """An Ignition `storage.files` entry as the MCS appends it."""
    return {"path": path, "mode": 420, "overwrite": True, "contents": {"source": escape_data_url(data)}}


def node_annotations(rendered: RenderedConfig) -> bytes:
    """The node-annotations file content: compact JSON, keys sorted."""
    annotations = {
        ANNOTATION_PREFIX + "currentConfig": rendered.name,
        ANNOTATION_PREFIX + "desiredConfig": rendered.name,
        ANNOTATION_PREFIX + "firstPivotConfig": rendered.name,
        ANNOTATION_PREFIX + "state": "Done",
    }
    image = rendered.annotations.get(PRE_BUILT_IMAGE, "")
    if image:
        annotations[ANNOTATION_PREFIX + "currentImage"] = image
        annotations[ANNOTATION_PREFIX + "desiredImage"] = image
    return canonical_json(annotations)


def machine_config(rendered: RenderedConfig, config: Mapping[str, Any],
                   kernel_arguments: tuple[str, ...]) -> dict[str, Any]:
    """The served MachineConfig: the rendered one with `config` as its Ignition part and `kernel_arguments` (its
    own and those moved out of Ignition) as its `spec.kernelArguments`."""
    spec = rendered.spec.to_dict()
    spec["config"] = dict(config)
    spec["kernelArguments"] = list(kernel_arguments)
    return {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": {
            "name": rendered.name,
            "labels": {ANNOTATION_PREFIX + "pool": rendered.pool},
            "annotations": dict(rendered.annotations),
        },
        "spec": spec,
    }


def encapsulated(rendered: RenderedConfig, kernel_arguments: tuple[str, ...]) -> bytes:
    """The MachineConfig with `spec.config` emptied to `{"ignition":{"version":"3.5.0"}}`: the version the MCS
    renders, whichever spec-3 version is served (server.go appendEncapsulated: `ctrlcommon.NewIgnConfig()`)."""
    return canonical_json(machine_config(rendered, {"ignition": {"version": RENDERED_VERSION}}, kernel_arguments))


def machine_config_content(rendered: RenderedConfig, kernel_arguments: tuple[str, ...]) -> bytes:
    """The whole MachineConfig, its Ignition config as rendered (without the appended files, not translated to
    the served version), indented by four spaces (server.go appendInitialMachineConfig)."""
    mc = machine_config(rendered, rendered.ignition, kernel_arguments)
    return json.dumps(mc, indent=4, sort_keys=True).encode()


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("-")[0].split(".")[:3])


def migrate_kernel_arguments(config: Mapping[str, Any], version: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """For specs before 3.3.0: drop Ignition `kernelArguments`, returning `shouldExist` to carry in the MC."""
    out = dict(config)
    kargs = out.get("kernelArguments")
    if _version_tuple(version) >= KARGS_SINCE or not isinstance(kargs, Mapping):
        return out, ()
    if kargs.get("shouldNotExist"):
        raise ConversionRefused(version, f"can't serve version {version} with ignition "
                                "kernelArguments.shouldNotExist populated", ("$.kernelArguments.shouldNotExist",))
    del out["kernelArguments"]
    return out, tuple(str(a) for a in kargs.get("shouldExist") or ())


def with_appended(rendered: RenderedConfig, version: str, options: AppendOptions) -> dict[str, Any]:
    """The rendered Ignition config plus the appended files, ready to translate to `version`."""
    config, moved = migrate_kernel_arguments(rendered.ignition, version)
    extra: list[dict[str, Any]] = []
    kargs = tuple(rendered.spec.kernel_arguments) + moved
    if options.node_annotations:
        extra.append(file_entry(ANNOTATIONS_PATH, node_annotations(rendered)))
    if options.machine_config_content:
        extra.append(file_entry(CONTENT_PATH, machine_config_content(rendered, kargs)))
    if options.encapsulated:
        extra.append(file_entry(ENCAPSULATED_PATH, encapsulated(rendered, kargs)))
    if not extra:
        return config
    storage = dict(config.get("storage") or {})
    replaced = {e["path"] for e in extra}
    files = [f for f in storage.get("files") or () if not (isinstance(f, Mapping) and f.get("path") in replaced)]
    storage["files"] = files + extra
    config["storage"] = storage
    return config
