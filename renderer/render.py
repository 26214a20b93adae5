"""Rendering a cluster directory into the store: the orchestration of the whole flow.

    cluster.yaml + manifests/ (+ *.bu) + templates/  ->  load -> model -> generated MachineConfigs
    -> per pool: select -> order -> validate inputs -> merge -> name -> validate result -> store

What it decides:
- Pools come from the manifests; `master` and `worker` exist by default (selector role=<name>, node
  selector `node-role.kubernetes.io/<name>: ""`) unless a manifest defines them.
- A problem is charged to the pools it could affect: a MachineConfig's to every pool whose selector
  picks its labels, a KubeletConfig's to the pools it selects, a template's to the pools selecting that
  role, a pool manifest's to that pool (an unlabelled MachineConfig's only to pools selecting with NotIn /
  DoesNotExist). A file that cannot be read at all (syntax error, unreadable labels) could belong to any
  pool, so it degrades every pool (and is listed in `RenderResult.errors`). Problems of the cluster as a
  whole (a bad disruption policy, a KubeletConfig selecting no pool) are listed there but degrade no pool.
- A pool with errors keeps its previous target and gets `RenderDegraded=True` with the MCO's message
  `Failed to render configuration for pool <pool>: <errors>`; the other pools still render.
- Everything is computed first, then written: new rendered configs (immutable, content-addressed),
  then pool records, each atomically. Nothing is half-written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import yaml

from fleet.disruption import DisruptionPolicy, PolicyError
from fleet.rendered import Condition, HistoryEntry, PoolRecord, RenderedConfig
from fleet.store import NotFound, Store, StoreError, check_name
from renderer.cluster import Cluster, load_cluster
from renderer.errors import ClusterDirectoryMissing, StoreWriteFailed
from renderer.generated import base_kubelet_config, generate
from renderer.load import BUTANE_SUFFIXES, Document, load_file, manifest_files
from renderer.merge_machineconfigs import MachineConfigMergeError, merge_machine_configs
from renderer.model import (
    GENERATED_BY,
    ROLE_LABEL,
    ContainerRuntimeConfig,
    KubeletConfig,
    MachineConfig,
    MachineConfigPool,
    MachineConfiguration,
    Origin,
    parse_manifest,
)
from renderer.naming import rendered_name, spec_bytes
from renderer.order import merge_order
from renderer.problems import Problem
from renderer.provenance import butane_origins, compute_provenance
from renderer.select import LabelSelector, parse_selector
from renderer.templates import CONTROLLER_VERSION, render_role, ssh_machine_config, template_roles
from renderer.validate_mc import Verdict, check_machine_config, reconcile_problems, validate_result

MANIFESTS_DIR = "manifests"
FILES_DIR = "files"
DEFAULT_POOLS = ("master", "worker")
RENDER_DEGRADED = "RenderDegraded"
OS_IMAGE_OVERRIDDEN = "machineconfiguration.openshift.io/os-image-url-overridden"
RELEASE_VERSION = "machineconfiguration.openshift.io/release-image-version"
_ALL = "*"  # problem owner meaning "every pool"
_CLUSTER = "cluster"  # problem owner: about the cluster as a whole, reported but degrading no pool


@dataclass(frozen=True)
class PoolRender:
    """One pool's outcome."""

    pool: str
    rendered: RenderedConfig | None   # the pool's current target after this render (old one kept on error)
    errors: tuple[str, ...]           # "manifests/50-x.yaml:12:9 $.spec.config...: path not absolute"
    changed: bool                     # target moved to a new rendered config
    warnings: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()     # MachineConfigs merged (merge order), even when the render failed


