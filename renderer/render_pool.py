"""Rendering one pool (render.py calls it for each): select -> order -> validate inputs -> merge -> name ->
validate result -> reconcile with the pool's current target. No store writes.

A pool with errors gets no rendered config (render.py keeps its previous target); the problems charged to it
are those whose owner (inputs.py) the pool's selectors pick.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.rendered import RenderedConfig
from ignition.canonical import canonical_json
from renderer.inputs import EVERY_POOL, WHOLE_CLUSTER, Inputs
from renderer.last_sync import last_synced
from renderer.merge_machineconfigs import MachineConfigMergeError, merge_machine_configs
from renderer.model import GENERATED_BY, MachineConfigPool
from renderer.naming import rendered_name, spec_bytes
from renderer.order import merge_order
from renderer.problems import Problem
from renderer.provenance import compute_provenance
from renderer.templates import CONTROLLER_VERSION
from renderer.validate_machineconfigs import (
    Verdict,
    check_machine_config,
    reconcile_problems,
    validate_result,
)

OS_IMAGE_OVERRIDDEN = "machineconfiguration.openshift.io/os-image-url-overridden"
RELEASE_VERSION = "machineconfiguration.openshift.io/release-image-version"


def _owned_by(owner: Any, pool: MachineConfigPool) -> bool:
    if owner == EVERY_POOL:
        return True
    if owner == WHOLE_CLUSTER:
        return False
    if isinstance(owner, dict):
        return pool.mc_selector is not None and pool.mc_selector.matches(owner)
    if isinstance(owner, tuple) and owner[0] == "pool":
        return bool(owner[1] == pool.name)
    if isinstance(owner, tuple) and owner[0] == "pool-selector":
        return owner[1] is not None and owner[1].matches(pool.labels)
    return True


@dataclass(frozen=True)
class PoolOutcome:
    """One pool's rendered config (None when it failed), its problems and the MachineConfigs it merged."""

    pool: MachineConfigPool
    rendered: RenderedConfig | None
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]
    sources: tuple[str, ...]


def render_pool(pool: MachineConfigPool, inputs: Inputs, *, validated: dict[int, Verdict],
                current: RenderedConfig | None = None, overrides: Sequence[str] = ()) -> PoolOutcome:
    """Select, order, validate, merge and name one pool's rendered config (no store writes)."""
    own = [p for owner, p in inputs.problems if _owned_by(owner, pool)]
    errors = [p for p in own if p.severity == "error"]
    warnings = [p for p in own if p.severity == "warning"]
    selector = pool.mc_selector
    if pool.broken:
        return PoolOutcome(pool, None, tuple(errors), tuple(warnings), ())
    if selector is None:
        errors.append(Problem("selector-nil", f"pool {pool.name} has no machineConfigSelector: it selects no "
                              "MachineConfigs", pool.origin.source, ("spec", "machineConfigSelector"),
                              pool.origin.line))
        return PoolOutcome(pool, None, tuple(errors), tuple(warnings), ())
    if selector.is_empty:
        errors.append(Problem("selector-all", f"pool {pool.name} has an empty machineConfigSelector, which would "
                              "select every MachineConfig; refusing to render (SelectingAll)", pool.origin.source,
                              ("spec", "machineConfigSelector"), pool.origin.line))
        return PoolOutcome(pool, None, tuple(errors), tuple(warnings), ())
    kept = last_synced(inputs.failures.get(pool.name, ()), pool.name, current)  # refused generators' last sync
    selected = merge_order([*(mc for mc in inputs.machine_configs if selector.matches(mc.labels)), *kept])
    sources = tuple(mc.name for mc in selected)
    for mc in selected:
        if not mc.labels:  # only NotIn / DoesNotExist selectors pick these; the MCO refuses to merge them
            errors.append(Problem("no-labels", f"cannot find label in MachineConfig {mc.name}", mc.origin.source,
                                  ("metadata", "labels"), mc.origin.line))
    if not selected:
        errors.append(Problem("selector-none", f"no MachineConfigs found matching selector {selector.describe()}",
                              pool.origin.source, ("spec", "machineConfigSelector"), pool.origin.line))
        return PoolOutcome(pool, None, tuple(errors), tuple(warnings), sources)
    allowed = inputs.cluster.extensions_allow_list
    for mc in selected:
        verdict = validated.get(id(mc))  # (every MachineConfig lives in `inputs` for the whole render)
        if verdict is None:
            verdict = validated[id(mc)] = check_machine_config(mc, allowed_extensions=allowed)
        for p in verdict.problems:
            (errors if p.severity == "error" else warnings).append(p)
    if errors:
        return PoolOutcome(pool, None, tuple(errors), tuple(warnings), sources)
    try:
        spec = merge_machine_configs(selected, default_os_image=inputs.cluster.os_image_url,
                                     default_extensions_image=inputs.cluster.extensions_image)
    except MachineConfigMergeError as exc:
        mc = next(m for m in selected if m.name == exc.name)
        errors.append(Problem("translate", exc.message, mc.origin.source, ("spec", "config"), mc.origin.line))
        return PoolOutcome(pool, None, tuple(errors), tuple(warnings), sources)
    annotations = {GENERATED_BY: CONTROLLER_VERSION}
    release = inputs.cluster.values.get("releaseVersion")
    if isinstance(release, str):
        annotations[RELEASE_VERSION] = release
    if spec.os_image_url != inputs.cluster.os_image_url:
        annotations[OS_IMAGE_OVERRIDDEN] = "true"
    canonical = spec_bytes(spec)
    rendered = RenderedConfig(name=rendered_name(pool.name, spec, canonical), pool=pool.name, spec=spec,
                              sources=sources, annotations=annotations, provenance=compute_provenance(selected))
    size = machine_config_size(rendered, canonical)
    errors.extend(validate_result(spec, selected, size=size, pool=pool.name))
    if not errors and current is not None and current.name != rendered.name:
        errors.extend(reconcile_problems(current.name, current.spec, spec, selected, overrides=overrides))
    return PoolOutcome(pool, None if errors else rendered, tuple(errors), tuple(warnings), sources)


def machine_config_size(rendered: RenderedConfig, canonical_spec: bytes | None = None) -> int:
    """Bytes of the MachineConfig object as compact JSON (what the MCO measures; our provenance left out).

    `canonical_spec`, the spec's compact JSON already made for the name (renderer/naming.py), saves
    serialising the spec again: a JSON text's length does not depend on its key order."""
    data = rendered.to_dict()
    data.pop("provenance", None)
    data.pop("sources", None)
    if canonical_spec is not None:
        data["spec"] = 0
        return machine_config_size_of(data) - 1 + len(canonical_spec)
    return machine_config_size_of(data)


def machine_config_size_of(data: Mapping[str, Any]) -> int:
    """Length of `data` as compact UTF-8 JSON."""
    return len(canonical_json(data))
