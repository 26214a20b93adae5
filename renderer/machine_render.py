"""Per-machine configs: each machine document's overlay, merged over its pool's rendered config.

    Machine document (renderer/model.py) -> machine templates -> overlay spec -> merged with the pool's config
    -> `rendered-<pool>-<pool hash>-<overlay hash>` + a MachineEntry in the pool record (fleet/machines.py)

What it decides:
- A machine's pool follows from its labels as the MCO decides a node's pool (fleet/membership.py); a machine
  in no pool is an error naming it.
- Its overlay is made by the machine templates its document names, `machine-templates/<name>/` (`files/`
  and `units/` snippets exactly as role templates, renderer/templates.py, and `kernel-arguments.yaml`, a list),
  rendered with jinja2 over the cluster.yaml values, the machine's variables, its selector values (`mac`,
  `uuid`, `serial`, `hostname`; they win over a variable of the same name, as matchbox's selectors over its
  metadata), and `machine` (name, labels, selector, variables). Templates are merged in the
  order named, then the overlay over the pool's config, by the MCO's rules (merge_machine_configs.py): an
  overlay file is merged over the pool's file of the same path field by field (Ignition's merge), a unit
  over its unit, kernel arguments are appended.
- The machine's config is named from the pool's rendered name and the overlay's hash (content-addressed:
  the two determine the merge), annotated with both, and its provenance names the machine document and the
  template file of every overlay entry (`mco render --explain POOL --machine NAME`).
- Problems of machine documents degrade no pool; they are listed with the render's errors. A machine whose
  document cannot be rendered keeps its previous overlay (merged over the new pool config), so a broken
  edit never takes a machine's hostname or address away. Two documents of the same name, with the same
  selector in one pool (they would always tie) or with the same `hostname` (the day-2 identity) are errors naming
  both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleet.machine_entry import MachineEntry
from fleet.membership import pools_for_labels
from fleet.rendered import MachineConfigSpec, PoolRecord, RenderedConfig, machine_config_name
from ignition.canonical import canonical_json
from renderer.cluster import Cluster
from renderer.machines_model import Machine
from renderer.merge_machineconfigs import MachineConfigMergeError, merge_machine_configs
from renderer.model import GENERATED_BY, MachineConfig, Origin
from renderer.naming import spec_hash
from renderer.problems import Problem
from renderer.provenance import compute_provenance
from renderer.render_pool import machine_config_size
from renderer.templates import CONTROLLER_VERSION, IGNITION_VERSION, render_snippets, render_text
from renderer.validate_machineconfigs import MAX_MACHINE_CONFIG_SIZE, validate_result

MACHINE_TEMPLATES_DIR = "machine-templates"
KERNEL_ARGUMENTS_FILE = "kernel-arguments.yaml"
MACHINE_ANNOTATION = "machine-config.io/machine"
POOL_CONFIG_ANNOTATION = "machine-config.io/pool-config"
OVERLAY_ANNOTATION = "machine-config.io/overlay"
NODE_ANNOTATION = "machine-config.io/node"  # the node (hostname selector) that alone may fetch it on day 2
_CONCATENATED = ("kernelArguments[", "extensions[")

PoolOf = Callable[[Machine], "tuple[str, str]"]  # a machine -> (its pool, or "" and why it has none)


@dataclass(frozen=True)
class Overlay:
    """A machine's overlay: the spec merged over its pool's config, its hash and where each entry came from."""

    spec: MachineConfigSpec
    hash: str
    provenance: Mapping[str, str]


@dataclass
class MachineRenders:
    """Every pool's machine entries, the machine configs to store, and the problems of machine documents."""

    entries: dict[str, list[MachineEntry]] = field(default_factory=dict)
    configs: dict[str, RenderedConfig] = field(default_factory=dict)  # machine document name -> its config
    problems: list[Problem] = field(default_factory=list)


def _problem(machine: Machine, code: str, message: str, path: tuple[str | int, ...] = ()) -> Problem:
    if machine.doc is not None:
        problem = machine.doc.problem(code, path, f"machine {machine.name}: {message}")
        return problem
    return Problem(code, f"machine {machine.name}: {message}", machine.origin.source, path, machine.origin.line)


def _context(cluster: Cluster, machine: Machine) -> dict[str, Any]:
    about = {"name": machine.name, "labels": dict(machine.labels), "selector": dict(machine.selector),
             "variables": dict(machine.variables)}
    # the selector values over the variables, as matchbox's collectVariables writes selectors over metadata
    return {**cluster.values, "cluster": cluster.values, **machine.variables, **machine.selector, "machine": about}


def _kernel_arguments(cluster_dir: Path, rel: str, context: Mapping[str, Any],
                      machine: Machine) -> tuple[tuple[str, ...], list[Problem]]:
    doc, problems = render_text(cluster_dir, rel, context)
    if doc is None:
        return (), problems
    data = doc.data
    if data is None:
        return (), []
    if not isinstance(data, list) or not all(isinstance(a, str) for a in data):
        return (), [Problem("json-type", f"machine {machine.name}: {KERNEL_ARGUMENTS_FILE} must be a list of "
                            "strings", rel)]
    return tuple(data), []


