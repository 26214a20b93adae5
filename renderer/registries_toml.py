"""/etc/containers/registries.conf (v2) as the MCO reads and writes it.

The MCO decodes the template's registries.conf into containers/image `sysregistriesv2.V2RegistriesConf` and
encodes its edited copy with BurntSushi/toml. Reading keeps only that struct's fields (others are named in a
warning: the MCO drops them); writing produces the encoder's fixed shape, so the file on a node is the one the
MCO would write (the shape of the registries.conf the openshift-docs show from a node, with the
`additional-layer-store-auth-helper` key that containers/image v5.30 added to the struct and the MCO's
v5.35.0 writes):

    unqualified-search-registries = ["registry.access.redhat.com", "docker.io"]
    short-name-mode = ""
    additional-layer-store-auth-helper = ""

    [[registry]]
      prefix = ""
      location = "registry.example.com/team"
      blocked = true

      [[registry.mirror]]
        location = "mirror.example.net/team"
        pull-from-mirror = "digest-only"

Top-level keys first (struct order, a list left out is not written), then each table after a blank line;
`prefix` is always written, the other fields only when set; map keys sorted.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet.toml_text import toml_string
from renderer.errors import RendererError

_TOP = ("registry", "unqualified-search-registries", "credential-helpers", "short-name-mode",
        "additional-layer-store-auth-helper", "aliases")
_REGISTRY = ("prefix", "location", "insecure", "pull-from-mirror", "mirror", "blocked", "mirror-by-digest-only")
_ENDPOINT = ("location", "insecure", "pull-from-mirror")
_BARE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class RegistriesConfError(RendererError):
    """The template's registries.conf cannot be decoded (the MCO's `error unmarshalling registries config`)."""

    def __init__(self, message: str) -> None:
        super().__init__("", message)


@dataclass
class Endpoint:
    """A registry location or one of its mirrors."""

    location: str = ""
    insecure: bool = False
    pull_from_mirror: str = ""


@dataclass
class Registry:
    """A `[[registry]]` table: a scope (`prefix`, or `location` when there is none) and its mirrors."""

    prefix: str = ""
    location: str = ""
    insecure: bool = False
    pull_from_mirror: str = ""
    mirrors: list[Endpoint] = field(default_factory=list)
    blocked: bool = False
    mirror_by_digest_only: bool = False

    @property
    def scope(self) -> str:
        """What the entry matches: its prefix, else its location."""
        return self.prefix or self.location


@dataclass
class RegistriesConf:
    """The fields of `V2RegistriesConf` the MCO keeps; None is a list the file did not have."""

    registries: list[Registry] = field(default_factory=list)
    search: list[str] | None = None
    credential_helpers: list[str] | None = None
    short_name_mode: str = ""
    additional_layer_store_auth_helper: str = ""
    aliases: dict[str, str] | None = None


def _typed(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RegistriesConfError(f"error unmarshalling registries config: {where}: expected {kind.__name__}")
    return value


def _strings(value: Any, where: str) -> list[str]:
    return [_typed(v, str, where) for v in _typed(value, list, where)]


def _endpoint(data: Mapping[str, Any], where: str, into: Endpoint | Registry) -> None:
    into.location = _typed(data.get("location", ""), str, f"{where}.location")
    into.insecure = _typed(data.get("insecure", False), bool, f"{where}.insecure")
    into.pull_from_mirror = _typed(data.get("pull-from-mirror", ""), str, f"{where}.pull-from-mirror")


def read_registries_conf(text: str) -> tuple[RegistriesConf, list[str]]:
    """The template's registries.conf, and the keys the MCO would drop (as `key` paths)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegistriesConfError(f"error unmarshalling registries config: {exc}") from exc
    dropped = [key for key in data if key not in _TOP]
    conf = RegistriesConf()
    for i, raw in enumerate(_typed(data.get("registry", []), list, "registry")):
        where = f"registry[{i}]"
        reg = Registry(prefix=_typed(_typed(raw, dict, where).get("prefix", ""), str, f"{where}.prefix"))
        _endpoint(raw, where, reg)
        for j, mirror in enumerate(_typed(raw.get("mirror", []), list, f"{where}.mirror")):
            endpoint = Endpoint()
            _endpoint(_typed(mirror, dict, f"{where}.mirror[{j}]"), f"{where}.mirror[{j}]", endpoint)
            reg.mirrors.append(endpoint)
            dropped += [f"{where}.mirror[{j}].{k}" for k in mirror if k not in _ENDPOINT]
        reg.blocked = _typed(raw.get("blocked", False), bool, f"{where}.blocked")
        reg.mirror_by_digest_only = _typed(raw.get("mirror-by-digest-only", False), bool,
                                           f"{where}.mirror-by-digest-only")
        dropped += [f"{where}.{k}" for k in raw if k not in _REGISTRY]
        conf.registries.append(reg)
    if "unqualified-search-registries" in data:
        conf.search = _strings(data["unqualified-search-registries"], "unqualified-search-registries")
    if "credential-helpers" in data:
        conf.credential_helpers = _strings(data["credential-helpers"], "credential-helpers")
    conf.short_name_mode = _typed(data.get("short-name-mode", ""), str, "short-name-mode")
    conf.additional_layer_store_auth_helper = _typed(data.get("additional-layer-store-auth-helper", ""), str,
                                                     "additional-layer-store-auth-helper")
    if "aliases" in data:
        aliases = _typed(data["aliases"], dict, "aliases")
        conf.aliases = {str(k): _typed(v, str, f"aliases.{k}") for k, v in aliases.items()}
    return conf, dropped


