"""Merging a pool's ordered MachineConfigs into one spec: the MCO's `MergeMachineConfigs`
(MCO pkg/controller/common/helpers.go).

The rules, all of them, in the order they are applied (`configs` is already in merge order, order.py):

1. Ignition: every config is brought to the render version (3.5.0, `IGNITION_VERSION`, what the MCO
   renders) with `ignition.translate`. The result starts as the first MachineConfig's config (an absent
   config counts as `{"ignition": {"version": "3.5.0"}}`); each next MachineConfig that has a config is
   merged into it with Ignition's parent/child merge (ignition/merge.py). Before each merge every
   file of the child whose `contents.compression` is unset gets `""`, so that a later file without
   compression resets an earlier `gzip` (the MCO's work-around); after the merges every `compression: ""`
   is removed again and every file whose `overwrite` is unset gets `overwrite: true` -- except, unlike the
   MCO, a file without `contents.source` (an empty file, or one only setting mode/owner): Ignition
   refuses `overwrite: true` without a source (`overwrite must be false if source is unspecified`),
   and the rendered config is served to Ignition at first boot.
2. `fips` is the OR of all MachineConfigs.
3. `kernelType` is the last `realtime` or `64k-pages` in order, else `default`.
4. `kernelArguments` and 5. `extensions` are concatenated in order: no de-duplication, no splitting.
   `kernel-devel` with a non-default kernel type is refused (validate_machineconfigs.py).
6. `osImageURL` is the cluster default (cluster.yaml `osImageURL`), overridden by the LAST MachineConfig
   that sets a non-empty one, generated or not (the MCO reads no annotation here). The role templates carry the
   default themselves (templates.py, as the MCO's template controller sets them), so a MachineConfig that sorts
   before a template of its pool does not override it.
7. `baseOSExtensionsContainerImage`: the same rule with cluster.yaml's `baseOSExtensionsContainerImage`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from fleet.rendered import MachineConfigSpec
from ignition.errors import IgnitionError
from ignition.merge import MergedConfig, prune_empty
from ignition.spec2 import is_spec2, to_spec3
from ignition.translate import translate
from renderer.errors import RendererError
from renderer.model import MachineConfig

IGNITION_VERSION = "3.5.0"
SPECIAL_KERNEL_TYPES = ("realtime", "64k-pages")


class MachineConfigMergeError(RendererError):
    """A MachineConfig's config could not be brought to the render version; `name` is the MachineConfig."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(name, message)
        self.name = name


def to_render_version(config: Mapping[str, Any], *, name: str = "") -> Mapping[str, Any]:
    """The config in the render version (translated up or down with ignition.translate if needed)."""
    ignition = config.get("ignition")
    version = ignition.get("version") if isinstance(ignition, Mapping) else None
    if version == IGNITION_VERSION:
        return config
    try:
        if is_spec2(config):  # MCO ParseAndConvertConfig: de-duplicated, then converted (ignition.spec2)
            return to_spec3(config, IGNITION_VERSION)[0]
        return translate(config, IGNITION_VERSION)
    except IgnitionError as exc:
        raise MachineConfigMergeError(name, f"cannot translate Ignition {version} to {IGNITION_VERSION}: {exc}") from exc


def _with_compression_reset(config: Mapping[str, Any], merged_paths: Collection[Any]) -> Mapping[str, Any]:
    """`config` with `contents.compression: ""` on every file that leaves it unset (rule 1).

    Left out, as it changes nothing there: a file with a source whose path is not among `merged_paths` (the
    merged result's files) nor earlier in `config`: the merge appends it as a new entry, and the `""` would
    only be taken out again after the merges."""
    storage = config.get("storage")
    files = storage.get("files") if isinstance(storage, Mapping) else None
    if not isinstance(files, list) or not files:
        return config
    reset = []
    here: set[str] = set()
    for f in files:
        path = f.get("path") if type(f) is dict or isinstance(f, Mapping) else None
        appended = type(path) is str and path not in merged_paths and path not in here
        if type(path) is str:
            here.add(path)
        contents = f.get("contents") if type(f) is dict else None
        if type(contents) is dict and contents.get("compression") is None:  # the usual file
            if not appended or type(contents.get("source")) is not str:
                f = {**f, "contents": {**contents, "compression": ""}}
        elif isinstance(f, Mapping):
            contents = f.get("contents")
            contents = dict(contents) if isinstance(contents, Mapping) else {}
            if contents.get("compression") is None:
                contents["compression"] = ""
            f = {**f, "contents": contents}
        reset.append(f)
    return {**config, "storage": {**storage, "files": reset}}  # type: ignore[dict-item]


def _finish_files(config: dict[str, Any]) -> None:
    """Drop `compression: ""` and default `overwrite` to true on every file that has a source (rule 1)."""
    for f in (config.get("storage") or {}).get("files") or ():
        contents = f.get("contents")
        if type(contents) is not dict:
            continue
        if contents.get("compression") == "":
            del contents["compression"]
        if contents.get("source") is not None and f.get("overwrite") is None:
            f["overwrite"] = True


def merge_ignition_configs(configs: Sequence[MachineConfig]) -> dict[str, Any]:
    """Rule 1: the merged Ignition config of MachineConfigs in merge order."""
    merged: MergedConfig | None = None
    for mc in configs:
        config = to_render_version(mc.spec.config, name=mc.name) if mc.has_config else None
        if merged is None:
            merged = MergedConfig(config if config is not None else {"ignition": {"version": IGNITION_VERSION}},
                                  IGNITION_VERSION)
        elif config is not None:
            merged.merge(_with_compression_reset(config, merged.keys("storage", "files")))
    if merged is None:
        return {"ignition": {"version": IGNITION_VERSION}}
    result = merged.result
    _finish_files(result)
    if merged.may_have_empties:
        result = prune_empty(result)
    result.setdefault("ignition", {})["version"] = IGNITION_VERSION
    return result


def merge_machine_configs(configs: Sequence[MachineConfig], *, default_os_image: str = "",
                          default_extensions_image: str = "") -> MachineConfigSpec:
    """Rules 1-7: one MachineConfigSpec from MachineConfigs in merge order."""
    kernel_type = "default"
    os_image, ext_image = default_os_image, default_extensions_image
    kargs: list[str] = []
    extensions: list[str] = []
    fips = False
    for mc in configs:
        spec = mc.spec
        fips = fips or spec.fips
        if spec.kernel_type in SPECIAL_KERNEL_TYPES:
            kernel_type = spec.kernel_type
        kargs.extend(spec.kernel_arguments)
        extensions.extend(spec.extensions)
        if spec.os_image_url:
            os_image = spec.os_image_url
        if spec.base_os_extensions_container_image:
            ext_image = spec.base_os_extensions_container_image
    return MachineConfigSpec(config=merge_ignition_configs(configs), os_image_url=os_image,
                             base_os_extensions_container_image=ext_image, kernel_arguments=tuple(kargs),
                             extensions=tuple(extensions), fips=fips, kernel_type=kernel_type)
