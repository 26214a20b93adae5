"""ImageDigestMirrorSets, ImageTagMirrorSets, ImageContentSourcePolicies and the `Image` config `cluster` ->
`99-<pool>-generated-registries` (MCO `pkg/controller/container-runtime-config/container_runtime_config_controller.go`
`syncImageConfig` and `registriesConfigIgnition`, `helpers.go`).

For every built-in pool (`master`, `worker`, and pools labelled `machineconfiguration.openshift.io/mco-built-in`;
custom pools take the worker's through their selector, as in the MCO) the MachineConfig holds, over the pool's
role templates (renderer/registries_toml.py, renderer/image_policy.py; the MCO's template text when the role's
templates write none):
- /etc/containers/registries.conf when insecure registries are given (even an empty list), a registry is
  blocked, or any mirror set exists (renderer/mirror_sets.py);
- /etc/containers/policy.json when registries are allowed or blocked;
- /etc/containers/registries.conf.d/01-image-searchRegistries.conf when `containerRuntimeSearchRegistries`
  is given.
Files are generated files (renderer/generated.py `file_entry`).

The release payload's repository (`releaseImage` in cluster.yaml, the ClusterVersion's desired image) is never
blocked unless a mirror that is not blocked serves it (`getValidBlockedAndAllowedRegistries`): then it is
blocked in registries.conf only and allowed in policy.json; otherwise the scope is left out, with the MCO's
warning. Without `releaseImage` no scope is protected.

What the MCO refuses (`validateRegistriesConfScopes`, `updatePolicyJSON`), in its words: a scope that is not a
registries.conf scope, a source or mirror outside the API's pattern (so no wildcard mirror), one source given
different `mirrorSourcePolicy` values across the sets, `NeverContactSource` for a source that is also one of its
mirrors, allowed and blocked registries both set. The MCO then updates no registries MachineConfig at all; here
each refused document is a `Failure` (pool condition `ImageConfigFailure`) for every built-in pool, and every
pool keeps the registries MachineConfig of its last successful sync (renderer/last_sync.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fleet.diff import ContentsError, file_contents
from fleet.registries_conf import REGISTRIES_CONF
from renderer.generated import Failure, Generated, file_entry, generated_machine_config
from renderer.image_policy import DEFAULT_POLICY, PolicyError, update_policy
from renderer.mirror_sets import MirrorSetError, edit, pull_sources
from renderer.model import MachineConfig, MachineConfigPool, Origin
from renderer.problems import Path, Problem
from renderer.registries_model import (
    ALLOW_CONTACTING_SOURCE,
    ICSP,
    IDMS,
    ITMS,
    NEVER_CONTACT_SOURCE,
    ImageConfig,
    MirrorSet,
)
from renderer.registries_toml import (
    RegistriesConf,
    RegistriesConfError,
    read_registries_conf,
    search_dropin,
    write_registries_conf,
)
from renderer.registry_scopes import nested, repository, valid_conf_scope, valid_mirror, valid_source

POLICY_JSON = "/etc/containers/policy.json"
SEARCH_DROPIN = "/etc/containers/registries.conf.d/01-image-searchRegistries.conf"
BUILT_IN_LABEL = "machineconfiguration.openshift.io/mco-built-in"
BUILT_IN_POOLS = ("master", "worker")
CONDITION = "ImageConfigFailure"
# registries.conf of the MCO's templates (templates/*/01-*-container-runtime/_base/files/container-registries.yaml)
DEFAULT_REGISTRIES = b"unqualified-search-registries = ['registry.access.redhat.com', 'docker.io']\n"
Owner = ImageConfig | MirrorSet | None   # None: cluster.yaml


@dataclass
class _Check:
    refusals: list[tuple[Owner, Problem]] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def refuse(self, owner: Owner, path: Path, message: str, code: str) -> None:
        self.refusals.append((owner, _problem(owner, path, message, code)))


def _problem(owner: Owner, path: Path, message: str, code: str, severity: str = "error") -> Problem:
    """A problem at `path` in `owner`'s document (cluster.yaml for None), with line:col when known."""
    if owner is None:
        return Problem(code, message, "cluster.yaml", path, severity=severity)
    if owner.doc is not None:
        return owner.doc.problem(code, path, message, severity=severity)
    return Problem(code, message, owner.origin.source, path, owner.origin.line, severity=severity)