def render_overlay(cluster_dir: Path, cluster: Cluster, machine: Machine) -> tuple[Overlay | None, list[Problem]]:
    """The overlay of one machine document (None when it has errors; the problems say why)."""
    context = _context(cluster, machine)
    configs: list[MachineConfig] = []
    problems: list[Problem] = []
    who = f"machine {machine.name}"
    for i, template in enumerate(machine.templates):
        directory = cluster_dir / MACHINE_TEMPLATES_DIR / template
        if not directory.is_dir():
            problems.append(_problem(machine, "machine-template", f"no machine template directory "
                                     f"{MACHINE_TEMPLATES_DIR}/{template}", ("spec", "templates", i)))
            continue
        snippets = render_snippets(cluster_dir, directory, context)
        problems.extend(snippets.problems)
        origins = {k: f"{machine.origin}, template {v}" for k, v in snippets.origins.items()}
        kargs: tuple[str, ...] = ()
        if (directory / KERNEL_ARGUMENTS_FILE).is_file():
            rel = f"{MACHINE_TEMPLATES_DIR}/{template}/{KERNEL_ARGUMENTS_FILE}"
            kargs, found = _kernel_arguments(cluster_dir, rel, context, machine)
            problems.extend(found)
            origins.update({f"kernelArguments[{a}]": f"{machine.origin}, template {rel}:1" for a in kargs})
        configs.append(MachineConfig(name=who, labels={}, annotations={GENERATED_BY: CONTROLLER_VERSION},
                                     spec=MachineConfigSpec(config=snippets.config, kernel_arguments=kargs),
                                     has_config=True, origin=Origin(machine.origin.source, machine.origin.line),
                                     entry_origins=origins))
    if any(p.severity == "error" for p in problems):
        return None, problems
    try:
        spec = merge_machine_configs(configs) if configs else MachineConfigSpec(
            config={"ignition": {"version": IGNITION_VERSION}})
    except MachineConfigMergeError as exc:
        return None, [*problems, _problem(machine, "translate", exc.message)]
    provenance = compute_provenance(configs) if configs else {}
    provenance.pop("osImageURL", None)
    return Overlay(spec, spec_hash(spec), provenance), problems


def merge_overlay(pool: RenderedConfig, overlay: MachineConfigSpec) -> MachineConfigSpec:
    """The pool's rendered spec with the overlay merged over it (MCO MergeMachineConfigs, the overlay last)."""
    base = MachineConfig(name=pool.name, labels={}, annotations={}, spec=pool.spec, has_config=True,
                         origin=Origin(pool.name))
    top = MachineConfig(name="overlay", labels={}, annotations={GENERATED_BY: CONTROLLER_VERSION}, spec=overlay,
                        has_config=True, origin=Origin("overlay"))
    return merge_machine_configs([base, top], default_os_image=pool.spec.os_image_url,
                                 default_extensions_image=pool.spec.base_os_extensions_container_image)


def machine_config(pool: RenderedConfig, entry: MachineEntry) -> RenderedConfig:
    """A machine's config on `pool` (its pool's rendered config, the current target or an older one served)."""
    provenance = dict(pool.provenance)
    for key, who in entry.provenance.items():
        before = pool.provenance.get(key)
        if before is None:
            provenance[key] = who
        elif key.startswith(_CONCATENATED):
            provenance[key] = f"{before}; also from {who}"
        else:
            provenance[key] = f"{who}; overrode {before}"
    annotations = {**pool.annotations, MACHINE_ANNOTATION: entry.name, POOL_CONFIG_ANNOTATION: pool.name,
                   OVERLAY_ANNOTATION: entry.overlay_hash, NODE_ANNOTATION: entry.node}
    return RenderedConfig(name=machine_config_name(pool.name, entry.overlay_hash), pool=pool.pool,
                          spec=merge_overlay(pool, MachineConfigSpec.from_dict(entry.overlay)), sources=(*pool.sources, f"machine/{entry.name}"),
                          annotations=annotations, provenance=provenance)


def _unique(machines: Sequence[Machine], out: MachineRenders, pool_of: PoolOf) -> list[tuple[Machine, str]]:
    """The documents with their pool, without a clash of name, of selector within one pool (a request chooses among
    its pool's documents only) or of hostname (the node's name, unique in the cluster); each clash an error naming
    both, and a document in no pool an error naming it."""
    kept: list[tuple[Machine, str]] = []
    names: dict[str, Machine] = {}
    selectors: dict[tuple[str, frozenset[tuple[str, str]]], Machine] = {}
    hosts: dict[str, Machine] = {}
    for machine in machines:
        clash = names.get(machine.name)
        if clash is not None:
            out.problems.append(_problem(machine, "duplicate", f"also defined in {clash.origin}", ("metadata", "name")))
            continue
        names[machine.name] = machine
        pool, why = pool_of(machine)
        if not pool:
            out.problems.append(_problem(machine, "machine-pool", why, ("spec", "labels")))
            continue
        key = (pool, frozenset(machine.selector.items()))
        clash = selectors.get(key)
        if clash is not None:
            out.problems.append(_problem(machine, "machine-tie", f"machine documents {clash.name} and "
                                         f"{machine.name} have the same selector: every machine matching one "
                                         "matches both", ("spec", "selector")))
            continue
        selectors[key] = machine
        host = machine.selector.get("hostname")
        clash = hosts.get(host) if host else None
        if clash is not None:
            out.problems.append(_problem(machine, "machine-tie", f"machine documents {clash.name} and "
                                         f"{machine.name} both select hostname {host}, the node's identity on "
                                         "day 2", ("spec", "selector", "hostname")))
            continue
        if host:
            hosts[host] = machine
        kept.append((machine, pool))
    return kept