@dataclass(frozen=True)
class RenderResult:
    """Every pool's outcome, plus errors not tied to one pool."""

    pools: Mapping[str, PoolRender]
    errors: tuple[str, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No errors anywhere."""
        return not self.errors and all(not p.errors for p in self.pools.values())


@dataclass
class Inputs:
    """Everything read from a cluster directory, before any pool is rendered."""

    cluster: Cluster
    pools: list[MachineConfigPool] = field(default_factory=list)
    machine_configs: list[MachineConfig] = field(default_factory=list)
    kubelet_configs: list[KubeletConfig] = field(default_factory=list)
    runtime_configs: list[ContainerRuntimeConfig] = field(default_factory=list)
    machine_configuration: MachineConfiguration | None = None
    # (owner, problem): owner is a label set (dict) for MachineConfig-like objects, a pool name, or _ALL.
    problems: list[tuple[Any, Problem]] = field(default_factory=list)


# --- loading --------------------------------------------------------------------------------------------------

def _raw_labels(doc: Document) -> dict[str, str] | None:
    data = doc.data
    if not isinstance(data, Mapping):
        return None
    meta = data.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if isinstance(labels, Mapping) and all(isinstance(v, str) for v in labels.values()):
        return {str(k): v for k, v in labels.items()}
    return None


def _owner_of_broken(doc: Document) -> Any:
    """Who a problem in a document that did not parse belongs to (see the module docstring)."""
    data: Mapping[str, Any] = doc.data if isinstance(doc.data, Mapping) else {}
    kind = data.get("kind")
    meta: Mapping[str, Any] = data["metadata"] if isinstance(data.get("metadata"), Mapping) else {}
    if kind == "MachineConfigPool" and isinstance(meta.get("name"), str) and _usable_name(meta["name"]):
        return ("pool", meta["name"])  # (a pool the store cannot name could be any pool: every pool)
    if kind == "MachineConfig":
        labels = _raw_labels(doc)
        if labels is not None:
            return labels
        if isinstance(data.get("metadata"), Mapping) and data["metadata"].get("labels") is None:
            return {}  # no labels: only pools selecting with NotIn / DoesNotExist can pick it
    if kind in ("KubeletConfig", "ContainerRuntimeConfig"):
        spec: Mapping[str, Any] = data["spec"] if isinstance(data.get("spec"), Mapping) else {}
        sel, problems = parse_selector(spec.get("machineConfigPoolSelector"), ())
        if sel is not None and not problems:
            return ("pool-selector", sel)
    return _ALL


def _usable_name(name: str) -> bool:
    try:
        check_name("pools", name)
    except StoreError:
        return False
    return True


_FCOS_NAME = re.compile(r"^\d+-([a-z0-9]+)-")


def _butane(path: Path, rel: str, cluster_dir: Path, inputs: Inputs) -> None:
    """A `.bu` document: openshift variant -> its MachineConfig; fcos -> MachineConfig named after the file."""
    from ignition.errors import IgnitionError

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        inputs.problems.append((_ALL, Problem("io", f"cannot read: {exc}", rel)))
        return
    try:
        from ignition.butane import transpile
    except ImportError as exc:  # the Butane transpiler is an optional part of ignition/
        inputs.problems.append((_butane_owner(text, path), Problem("butane", f"Butane is not available: {exc}", rel)))
        return
    files_dir = cluster_dir / FILES_DIR if (cluster_dir / FILES_DIR).is_dir() else path.parent
    try:
        result = transpile(text, files_dir=files_dir, source=rel)
    except IgnitionError as exc:
        report = getattr(exc, "report", None)
        entries = list(report.errors) if report is not None else []
        owner = _butane_owner(text, path)
        if not entries:
            inputs.problems.append((owner, Problem("butane", f"Butane: {exc}", rel)))
        for e in entries:
            inputs.problems.append((owner, Problem(e.code, f"Butane: {e.message}", rel, tuple(e.path), e.line, e.col)))
        return
    for e in result.report.warnings:
        inputs.problems.append((_butane_owner(text, path), Problem(e.code, f"Butane: {e.message}", rel, tuple(e.path), e.line, e.col,
                                              severity="warning")))
    output = result.output
    if isinstance(output, Mapping) and output.get("kind") == "MachineConfig":
        doc = Document(source=rel, index=0, data=output)
    else:
        name = path.stem
        m = _FCOS_NAME.match(name)
        if not m:
            inputs.problems.append((_ALL, Problem(
                "butane-name", "an fcos Butane document in manifests/ must be named <NN>-<role>-<name>.bu "
                "(its role comes from the name); or use variant openshift with metadata", rel)))
            return
        doc = Document(source=rel, index=0, data={
            "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
            "metadata": {"name": name, "labels": {ROLE_LABEL: m.group(1)}}, "spec": {"config": result.ignition}})
    before = len(inputs.machine_configs)
    _add_document(doc, inputs)
    if len(inputs.machine_configs) > before:  # provenance lines inside the .bu file
        mc = inputs.machine_configs[-1]
        inputs.machine_configs[-1] = replace(mc, entry_origins=butane_origins(mc, text, rel))


def _butane_owner(text: str, path: Path) -> Any:
    try:
        data = yaml.safe_load(text)
        labels = data["metadata"]["labels"]
        if isinstance(labels, Mapping) and labels:
            return {str(k): str(v) for k, v in labels.items()}
    except Exception:  # an unreadable document belongs to every pool
        pass
    m = _FCOS_NAME.match(path.stem)
    return {ROLE_LABEL: m.group(1)} if m else _ALL


def _add_document(doc: Document, inputs: Inputs) -> None:
    obj, problems = parse_manifest(doc)
    owner: Any
    if obj is None:
        owner = _owner_of_broken(doc)
        inputs.problems.extend((owner, p) for p in problems)
        return
    if isinstance(obj, MachineConfig):
        owner = dict(obj.labels)
        inputs.machine_configs.append(obj)
    elif isinstance(obj, MachineConfigPool):
        owner = ("pool", obj.name)
        inputs.pools.append(obj)
    elif isinstance(obj, KubeletConfig):
        owner = ("pool-selector", obj.pool_selector)
        inputs.kubelet_configs.append(obj)
    elif isinstance(obj, ContainerRuntimeConfig):
        owner = ("pool-selector", obj.pool_selector)
        inputs.runtime_configs.append(obj)
    else:
        owner = _CLUSTER
        if inputs.machine_configuration is not None:
            inputs.problems.append((_CLUSTER, Problem("duplicate", "a second MachineConfiguration 'cluster'",
                                                      doc.source)))
        inputs.machine_configuration = obj
        try:
            DisruptionPolicy.from_dict(obj.spec)
        except PolicyError as exc:
            inner = tuple(int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", exc.path.lstrip("$")))
            inputs.problems.append((_CLUSTER, doc.problem("disruption-policy", inner, exc.message)))
    inputs.problems.extend((owner, p) for p in problems)


def _default_pool(name: str) -> MachineConfigPool:
    return MachineConfigPool(
        name=name, labels={f"pools.operator.machineconfiguration.openshift.io/{name}": ""},
        mc_selector=LabelSelector(match_labels={ROLE_LABEL: name}),
        node_selector={f"node-role.kubernetes.io/{name}": ""}, paused=False, max_unavailable=1,
        origin=Origin("(built-in pool)"))


def load_inputs(cluster_dir: Path) -> Inputs:
    """Read cluster.yaml, manifests/ and templates/; raises ClusterUnusable only if cluster.yaml is unusable."""
    if not cluster_dir.is_dir():
        raise ClusterDirectoryMissing(str(cluster_dir), "not a directory")
    cluster = load_cluster(cluster_dir)
    inputs = Inputs(cluster=cluster)
    for path, inner in manifest_files(cluster_dir / MANIFESTS_DIR):
        rel = f"{MANIFESTS_DIR}/{inner}"
        if inner.endswith(BUTANE_SUFFIXES):
            _butane(Path(path), rel, cluster_dir, inputs)
            continue
        docs, problems = load_file(path, rel)
        inputs.problems.extend((_ALL, p) for p in problems)
        for doc in docs:
            _add_document(doc, inputs)
    names = {p.name for p in inputs.pools}
    seen: dict[str, MachineConfigPool] = {}
    for pool in inputs.pools:
        if pool.name in seen:
            inputs.problems.append((("pool", pool.name), Problem(
                "duplicate", f"MachineConfigPool {pool.name} is also defined in {seen[pool.name].origin}",
                pool.origin.source, ("metadata", "name"), pool.origin.line)))
        seen[pool.name] = pool
    inputs.pools = list(seen.values()) + [_default_pool(n) for n in DEFAULT_POOLS if n not in names]
    for owner, problem in list(inputs.problems):
        if isinstance(owner, tuple) and owner[0] == "pool" and owner[1] not in {p.name for p in inputs.pools}:
            inputs.pools.append(MachineConfigPool(
                name=owner[1], labels={}, mc_selector=None, node_selector={}, paused=False, max_unavailable=1,
                origin=Origin(problem.source, problem.line), broken=True))
    inputs.pools.sort(key=lambda p: p.name)
    roles = template_roles(cluster_dir)
    for role in roles:
        templated = render_role(cluster_dir, cluster, role)
        inputs.problems.extend(({ROLE_LABEL: role}, p) for p in templated.problems)
        inputs.machine_configs.extend(templated.machine_configs)
    for role in sorted(set(roles) | set(DEFAULT_POOLS)):
        ssh = ssh_machine_config(cluster, role)
        if ssh is not None:
            inputs.machine_configs.append(ssh)
    by_name: dict[str, MachineConfig] = {}
    unique: list[MachineConfig] = []
    for mc in inputs.machine_configs:
        other = by_name.get(mc.name)
        if other is not None:
            inputs.problems.append((dict(mc.labels), Problem(
                "duplicate", f"MachineConfig {mc.name} is also defined in {other.origin}", mc.origin.source,
                ("metadata", "name"), mc.origin.line)))
            inputs.problems.append((dict(other.labels), Problem(
                "duplicate", f"MachineConfig {mc.name} is also defined in {mc.origin}", other.origin.source,
                ("metadata", "name"), other.origin.line)))
            continue
        by_name[mc.name] = mc
        unique.append(mc)
    inputs.machine_configs = unique

    def base_kubelet(pool: str) -> Mapping[str, Any]:
        roles = template_roles(cluster_dir)
        source = pool if pool in roles else "worker"
        return base_kubelet_config(render_role(cluster_dir, cluster, pool, template_role=source).machine_configs)

    generated = generate(inputs.kubelet_configs, inputs.runtime_configs, inputs.pools, base_kubelet=base_kubelet)
    for pool_name, found in generated.problems.items():
        inputs.problems.extend(((("pool", pool_name) if pool_name else _CLUSTER), p) for p in found)
    for configs in generated.configs.values():
        inputs.machine_configs.extend(configs)
    return inputs


# --- rendering one pool ---------------------------------------------------------------------------------------

def _owned_by(owner: Any, pool: MachineConfigPool) -> bool:
    if owner == _ALL:
        return True
    if owner == _CLUSTER:
        return False
    if isinstance(owner, dict):
        return pool.mc_selector is not None and pool.mc_selector.matches(owner)
    if isinstance(owner, tuple) and owner[0] == "pool":
        return bool(owner[1] == pool.name)
    if isinstance(owner, tuple) and owner[0] == "pool-selector":
        return owner[1] is not None and owner[1].matches(pool.labels)
    return True


@dataclass(frozen=True)
class _Outcome:
    pool: MachineConfigPool
    rendered: RenderedConfig | None
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]
    sources: tuple[str, ...]


def _rfc3339(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def render_pool(pool: MachineConfigPool, inputs: Inputs, *, validated: dict[int, Verdict],
                current: RenderedConfig | None = None, overrides: Sequence[str] = ()) -> _Outcome:
    """Select, order, validate, merge and name one pool's rendered config (no store writes)."""
    own = [p for owner, p in inputs.problems if _owned_by(owner, pool)]
    errors = [p for p in own if p.severity == "error"]
    warnings = [p for p in own if p.severity == "warning"]
    selector = pool.mc_selector
    if pool.broken:
        return _Outcome(pool, None, tuple(errors), tuple(warnings), ())
    if selector is None:
        errors.append(Problem("selector-nil", f"pool {pool.name} has no machineConfigSelector: it selects no "
                              "MachineConfigs", pool.origin.source, ("spec", "machineConfigSelector"),
                              pool.origin.line))
        return _Outcome(pool, None, tuple(errors), tuple(warnings), ())
    if selector.is_empty:
        errors.append(Problem("selector-all", f"pool {pool.name} has an empty machineConfigSelector, which would "
                              "select every MachineConfig; refusing to render (SelectingAll)", pool.origin.source,
                              ("spec", "machineConfigSelector"), pool.origin.line))
        return _Outcome(pool, None, tuple(errors), tuple(warnings), ())
    selected = merge_order(mc for mc in inputs.machine_configs if selector.matches(mc.labels))
    sources = tuple(mc.name for mc in selected)
    for mc in selected:
        if not mc.labels:  # only NotIn / DoesNotExist selectors pick these; the MCO refuses to merge them
            errors.append(Problem("no-labels", f"cannot find label in MachineConfig {mc.name}", mc.origin.source,
                                  ("metadata", "labels"), mc.origin.line))
    if not selected:
        errors.append(Problem("selector-none", f"no MachineConfigs found matching selector {selector.describe()}",
                              pool.origin.source, ("spec", "machineConfigSelector"), pool.origin.line))
        return _Outcome(pool, None, tuple(errors), tuple(warnings), sources)
    allowed = inputs.cluster.extensions_allow_list
    for mc in selected:
        verdict = validated.get(id(mc))  # (every MachineConfig lives in `inputs` for the whole render)
        if verdict is None:
            verdict = validated[id(mc)] = check_machine_config(mc, allowed_extensions=allowed)
        for p in verdict.problems:
            (errors if p.severity == "error" else warnings).append(p)
    if errors:
        return _Outcome(pool, None, tuple(errors), tuple(warnings), sources)
    try:
        spec = merge_machine_configs(selected, default_os_image=inputs.cluster.os_image_url,
                                     default_extensions_image=inputs.cluster.extensions_image)
    except MachineConfigMergeError as exc:
        mc = next(m for m in selected if m.name == exc.name)
        errors.append(Problem("translate", exc.message, mc.origin.source, ("spec", "config"), mc.origin.line))
        return _Outcome(pool, None, tuple(errors), tuple(warnings), sources)
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
    return _Outcome(pool, None if errors else rendered, tuple(errors), tuple(warnings), sources)


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
    try:
        return len(orjson.dumps(data))  # the same bytes as json.dumps(separators=(",", ":"), ensure_ascii=False)
    except (TypeError, orjson.JSONEncodeError):
        return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())