def template_files(template_configs: Sequence[MachineConfig]) -> dict[str, bytes]:
    """registries.conf and policy.json as a role's templates write them (the last one wins, as merged)."""
    out: dict[str, bytes] = {}
    for mc in template_configs:
        for entry in (mc.spec.config.get("storage") or {}).get("files") or ():
            if entry.get("path") in (REGISTRIES_CONF, POLICY_JSON):
                try:
                    out[entry["path"]] = file_contents(entry)
                except ContentsError:  # a broken template shows up when the template MC itself is validated
                    continue
    return out


def is_built_in(pool: MachineConfigPool) -> bool:
    """A pool the MCO writes a registries MachineConfig for: `master`, `worker`, and the pools its selector
    `machineconfiguration.openshift.io/mco-built-in=""` lists (the empty value only)."""
    return pool.name in BUILT_IN_POOLS or pool.labels.get(BUILT_IN_LABEL) == ""


def _q(text: str) -> str:
    """Go's %q of an ASCII string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _check_sets(sets: Sequence[MirrorSet], check: _Check) -> None:
    """`validateRegistriesConfScopes`' mirror checks: IDMS, then ICSP, then ITMS, each by name."""
    seen: dict[str, str] = {}
    order = {IDMS: 0, ICSP: 1, ITMS: 2}
    for mirror_set in sorted(sets, key=lambda s: (order[s.kind], s.name)):
        for rule in mirror_set.rules:
            where = rule.path
            if not valid_source(rule.source):
                check.refuse(mirror_set, (*where, "source"), f"invalid format for source {_q(rule.source)}",
                             "registries-source")
                continue
            policy = rule.policy or ALLOW_CONTACTING_SOURCE
            if seen.setdefault(rule.source, policy) != policy:
                check.refuse(mirror_set, (*where, "mirrorSourcePolicy" if rule.policy else "source"),
                             f"conflicting mirrorSourcePolicy is set for the same source {_q(rule.source)} in "
                             "imagedigestmirrorsets, imagetagmirrorsets, or imagecontentsourcepolicies",
                             "registries-conflict")
            for j, mirror in enumerate(rule.mirrors):
                if not valid_mirror(mirror):
                    check.refuse(mirror_set, (*where, "mirrors", j), f"invalid format for mirror {_q(mirror)}",
                                 "registries-mirror")
                elif policy == NEVER_CONTACT_SOURCE and mirror == rule.source:
                    check.refuse(mirror_set, (*where, "mirrorSourcePolicy"), "cannot set mirrorSourcePolicy: "
                                 f"NeverContactSource if the source {_q(rule.source)} is one of the mirrors",
                                 "registries-never-contact")


def _check_scopes(image: ImageConfig | None, scopes: Sequence[str], which: str, key: str, check: _Check) -> None:
    for i, scope in enumerate(scopes):
        if not valid_conf_scope(scope):
            check.refuse(image, ("spec", "registrySources", key, i), f"invalid entry for {which} registries "
                         f"{_q(scope)}", "registries-scope")


@dataclass(frozen=True)
class Plan:
    """What the image config asks of registries.conf and policy.json, once checked."""

    insecure: tuple[str, ...] | None
    registries_blocked: tuple[str, ...]
    policy_blocked: tuple[str, ...]
    allowed: tuple[str, ...]
    search: tuple[str, ...] | None
    payload: str | None


