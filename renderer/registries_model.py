"""Typed image-registry manifests: ImageDigestMirrorSet, ImageTagMirrorSet (config.openshift.io/v1), the legacy
ImageContentSourcePolicy (operator.openshift.io/v1alpha1), the cluster `Image` config (config.openshift.io/v1),
the cluster `Proxy` config (config.openshift.io/v1: its `trustedCA` only) and ConfigMaps of the `openshift-config`
namespace (the CA bundles the MCO reads from there).

Only the shape is checked here, as the API server's schema would (types, required fields, the
`mirrorSourcePolicy` enum, a mirror repeated in the set-typed `mirrors` of an IDMS or ITMS); what the MCO
refuses in the values is renderer/registries_generated.py's business.
Types follow `openshift/api` config/v1 `types_image_digest_mirror_set.go`, `types_image_tag_mirror_set.go`,
`types_image.go`, `types_proxy.go` and operator/v1alpha1 `types_image_content_source_policy.go`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from renderer.load import Document
from renderer.problems import Path
from renderer.registry_scopes import api_hostname
from renderer.shape import Checker, Origin, origin_of, read_metadata

CONFIG_API = "config.openshift.io/v1"
ICSP_API = "operator.openshift.io/v1alpha1"
IDMS, ITMS, ICSP = "ImageDigestMirrorSet", "ImageTagMirrorSet", "ImageContentSourcePolicy"
CONFIG_NAMESPACE = "openshift-config"
ALLOW_CONTACTING_SOURCE, NEVER_CONTACT_SOURCE = "AllowContactingSource", "NeverContactSource"
_RULES_KEY = {IDMS: "imageDigestMirrors", ITMS: "imageTagMirrors", ICSP: "repositoryDigestMirrors"}
_SOURCES = ("allowedRegistries", "blockedRegistries", "insecureRegistries", "containerRuntimeSearchRegistries")
_PROXY_SPEC = ("httpProxy", "httpsProxy", "noProxy", "readinessEndpoints")
_IMAGE_SPEC = ("registrySources", "additionalTrustedCA", "allowedRegistriesForImport", "externalRegistryHostnames",
               "imageStreamImportMode")


@dataclass(frozen=True)
class MirrorRule:
    """One source and its mirrors, in preference order; `policy` "" means AllowContactingSource."""

    source: str
    mirrors: tuple[str, ...]
    policy: str
    path: Path                     # where the rule sits in its document, e.g. ("spec", "imageDigestMirrors", 0)


@dataclass(frozen=True)
class MirrorSet:
    """An ImageDigestMirrorSet, ImageTagMirrorSet or ImageContentSourcePolicy."""

    kind: str
    name: str
    rules: tuple[MirrorRule, ...]
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)

    @property
    def by_digest(self) -> bool:
        """Its mirrors serve pulls by digest (IDMS, ICSP) rather than by tag (ITMS)."""
        return self.kind != ITMS


@dataclass(frozen=True)
class ImageConfig:
    """The `Image` config (`cluster`): registry sources and the ConfigMap of extra registry CAs.

    A list left out is None, an empty list (), as Go tells nil from empty: the MCO rewrites registries.conf
    when `insecureRegistries` is set at all, and writes the search drop-in when
    `containerRuntimeSearchRegistries` is."""

    name: str
    allowed: tuple[str, ...] | None
    blocked: tuple[str, ...] | None
    insecure: tuple[str, ...] | None
    search: tuple[str, ...] | None
    additional_ca: str
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ProxyConfig:
    """The `Proxy` config (`cluster`): `trusted_ca` names the ConfigMap of `openshift-config` whose `ca-bundle.crt`
    nodes trust besides `user-ca-bundle` (renderer/trust_bundles.py)."""

    name: str
    trusted_ca: str
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ConfigMap:
    """A ConfigMap of `openshift-config`: `data` as text, `binaryData` decoded."""

    name: str
    namespace: str
    data: Mapping[str, str]
    binary: Mapping[str, bytes]
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)


def _list_or_none(check: Checker, data: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...] | None:
    return None if data.get(key) is None else check.strings(data, key, path)


def _mirror_set(kind: str, check: Checker, data: Mapping[str, Any]) -> MirrorSet:
    """An ImageDigestMirrorSet, ImageTagMirrorSet or ImageContentSourcePolicy (`kind`)."""
    name, _, _ = read_metadata(check, data)
    spec = check.mapping(data, "spec", ())
    key = _RULES_KEY[kind]
    raw = spec.get(key)
    rules: list[MirrorRule] = []
    if raw is not None and not isinstance(raw, list):
        check.type_error(("spec", key), "a list", raw)
        raw = []
    for i, item in enumerate(raw or ()):
        path: Path = ("spec", key, i)
        if not isinstance(item, Mapping):
            check.type_error(path, "an object", item)
            continue
        for extra in item:
            if extra not in ("source", "mirrors", *(() if kind == ICSP else ("mirrorSourcePolicy",))):
                check.add("unknown-field", (*path, str(extra)), f'unknown field "{extra}": the {kind} API has no '
                          "such field, it is ignored", severity="warning")
        source = check.string(item, "source", path)
        if not source:
            check.add("required", (*path, "source"), "source is required")
        policy = "" if kind == ICSP else check.string(item, "mirrorSourcePolicy", path)
        if policy not in ("", ALLOW_CONTACTING_SOURCE, NEVER_CONTACT_SOURCE):
            check.add("enum", (*path, "mirrorSourcePolicy"), f'Unsupported value: "{policy}": supported values: '
                      f'"{NEVER_CONTACT_SOURCE}", "{ALLOW_CONTACTING_SOURCE}"')
        mirrors = check.strings(item, "mirrors", path)
        seen: set[str] = set()
        for j, mirror in enumerate(mirrors):
            if kind != ICSP and mirror in seen:  # `+listType=set` in openshift/api (not the ICSP's)
                check.add("duplicate", (*path, "mirrors", j), f'Duplicate value: "{mirror}"')
            seen.add(mirror)
        rules.append(MirrorRule(source, mirrors, policy, path))
    for extra in spec:
        if extra != key:
            check.add("unknown-field", ("spec", str(extra)), f'unknown field "spec.{extra}": the {kind} API has no '
                      "such field, it is ignored", severity="warning")
    return MirrorSet(kind, name, tuple(rules), origin_of(check.doc), check.doc)


def _cluster_singleton(check: Checker, data: Mapping[str, Any], kind: str) -> str:
    """The document's name; a warning unless it is `cluster`, the one the MCO reads of a `config.openshift.io`
    singleton (`pkg/controller/container-runtime-config/`)."""
    name, _, _ = read_metadata(check, data)
    if name and name != "cluster":
        check.add("invalid-name", ("metadata", "name"), f"the MCO reads only the {kind} named 'cluster'; "
                  f"{kind} {name} is ignored", severity="warning")
    return name


def _check_search(check: Checker, search: tuple[str, ...], raw: Any) -> None:
    """`containerRuntimeSearchRegistries` as the API server checks it (openshift/api `types_image.go`: MinItems=1,
    Format=hostname, listType=set), in its words."""
    field = "spec.registrySources.containerRuntimeSearchRegistries"
    path: Path = ("spec", "registrySources", "containerRuntimeSearchRegistries")
    if raw == []:
        check.add("min-items", path, f"Invalid value: 0: {field} in body should have at least 1 items")
    seen: set[str] = set()
    for i, registry in enumerate(search):
        if not api_hostname(registry):
            check.add("hostname", (*path, i), f'Invalid value: "{registry}": {field}[{i}] in body must be of type '
                      f'hostname: "{registry}"')
        elif registry in seen:
            check.add("duplicate", (*path, i), f'Duplicate value: "{registry}"')
        seen.add(registry)


def image_config(check: Checker, data: Mapping[str, Any]) -> ImageConfig:
    """The `Image` config; the MCO reads only the one named `cluster`."""
    name = _cluster_singleton(check, data, "Image")
    spec = check.mapping(data, "spec", ())
    sources = check.mapping(spec, "registrySources", ("spec",))
    base: Path = ("spec", "registrySources")
    for extra in spec:
        if extra not in _IMAGE_SPEC:
            check.add("unknown-field", ("spec", str(extra)), f'unknown field "spec.{extra}": the Image API has no '
                      "such field, it is ignored", severity="warning")
    for extra in sources:
        if extra not in _SOURCES:
            check.add("unknown-field", (*base, str(extra)), f'unknown field "{extra}": not a registrySources field, '
                      "it is ignored", severity="warning")
    ca = check.mapping(spec, "additionalTrustedCA", ("spec",))
    search = _list_or_none(check, sources, "containerRuntimeSearchRegistries", base)
    _check_search(check, search or (), sources.get("containerRuntimeSearchRegistries"))
    return ImageConfig(name, _list_or_none(check, sources, "allowedRegistries", base),
                       _list_or_none(check, sources, "blockedRegistries", base),
                       _list_or_none(check, sources, "insecureRegistries", base),
                       search,
                       check.string(ca, "name", ("spec", "additionalTrustedCA")), origin_of(check.doc), check.doc)


def proxy_config(check: Checker, data: Mapping[str, Any]) -> ProxyConfig:
    """The `Proxy` config; the MCO reads only the one named `cluster`, and here only its `trustedCA` is applied."""
    name = _cluster_singleton(check, data, "Proxy")
    spec = check.mapping(data, "spec", ())
    for extra in spec:
        if extra in _PROXY_SPEC:
            check.add("not-applied", ("spec", str(extra)), f"spec.{extra} is not applied by this renderer (of the "
                      "Proxy it reads only spec.trustedCA)", severity="warning")
        elif extra != "trustedCA":
            check.add("unknown-field", ("spec", str(extra)), f'unknown field "spec.{extra}": the Proxy API has no '
                      "such field, it is ignored", severity="warning")
    ca = check.mapping(spec, "trustedCA", ("spec",))
    return ProxyConfig(name, check.string(ca, "name", ("spec", "trustedCA")), origin_of(check.doc), check.doc)


def config_map(check: Checker, data: Mapping[str, Any]) -> ConfigMap:
    """A ConfigMap; only those of `openshift-config` are read (a warning says so for the others)."""
    name, _, _ = read_metadata(check, data)
    raw_meta = data.get("metadata")
    meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    namespace = check.string(meta, "namespace", ("metadata",))
    if namespace != CONFIG_NAMESPACE:
        check.add("namespace", ("metadata", "namespace"), f"ConfigMap {name} is not in the {CONFIG_NAMESPACE} "
                  "namespace, where the MCO reads CA bundles; ignored", severity="warning")
    binary: dict[str, bytes] = {}
    for key, text in check.string_map(data, "binaryData", ()).items():
        try:
            binary[key] = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            check.add("base64", ("binaryData", key), "binaryData values must be base64")
    return ConfigMap(name, namespace, check.string_map(data, "data", ()), binary, origin_of(check.doc), check.doc)


RegistriesManifest = MirrorSet | ImageConfig | ProxyConfig | ConfigMap

KINDS: dict[tuple[str, str], Callable[[Checker, Mapping[str, Any]], RegistriesManifest]] = {
    (CONFIG_API, IDMS): partial(_mirror_set, IDMS),
    (CONFIG_API, ITMS): partial(_mirror_set, ITMS),
    (ICSP_API, ICSP): partial(_mirror_set, ICSP),  # its mirrors are digest mirrors with the default source policy
    (CONFIG_API, "Image"): image_config,
    (CONFIG_API, "Proxy"): proxy_config,
    ("v1", "ConfigMap"): config_map,
}


def registries_manifest(data: Mapping[str, Any]) -> bool:
    """Whether a manifest (parsed or not) is one of these kinds; a ConfigMap only in `openshift-config`."""
    if (data.get("apiVersion"), data.get("kind")) not in KINDS:
        return False
    meta = data.get("metadata")
    return data.get("kind") != "ConfigMap" or (isinstance(meta, Mapping) and meta.get("namespace") == CONFIG_NAMESPACE)
