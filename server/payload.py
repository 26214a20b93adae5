"""Precomputed response bodies: one per (rendered config, spec version, encoding), built when a render lands.

The request path only looks bytes up here: no JSON, no translation, no compression per request. Each
variant carries a strong ETag (sha256 of the identity body; the gzip body has its own tag, since it is a
different representation), and the sha512 Ignition's `verification.hash` can pin.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fleet.rendered import RenderedConfig
from server.added_files import AppendOptions, with_appended
from server.convert import ConversionRefused, config_version, encode, to_version
from server.negotiate import SUPPORTED_VERSIONS


@dataclass(frozen=True)
class Variant:
    """The bytes of one config in one spec version, identity and gzip."""

    version: str
    body: bytes
    gzip_body: bytes
    etag: str
    gzip_etag: str
    sha512: str


@dataclass(frozen=True)
class ConfigPayload:
    """Every servable form of one rendered config; `refused` says why a version cannot be served."""

    name: str
    pool: str
    source_version: str
    variants: Mapping[str, Variant]
    refused: Mapping[str, ConversionRefused]

    def variant(self, version: str | None) -> Variant:
        """The variant for `version` (None = the config's own version); raises ConversionRefused."""
        key = version or self.source_version
        found = self.variants.get(key)
        if found is not None:
            return found
        refusal = self.refused.get(key)
        if refusal is not None:
            raise refusal
        raise ConversionRefused(key, "not a spec version this server produces")


def make_variant(version: str, body: bytes, *, gzip_level: int = 6) -> Variant:
    """Hash and compress one body (gzip with mtime 0, so the bytes and the tag are reproducible)."""
    digest = hashlib.sha256(body).hexdigest()
    return Variant(
        version=version,
        body=body,
        gzip_body=gzip.compress(body, compresslevel=gzip_level, mtime=0),
        etag=f'"{digest}"',
        gzip_etag=f'"{digest}-gzip"',
        sha512=hashlib.sha512(body).hexdigest(),
    )


def build_payload(rendered: RenderedConfig, *, options: AppendOptions | None = None,
                  versions: Iterable[str] = SUPPORTED_VERSIONS, gzip_level: int = 6) -> ConfigPayload:
    """Translate, append and encode `rendered` for every version; a refused version records its reason."""
    options = options or AppendOptions()
    variants: dict[str, Variant] = {}
    refused: dict[str, ConversionRefused] = {}
    source = config_version(rendered.ignition)
    wanted = list(versions)
    if source and source not in wanted:
        wanted.append(source)
    for version in wanted:
        try:
            served = to_version(with_appended(rendered, version, options), version)
        except ConversionRefused as exc:
            refused[version] = exc
            continue
        variants[version] = make_variant(version, encode(served), gzip_level=gzip_level)
    return ConfigPayload(rendered.name, rendered.pool, source, variants, refused)