def _blocked_and_allowed(image: ImageConfig, sets: Sequence[MirrorSet], payload: tuple[str, str, bool] | None,
                         check: _Check) -> tuple[list[str], list[str], list[str]]:
    """`getValidBlockedAndAllowedRegistries`: (registries.conf blocked, policy.json blocked, allowed). When the
    payload check itself fails (`payloadRepoHasUnblockedMirror`: its scratch registries.conf is refused by
    `EditRegistriesConfig` or by containers/image, or the payload cannot be rewritten onto a mirror) the MCO
    returns no list at all and `syncImageConfig` goes on without them, with a warning here."""
    registries_blocked: list[str] = []
    policy_blocked: list[str] = []
    allowed: list[str] = []
    refused: list[str] = []
    blocked = list(image.blocked or ())
    for reg in blocked:
        if payload is None or not nested(payload[0], reg):
            registries_blocked.append(reg)
            policy_blocked.append(reg)
            continue
        name, reference, digested = payload
        conf = RegistriesConf()
        try:
            edit(conf, image.insecure or (), blocked, [s for s in sets if s.by_digest], [])
            sources = pull_sources(conf, name, reference, digested)
        except MirrorSetError as exc:
            check.warnings.append(_problem(
                image, ("spec", "registrySources", "blockedRegistries"), f"{exc.message}, skipping.... (the MCO "
                "then writes no blocked and no allowed registry)", "registries-payload", severity="warning"))
            return [], [], []
        if not any(not any(nested(src, b) for b in blocked) for src in sources):
            refused.append(reg)
            continue
        registries_blocked.append(reg)
        if name != reg:
            policy_blocked.append(reg)
        allowed.append(name)
    if refused:
        check.warnings.append(_problem(
            image, ("spec", "registrySources", "blockedRegistries"), "error adding [" + " ".join(_q(r) for r in refused)
            + "] to blocked registries, cannot block the repository being used by the payload", "registries-payload",
            severity="warning"))
    return registries_blocked, policy_blocked, allowed + list(image.allowed or ())


def plan(image: ImageConfig | None, sets: Sequence[MirrorSet], release_image: str | None, check: _Check) -> Plan:
    """Check the inputs (refusals and warnings into `check`) and say what to write."""
    payload: tuple[str, str, bool] | None = None
    if release_image:
        parsed = repository(release_image)
        if parsed is None:
            check.refuse(None, ("releaseImage",), "error parsing reference of release image", "registries-release")
        else:
            payload = (parsed[0], release_image, parsed[1])
    spec = image or ImageConfig("cluster", None, None, None, None, "", Origin("(no Image config)"))
    registries_blocked, policy_blocked, allowed = _blocked_and_allowed(spec, sets, payload, check)
    _check_scopes(image, spec.insecure or (), "insecure", "insecureRegistries", check)
    _check_scopes(image, spec.blocked or (), "blocked", "blockedRegistries", check)
    _check_scopes(image, spec.allowed or (), "allowed", "allowedRegistries", check)
    _check_sets(sets, check)
    if policy_blocked and allowed:
        try:
            update_policy(DEFAULT_POLICY, policy_blocked, allowed, payload[0] if payload else None)
        except PolicyError as exc:
            check.refuse(image, ("spec", "registrySources"), str(exc), "registries-allowed-blocked")
    return Plan(spec.insecure, tuple(registries_blocked), tuple(policy_blocked), tuple(allowed), spec.search,
                payload[0] if payload else None)


def pool_files(p: Plan, sets: Sequence[MirrorSet], base: Mapping[str, bytes]) -> tuple[list[tuple[str, bytes]], list[str]]:
    """(path, contents) of one pool's registries MachineConfig over its templates' files, and the template keys
    the MCO drops. Raises RegistriesConfError, MirrorSetError or PolicyError."""
    files: list[tuple[str, bytes]] = []
    dropped: list[str] = []
    if p.insecure is not None or p.registries_blocked or sets:
        text = base.get(REGISTRIES_CONF, DEFAULT_REGISTRIES).decode("utf-8", "replace")
        conf, dropped = read_registries_conf(text)
        edit(conf, p.insecure or (), p.registries_blocked, [s for s in sets if s.by_digest],
             [s for s in sets if not s.by_digest])
        files.append((REGISTRIES_CONF, write_registries_conf(conf)))
    if p.policy_blocked or p.allowed:
        files.append((POLICY_JSON, update_policy(base.get(POLICY_JSON, DEFAULT_POLICY), p.policy_blocked, p.allowed,
                                                 p.payload)))
    if p.search is not None:
        files.append((SEARCH_DROPIN, search_dropin(list(p.search))))
    return files, dropped


