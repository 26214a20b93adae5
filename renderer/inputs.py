"""Reading a cluster directory into `Inputs`: the first stage of a render (render.py).

    cluster.yaml + manifests/ (+ *.bu) + templates/  ->  load -> model -> generated MachineConfigs

What it decides:
- Pools come from the manifests; `master` and `worker` exist by default (selector role=<name>, node
  selector `node-role.kubernetes.io/<name>: ""`) unless a manifest defines them.
- Every problem found is kept with its owner, the pools it could affect: a MachineConfig's labels (every
  pool whose selector picks them), a KubeletConfig's pool selector, a template's role, a pool manifest's
  pool; a MachineConfig without labels only pools selecting with NotIn / DoesNotExist. A file that cannot
  be read at all (syntax error, unreadable labels) could belong to any pool: EVERY_POOL. Problems of the
  cluster as a whole (a bad disruption policy, a KubeletConfig selecting no pool) are WHOLE_CLUSTER's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import yaml

from butane import transpile
from fleet.disruption_policy import DisruptionPolicy, PolicyError
from fleet.label_selector import NOTHING, LabelSelector, parse_selector, role_selector
from fleet.store import StoreError, check_name
from ignition.errors import IgnitionError
from renderer.cluster import Cluster, load_cluster
from renderer.errors import ClusterDirectoryMissing
from renderer.generated import Failure, base_kubelet_config, generate
from renderer.load import BUTANE_SUFFIXES, Document, load_file, manifest_files
from renderer.machines_model import MACHINE_API, Machine
from renderer.model import (
    ROLE_LABEL,
    ContainerRuntimeConfig,
    KubeletConfig,
    MachineConfig,
    MachineConfigPool,
    MachineConfiguration,
    Origin,
    parse_manifest,
)
from renderer.problems import Problem
from renderer.provenance import butane_origins
from renderer.registries_generated import generate_registries, template_files
from renderer.registries_model import ConfigMap, ImageConfig, MirrorSet, ProxyConfig, registries_manifest
from renderer.templates import render_role, ssh_machine_config, template_roles
from renderer.trust_bundles import generate_trust_bundles

MANIFESTS_DIR = "manifests"
FILES_DIR = "files"
DEFAULT_POOLS = ("master", "worker")
EVERY_POOL = "*"  # problem owner meaning "every pool"
WHOLE_CLUSTER = "cluster"  # problem owner: about the cluster as a whole, reported but degrading no pool


@dataclass
class Inputs:
    """Everything read from a cluster directory, before any pool is rendered."""

    cluster: Cluster
    pools: list[MachineConfigPool] = field(default_factory=list)
    machine_configs: list[MachineConfig] = field(default_factory=list)
    kubelet_configs: list[KubeletConfig] = field(default_factory=list)
    runtime_configs: list[ContainerRuntimeConfig] = field(default_factory=list)
    machine_configuration: MachineConfiguration | None = None
    mirror_sets: list[MirrorSet] = field(default_factory=list)
    # image-registry documents that did not parse: (kind, name, errors); they refuse the sync they feed
    broken_registries: list[tuple[str, str, tuple[Problem, ...]]] = field(default_factory=list)
    image_configs: list[ImageConfig] = field(default_factory=list)
    proxy_configs: list[ProxyConfig] = field(default_factory=list)
    config_maps: list[ConfigMap] = field(default_factory=list)
    # (owner, problem): owner is a label set (dict) for MachineConfig-like objects, a pool name, or EVERY_POOL.
    problems: list[tuple[Any, Problem]] = field(default_factory=list)
    # per pool: the KubeletConfigs/ContainerRuntimeConfigs refused there (reported, not degrading the pool)
    failures: dict[str, tuple[Failure, ...]] = field(default_factory=dict)
    machines: list[Machine] = field(default_factory=list)  # machine documents (renderer/machine_render.py)
    broken_machines: set[str] = field(default_factory=set)  # names of machine documents that did not parse


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
    if registries_manifest(data):
        return WHOLE_CLUSTER  # refused as a Failure of the sync it feeds (renderer/registries_generated.py)
    if kind in ("KubeletConfig", "ContainerRuntimeConfig"):
        spec: Mapping[str, Any] = data["spec"] if isinstance(data.get("spec"), Mapping) else {}
        sel, problems = parse_selector(spec.get("machineConfigPoolSelector"), ())
        if sel is not None and not problems:
            return ("pool-selector", sel)
    return EVERY_POOL


def _usable_name(name: str) -> bool:
    try:
        check_name("pools", name)
    except StoreError:
        return False
    return True


_FCOS_NAME = re.compile(r"^\d+-([a-z0-9]+)-")


def _butane(path: Path, rel: str, cluster_dir: Path, inputs: Inputs) -> None:
    """A `.bu` document: openshift variant -> its MachineConfig; fcos -> MachineConfig named after the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        inputs.problems.append((EVERY_POOL, Problem("io", f"cannot read: {exc}", rel)))
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
            inputs.problems.append((EVERY_POOL, Problem(
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
    except (yaml.YAMLError, KeyError, TypeError):  # unreadable, or no labels: it belongs to every pool
        pass
    m = _FCOS_NAME.match(path.stem)
    return {ROLE_LABEL: m.group(1)} if m else EVERY_POOL


def _add_document(doc: Document, inputs: Inputs) -> None:
    obj, problems = parse_manifest(doc)
    owner: Any
    if obj is None:
        raw: Mapping[str, Any] = doc.data if isinstance(doc.data, Mapping) else {}
        if raw.get("kind") == "Machine" and raw.get("apiVersion") == MACHINE_API:  # kept as it was (machine_render)
            about = raw.get("metadata")
            machine = about.get("name") if isinstance(about, Mapping) else None
            if isinstance(machine, str):
                inputs.broken_machines.add(machine)
            inputs.problems.extend((WHOLE_CLUSTER, p) for p in problems)
            return
        owner = _owner_of_broken(doc)
        if owner == WHOLE_CLUSTER and any(p.severity == "error" for p in problems):
            data: Mapping[str, Any] = doc.data if isinstance(doc.data, Mapping) else {}
            raw_meta = data.get("metadata")
            meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
            name = meta["name"] if isinstance(meta.get("name"), str) else ""
            inputs.broken_registries.append((str(data.get("kind")), name,
                                             tuple(p for p in problems if p.severity == "error")))
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
    elif isinstance(obj, MirrorSet | ImageConfig | ProxyConfig | ConfigMap):
        owner = WHOLE_CLUSTER  # refusals become Failures of the pools (renderer/registries_generated.py)
        {MirrorSet: inputs.mirror_sets, ImageConfig: inputs.image_configs, ProxyConfig: inputs.proxy_configs,
         ConfigMap: inputs.config_maps}[type(obj)].append(obj)  # type: ignore[attr-defined]
    elif isinstance(obj, Machine):
        owner = WHOLE_CLUSTER  # a machine document's problems degrade no pool (machine_render.py)
        inputs.machines.append(obj)
    else:
        owner = WHOLE_CLUSTER
        if inputs.machine_configuration is not None:
            inputs.problems.append((WHOLE_CLUSTER, Problem("duplicate", "a second MachineConfiguration 'cluster'",
                                                      doc.source)))
        inputs.machine_configuration = obj
        try:
            DisruptionPolicy.from_dict(obj.spec)
        except PolicyError as exc:
            inner = tuple(int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", exc.path.lstrip("$")))
            inputs.problems.append((WHOLE_CLUSTER, doc.problem("disruption-policy", inner, exc.message)))
    inputs.problems.extend((owner, p) for p in problems)


def _default_pool(name: str) -> MachineConfigPool:
    return MachineConfigPool(
        name=name, labels={f"pools.operator.machineconfiguration.openshift.io/{name}": ""},
        mc_selector=LabelSelector(match_labels={ROLE_LABEL: name}),
        node_selector=role_selector(name), paused=False, max_unavailable=1,
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
        inputs.problems.extend((EVERY_POOL, p) for p in problems)
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
                name=owner[1], labels={}, mc_selector=None, node_selector=NOTHING, paused=False, max_unavailable=1,
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

    def base_files(pool: str) -> Mapping[str, bytes]:
        return template_files(render_role(cluster_dir, cluster, pool).machine_configs) if pool in roles else {}

    generated = generate(inputs.kubelet_configs, inputs.runtime_configs, inputs.pools, base_kubelet=base_kubelet)
    image = _cluster_config(inputs, inputs.image_configs, "Image")
    trust_kinds = ("ConfigMap", "Proxy")  # what the trust bundles read; the rest feeds registries.conf
    broken_trust = [b for b in inputs.broken_registries if b[0] in trust_kinds]
    registries = generate_registries(image, inputs.mirror_sets, inputs.pools, release_image=_release_image(cluster),
                                     base_files=base_files,
                                     broken=[b for b in inputs.broken_registries if b[0] not in trust_kinds])
    trusted = generate_trust_bundles(inputs.config_maps, image, inputs.pools, broken=broken_trust,
                                     proxy=_cluster_config(inputs, inputs.proxy_configs, "Proxy"))
    for part in (generated, registries, trusted):
        for pool_name, found in part.problems.items():
            inputs.problems.extend(((("pool", pool_name) if pool_name else WHOLE_CLUSTER), p) for p in found)
        for configs in part.configs.values():
            inputs.machine_configs.extend(configs)
        for pool_name, failures in part.failures.items():
            inputs.failures[pool_name] = inputs.failures.get(pool_name, ()) + tuple(failures)
            for failure in failures:  # listed once each, as errors of the cluster directory
                inputs.problems.extend((WHOLE_CLUSTER, p) for p in failure.problems
                                       if (WHOLE_CLUSTER, p) not in inputs.problems)
    return inputs


C = TypeVar("C", ImageConfig, ProxyConfig)


def _cluster_config(inputs: Inputs, configs: list[C], kind: str) -> C | None:
    """The cluster config of `kind` named `cluster` (a second one is an error)."""
    found = [i for i in configs if i.name == "cluster"]
    for extra in found[1:]:
        inputs.problems.append((WHOLE_CLUSTER, Problem("duplicate", f"a second {kind} 'cluster' (the first is in "
                                                       f"{found[0].origin})", extra.origin.source, ("metadata", "name"),
                                                       extra.origin.line)))
    return found[0] if found else None


def _release_image(cluster: Cluster) -> str | None:
    value = cluster.values.get("releaseImage")
    return value if isinstance(value, str) and value else None