def _overrides(inputs: Inputs) -> tuple[str, ...]:
    mc = inputs.machine_configuration
    if mc is None:
        return ()
    block = mc.spec.get("irreconcilableValidationOverrides")
    storage = block.get("storage") if isinstance(block, Mapping) else None
    return tuple(str(s) for s in storage) if isinstance(storage, list) else ()


def _message(pool: str, errors: Sequence[Problem]) -> str:
    return f"Failed to render configuration for pool {pool}: " + "; ".join(p.format() for p in errors)


def _record(previous: PoolRecord | None, outcome: _Outcome, now: str) -> tuple[PoolRecord, bool]:
    """The pool's new record; the bool says whether the target moved."""
    pool = outcome.pool
    old_current = previous.current if previous else None
    old_history = previous.history if previous else ()
    conditions = {c.type: c for c in (previous.conditions if previous else ())}
    current: str | None
    if outcome.rendered is not None:
        current, sources = outcome.rendered.name, outcome.sources
        degraded = Condition(RENDER_DEGRADED, "False")
    else:
        current, sources = old_current, (previous.sources if previous else ())
        degraded = Condition(RENDER_DEGRADED, "True", reason="",  # the MCO leaves the reason empty
                             message=_message(pool.name, outcome.errors))
    old = conditions.get(RENDER_DEGRADED)
    since = old.last_transition_time if old is not None and old.status == degraded.status else now
    conditions[RENDER_DEGRADED] = Condition(degraded.type, degraded.status, degraded.reason, degraded.message, since)
    changed = current is not None and current != old_current
    history = old_history + ((HistoryEntry(current, now),) if changed and current else ())
    if pool.broken and previous is not None:  # keep what we knew of the pool's rollout settings
        max_unavailable, node_selector, paused = previous.max_unavailable, previous.node_selector, previous.paused
    else:
        max_unavailable, node_selector, paused = pool.max_unavailable, pool.node_selector, pool.paused
    return PoolRecord(name=pool.name, current=current, sources=sources,
                      conditions=tuple(conditions[k] for k in sorted(conditions)), history=history,
                      max_unavailable=max_unavailable, node_selector=dict(node_selector), paused=paused), changed