def _key(text: str) -> str:
    return text if text and set(text) <= _BARE else toml_string(text)


def _list(values: list[str]) -> str:
    return "[" + ", ".join(toml_string(v) for v in values) + "]"


def _endpoint_lines(ep: Endpoint | Registry, indent: str) -> list[str]:
    lines = [f'{indent}location = {toml_string(ep.location)}'] if ep.location else []
    if ep.insecure:
        lines.append(f"{indent}insecure = true")
    if ep.pull_from_mirror:
        lines.append(f"{indent}pull-from-mirror = {toml_string(ep.pull_from_mirror)}")
    return lines


def write_registries_conf(conf: RegistriesConf) -> bytes:
    """The TOML the MCO's encoder writes for `conf`."""
    lines: list[str] = []
    if conf.search is not None:
        lines.append(f"unqualified-search-registries = {_list(conf.search)}")
    if conf.credential_helpers is not None:
        lines.append(f"credential-helpers = {_list(conf.credential_helpers)}")
    lines.append(f"short-name-mode = {toml_string(conf.short_name_mode)}")
    lines.append(f"additional-layer-store-auth-helper = {toml_string(conf.additional_layer_store_auth_helper)}")
    for reg in conf.registries:
        lines += ["", "[[registry]]", f"  prefix = {toml_string(reg.prefix)}", *_endpoint_lines(reg, "  ")]
        if reg.blocked:
            lines.append("  blocked = true")
        if reg.mirror_by_digest_only:
            lines.append("  mirror-by-digest-only = true")
        for mirror in reg.mirrors:
            lines += ["", "  [[registry.mirror]]", *_endpoint_lines(mirror, "    ")]
    if conf.aliases is not None:
        lines += ["", "[aliases]"] + [f"  {_key(k)} = {toml_string(v)}" for k, v in sorted(conf.aliases.items())]
    return ("\n".join(lines) + "\n").encode()


def search_dropin(search: list[str]) -> bytes:
    """/etc/containers/registries.conf.d/01-image-searchRegistries.conf: a config holding only the search list."""
    return write_registries_conf(RegistriesConf(search=list(search)))
