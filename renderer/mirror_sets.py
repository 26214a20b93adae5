"""Mirror sets into registries.conf: the MCO's mirror order and pull-from-mirror rules.

`openshift/runtime-utils` `pkg/registries/registries.go` `EditRegistriesConfig`, which the MCO's
container-runtime-config controller calls (`helpers.go` `updateRegistriesConfig`):

1. Merge: the rules of every ImageDigestMirrorSet, then every ImageContentSourcePolicy, are grouped by source
   (ImageTagMirrorSets apart); a rule whose mirrors are only its source is no mirror set and is skipped. Each
   source's mirrors are ordered by a topological sort of "comes before" edges taken from every rule (each
   mirror before the next, the last before the source unless the source is listed), ties and cycles broken by
   byte order (`topo.go`); the source itself, when last, is dropped. Sources are taken in byte order. One rule
   with `NeverContactSource` blocks its source.
2. Write: digest sets first, then tag sets, each adds its mirrors (`pull-from-mirror = "digest-only"` or
   `"tag-only"`) to the entry whose scope is the source (created at the end if none).
3. Blocked scopes get an entry; then every insecure scope marks itself, every entry and every mirror nested in
   it insecure; every blocked scope marks itself and every entry nested in it blocked.
4. An entry nested in a mirrored source that has no mirrors of its own gets the source's mirrors with the
   extra path appended, so the more precise entry does not lose them.

`pull_sources` is containers/image `sysregistriesv2` `FindRegistry` + `PullSourcesFromReference`: where a pull of
a reference would go, in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from renderer.errors import RendererError
from renderer.registries_model import NEVER_CONTACT_SOURCE, MirrorSet
from renderer.registries_toml import Endpoint, RegistriesConf, Registry
from renderer.registry_scopes import nested, repository

DIGEST_ONLY, TAG_ONLY = "digest-only", "tag-only"


class MirrorSetError(RendererError):
    """EditRegistriesConfig's own refusal (a wildcard source with nested entries); `scope` is the source."""

    def __init__(self, message: str, scope: str = "") -> None:
        super().__init__("", message)
        self.scope = scope


@dataclass(frozen=True)
class Merged:
    """One source's merged mirrors."""

    source: str
    mirrors: tuple[str, ...]
    never_contact_source: bool


def topo_sorted(edges: Sequence[tuple[str, str]]) -> list[str]:
    """Every node of `edges`, each after its predecessors where possible; deterministic (byte order)."""
    nodes = sorted({n for edge in edges for n in edge})
    ins: dict[str, set[str]] = {n: set() for n in nodes}
    outs: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b in edges:
        outs[a].add(b)
        ins[b].add(a)
    queue = [n for n in nodes if not ins[n]]
    used: set[str] = set()
    out: list[str] = []
    index = 0
    while queue or index < len(nodes):
        if queue:
            node = queue.pop(0)
        else:  # a loop: break it with the first unused node in byte order
            node = nodes[index]
            index += 1
            if node in used:
                continue
        used.add(node)
        out.append(node)
        ready = []
        for nxt in outs[node]:
            ins[nxt].discard(node)
            if not ins[nxt] and nxt not in used:
                ready.append(nxt)
        queue.extend(sorted(ready))
    return out


def merge(sets: Sequence[MirrorSet]) -> list[Merged]:
    """The merged mirror sets of `sets` (all digest sets, or all tag sets), sources in byte order."""
    lists: dict[str, list[tuple[str, ...]]] = {}
    never: set[str] = set()
    for mirror_set in sets:
        for rule in mirror_set.rules:
            if not any(m != rule.source for m in rule.mirrors):
                continue  # no mirror other than the source: not a mirror set (its policy ignored too)
            if rule.policy == NEVER_CONTACT_SOURCE:
                never.add(rule.source)
            lists.setdefault(rule.source, []).append(rule.mirrors)
    out = []
    for source in sorted(lists):
        edges: list[tuple[str, str]] = []
        for mirrors in lists[source]:
            edges += list(zip(mirrors, mirrors[1:], strict=False))
            if source not in mirrors:
                edges.append((mirrors[-1], source))
        order = topo_sorted(edges)
        if order[-1] == source:
            order.pop()
        out.append(Merged(source, tuple(order), source in never))
    return out


def _entry(conf: RegistriesConf, scope: str) -> Registry:
    for reg in conf.registries:
        if reg.scope == scope:
            return reg
    reg = Registry(prefix=scope) if scope.startswith("*.") else Registry(location=scope)
    conf.registries.append(reg)
    return reg