def render_machines(cluster_dir: Path, cluster: Cluster, machines: Sequence[Machine], *,
                    targets: Mapping[str, RenderedConfig | None], previous: Mapping[str, Sequence[MachineEntry]],
                    pool_of: PoolOf, broken: frozenset[str] = frozenset()) -> MachineRenders:
    """Every machine's entry and config on its pool's target (`targets`: pool -> its target after this render;
    `previous`: pool -> the entries its record held; `broken`: names of documents that did not parse)."""
    out = MachineRenders()
    sizes = _Sizes()
    before = {e.name: e for entries in previous.values() for e in entries}
    placed: set[str] = set()
    for machine, pool in _unique(machines, out, pool_of):
        target = targets.get(pool)
        if target is None:
            continue  # the pool has no config yet: its own errors say why
        overlay, problems = render_overlay(cluster_dir, cluster, machine)
        out.problems.extend(problems)
        if overlay is None:
            kept = before.get(machine.name)
            if kept is not None:
                _place(out, pool, target, kept, placed, None)
            continue
        entry = MachineEntry(name=machine.name, selector=dict(machine.selector), rendered="",
                             overlay=overlay.spec.to_dict(),
                             overlay_hash=overlay.hash, source=str(machine.origin), labels=dict(machine.labels),
                             provenance=overlay.provenance)
        config = machine_config(target, entry)
        invalid = [_problem(machine, p.code, p.message.replace(f"pool {pool}", f"machine {machine.name}"), p.path)
                   for p in validate_result(config.spec, (), size=sizes.of(target, overlay, config), pool=pool)]
        out.problems.extend(invalid)
        kept = before.get(machine.name) if invalid else entry
        if kept is not None:
            _place(out, pool, target, kept, placed, config if kept is entry else None)
    for name in sorted(broken - placed):
        kept = before.get(name)
        pool = next((p for p, entries in previous.items() if kept is not None and kept in entries), "")
        target = targets.get(pool)
        if kept is not None and target is not None:
            _place(out, pool, target, kept, placed, None)
    return out


class _Sizes:
    """A machine config's size for the MCO's limit, without serialising every machine's whole config: the pool's
    config (measured once per render) plus the overlay and its annotations bound it from above, as an overlay
    entry adds itself or replaces one of the pool's; only a machine near the limit is measured exactly."""

    def __init__(self) -> None:
        self._pools: dict[str, int] = {}

    def of(self, pool: RenderedConfig, overlay: Overlay, config: RenderedConfig) -> int:
        base = self._pools.get(pool.name)
        if base is None:
            base = self._pools[pool.name] = machine_config_size(pool)
        bound = base + 2 * len(canonical_json(overlay.spec.to_dict())) + len(canonical_json(dict(config.annotations))) \
            + 512  # (twice the overlay: each entry it adds brings at most a separator as long as itself)
        return bound if bound <= MAX_MACHINE_CONFIG_SIZE else machine_config_size(config)


def _place(out: MachineRenders, pool: str, target: RenderedConfig, entry: MachineEntry, placed: set[str],
           config: RenderedConfig | None) -> None:
    """Record `entry` (the merge `config`, when already made) as the machine's on `target`."""
    config = config or machine_config(target, entry)
    out.entries.setdefault(pool, []).append(MachineEntry(
        name=entry.name, selector=entry.selector, rendered=config.name, overlay=entry.overlay,
        overlay_hash=entry.overlay_hash, source=entry.source, labels=entry.labels, provenance=entry.provenance))
    out.configs[entry.name] = config
    placed.add(entry.name)


def pool_of_machine(records: Sequence[PoolRecord]) -> PoolOf:
    """A machine's pool from its labels against the pools' node selectors as their records hold them after this
    render, as the MCO decides a node's pool (fleet/membership.py: GetPoolsForNode). A pool whose manifest did not
    parse keeps its previous selector there, so its machines stay in it, as its nodes do."""
    selectors = [(r.name, r.selector) for r in records]

    def pool_of(machine: Machine) -> tuple[str, str]:
        membership = pools_for_labels(machine.labels, selectors)
        return membership.pool, membership.reason(machine.name)
    return pool_of