def _failures(refusals: Sequence[tuple[Owner, Problem]], machine_config: str) -> list[Failure]:
    by_owner: dict[tuple[str, str], list[Problem]] = {}
    for owner, problem in refusals:
        kind, name = (("Image", "cluster") if owner is None else
                      ("Image", owner.name) if isinstance(owner, ImageConfig) else (owner.kind, owner.name))
        by_owner.setdefault((kind, name), []).append(problem)
    return [Failure(kind, name, machine_config, tuple(problems), condition=CONDITION)
            for (kind, name), problems in by_owner.items()]


def _origins(image: ImageConfig | None, sets: Sequence[MirrorSet]) -> dict[str, str]:
    """`mco render --explain`: registries.conf comes from every mirror set and the Image config, the others from
    the Image config."""
    where = [str(s.origin) for s in sets] + ([str(image.origin)] if image is not None else [])
    return {f"storage.files[{REGISTRIES_CONF}]": ", ".join(where)} if where else {}


def generate_registries(image: ImageConfig | None, sets: Sequence[MirrorSet], pools: Sequence[MachineConfigPool], *,
                        release_image: str | None, base_files: Callable[[str], Mapping[str, bytes]],
                        broken: Sequence[tuple[str, str, tuple[Problem, ...]]] = ()) -> Generated:
    """Every built-in pool's `99-<pool>-generated-registries` (module docstring), refusals and warnings;
    `broken`: (kind, name, errors) of documents that did not parse, which refuse the sync as the API server
    would refuse them (their mirrors must not silently disappear from the nodes)."""
    if image is None and not sets and not broken:
        return Generated(configs={}, problems={})
    check = _Check()
    p = plan(image, sets, release_image, check)
    configs: dict[str, tuple[Any, ...]] = {}
    failures: dict[str, tuple[Failure, ...]] = {}
    problems: dict[str, tuple[Problem, ...]] = {"": tuple(check.warnings)}
    origin = image.origin if image is not None else sets[0].origin if sets else Origin("(image config)")
    for pool in (p_ for p_ in pools if is_built_in(p_) and not p_.broken):
        name = f"99-{pool.name}-generated-registries"
        refusals = list(check.refusals)
        files: list[tuple[str, bytes]] = []
        if not refusals and not broken:
            try:
                files, dropped = pool_files(p, sets, base_files(pool.name))
            except MirrorSetError as exc:  # a wildcard source with a more precise entry under it
                found = [(s, r.path) for s in sets for r in s.rules if r.source == exc.scope][:1]
                owner, where = found[0] if found else (image, ())
                refusals.append((owner, _problem(owner, (*where, "source"), str(exc), "registries-wildcard")))
            except (RegistriesConfError, PolicyError) as exc:
                refusals.append((image, Problem("registries-template", str(exc), f"templates/{pool.name}")))
            else:
                if dropped:
                    problems = {**problems, pool.name: (Problem(
                        "registries-dropped", "registries.conf of the role's templates: the MCO keeps only "
                        f"the containers-registries.conf v2 fields and drops {', '.join(dropped)}",
                        f"templates/{pool.name}", severity="warning"),)}
        if refusals or broken:
            failures[pool.name] = tuple(_failures(refusals, name)) + tuple(
                Failure(kind, doc_name, name, errors, condition=CONDITION) for kind, doc_name, errors in broken)
        elif files:
            mc = generated_machine_config(name, pool.name, [file_entry(path, data) for path, data in files], origin)
            configs[pool.name] = (replace(mc, entry_origins={**mc.entry_origins, **_origins(image, sets)}),)
    return Generated(configs=configs, problems=problems, failures=failures)