def render_cluster(cluster_dir: Path, *, store: Store,
                   clock: Callable[[], datetime] | None = None) -> RenderResult:
    """Render every pool of `cluster_dir` into `store` (see the module docstring for the rules)."""
    clock = clock or (lambda: datetime.now(UTC))
    inputs = load_inputs(Path(cluster_dir))
    now = _rfc3339(clock)
    validated: dict[int, Verdict] = {}  # id(MachineConfig) -> its verdict: each is validated once
    overrides = _overrides(inputs)
    outcomes: list[tuple[_Outcome, PoolRecord | None, RenderedConfig | None]] = []
    try:
        for pool in inputs.pools:
            previous: PoolRecord | None
            try:
                previous = store.get_pool(pool.name)
            except NotFound:
                previous = None
            current = None
            if previous is not None and previous.current:
                try:
                    current = store.get_rendered(previous.current)
                except NotFound:
                    current = None
            outcome = render_pool(pool, inputs, validated=validated, current=current, overrides=overrides)
            outcomes.append((outcome, previous, current))
        records: list[tuple[PoolRecord, bool]] = []
        for outcome, previous, _ in outcomes:
            if outcome.rendered is not None:
                store.put_rendered(outcome.rendered)
            records.append(_record(previous, outcome, now))
        for record, _ in records:
            store.put_pool(record)
    except StoreError as exc:
        raise StoreWriteFailed(exc.path, f"store: {exc}") from exc
    pools: dict[str, PoolRender] = {}
    for (outcome, _previous, current), (_rec, changed) in zip(outcomes, records, strict=True):
        target = outcome.rendered if outcome.rendered is not None else current
        pools[outcome.pool.name] = PoolRender(
            pool=outcome.pool.name, rendered=target, errors=tuple(p.format() for p in outcome.errors),
            changed=changed, warnings=tuple(p.format() for p in outcome.warnings), sources=outcome.sources)
    unowned = tuple(dict.fromkeys(p.format() for owner, p in inputs.problems
                                  if owner in (_ALL, _CLUSTER) and p.severity == "error"))
    unowned_warnings = tuple(dict.fromkeys(p.format() for owner, p in inputs.problems
                                           if owner in (_ALL, _CLUSTER) and p.severity == "warning"))
    return RenderResult(pools=pools, errors=unowned, warnings=unowned_warnings)