def edit(conf: RegistriesConf, insecure: Sequence[str], blocked: Sequence[str], digest_sets: Sequence[MirrorSet],
         tag_sets: Sequence[MirrorSet]) -> None:
    """Apply insecure and blocked scopes and the mirror sets to `conf`, in place (module docstring)."""
    digest, tag = merge(digest_sets), merge(tag_sets)
    for merged, pull in ((digest, DIGEST_ONLY), (tag, TAG_ONLY)):
        for item in merged:
            reg = _entry(conf, item.source)
            reg.blocked = reg.blocked or item.never_contact_source
            reg.mirrors += [Endpoint(location=m, pull_from_mirror=pull) for m in item.mirrors]
    for scope in blocked:
        _entry(conf, scope)
    for scope in insecure:
        _entry(conf, scope).insecure = True
        for reg in conf.registries:
            reg.insecure = reg.insecure or nested(reg.scope, scope)
            for mirror in reg.mirrors:
                mirror.insecure = mirror.insecure or nested(mirror.location, scope)
    for scope in blocked:
        _entry(conf, scope).blocked = True
        for reg in conf.registries:
            reg.blocked = reg.blocked or nested(reg.scope, scope)
    for item in (*digest, *tag):
        source = _entry(conf, item.source)
        for reg in conf.registries:
            if reg.scope != source.scope and nested(reg.scope, source.scope) and not reg.mirrors:
                if source.scope.startswith("*."):
                    raise MirrorSetError(f"internal error: mirrorsAdjustedForNestedScope for a wildcard scope "
                                         f'"{source.scope}"', source.scope)
                extra = reg.scope[len(source.scope):]
                reg.mirrors = [replace(m, location=m.location + extra) for m in source.mirrors]


def _matching_prefix(ref: str, prefix: str) -> int:
    """Length of `ref` that `prefix` matches (up to a `:`, `/` or `@`), -1 when it does not."""
    if prefix.startswith("*."):
        index = ref.find(prefix[1:])
        if index == -1 or "/" in ref[:index]:
            return -1
        index += len(prefix) - 1
        return index if index == len(ref) or ref[index] in ":/@" else -1
    if ref == prefix:
        return len(prefix)
    if len(ref) > len(prefix) and ref.startswith(prefix) and ref[len(prefix)] in ":/@":
        return len(prefix)
    return -1


def _load_error(conf: RegistriesConf) -> str | None:
    """What sysregistriesv2's `postProcessRegistries` (`parseLocation`) refuses in a config it loads: a location
    with a URI scheme."""
    for reg in conf.registries:
        for location in (reg.prefix, reg.location, *(m.location for m in reg.mirrors)):
            if location.rstrip("/").startswith(("http://", "https://")):
                return f"invalid location '{location}': URI schemes are not supported"
    return None


def pull_sources(conf: RegistriesConf, name: str, reference: str, digested: bool) -> list[str]:
    """The repository names a pull of `reference` (repository `name`) tries, mirrors first. The entry is
    `FindRegistry`'s: of those matching `name`, the one with the longest scope (not the longest match: a wildcard
    matches more than it spells), the first in byte order on a tie, as the loaded config is sorted by prefix.
    Raises MirrorSetError where containers/image fails: a config it refuses to load, a reference rewritten onto
    a mirror that `reference.ParseNamed` refuses (`PullSourcesFromReference`)."""
    error = _load_error(conf)
    if error is not None:
        raise MirrorSetError(error)
    matching = [reg for reg in conf.registries if _matching_prefix(name, reg.scope) != -1]
    if not matching:
        return [name]
    best = min(matching, key=lambda reg: (-len(reg.scope), reg.scope.encode()))
    endpoints: list[Endpoint | Registry] = []
    for mirror in best.mirrors:
        if best.mirror_by_digest_only and not digested:
            continue
        if (mirror.pull_from_mirror == DIGEST_ONLY and not digested) or \
                (mirror.pull_from_mirror == TAG_ONLY and digested):
            continue
        endpoints.append(mirror)
    endpoints.append(best)
    cut = _matching_prefix(reference, best.scope)
    names: list[str] = []
    for ep in endpoints:
        parsed = repository(reference if not ep.location else ep.location + reference[cut:])
        if parsed is None:  # the digest and tag were parsed with the payload: the name is what fails
            raise MirrorSetError("rewriting reference: repository name must be canonical")
        names.append(parsed[0])
    return names
