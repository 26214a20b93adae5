"""Response bodies of one rendered config: one per spec version, built on the first request for that version.

A new target costs one parse when it lands (the snapshot only needs its name and source version); each
spec version a client asks for is translated, appended, encoded, gzipped and hashed once, then remembered
for as long as the payload lives (server/snapshot.py's PayloadCache keeps only configs a pool serves).
Translating every version up front made each replica spend ~0.3 s of CPU per render on versions no client
of this fleet asks for, and delayed the new bytes by that much. Each variant carries a strong ETag (sha256
of the identity body; the gzip body has its own tag, since it is a different representation), and the
sha512 Ignition's `verification.hash` can pin. A machine's config keeps its bodies whole, as its pool's: one
contiguous body is one write per answer (bench/README.md, machine_bench.py); server/snapshot.py's PayloadCache
bounds how many machines' payloads it keeps (docs/cluster-directory.md, "Memory").
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections.abc import Iterable
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


class ConfigPayload:
    """Every servable form of one rendered config, each built when first asked for and kept."""

    def __init__(self, rendered: RenderedConfig, *, options: AppendOptions | None = None,
                 versions: Iterable[str] = SUPPORTED_VERSIONS, gzip_level: int = 6) -> None:
        self.name = rendered.name
        self.pool = rendered.pool
        self.source_version = config_version(rendered.ignition)
        self._rendered = rendered
        self._options = options or AppendOptions()
        self._gzip_level = gzip_level
        self._versions = frozenset([*versions, self.source_version] if self.source_version else versions)
        self._built: dict[str, Variant | ConversionRefused] = {}
        self._lock = threading.Lock()

    def variant(self, version: str | None) -> Variant:
        """The variant for `version` (None = the config's own version); raises ConversionRefused."""
        key = version or self.source_version
        found = self._built.get(key)
        if found is None:
            if key not in self._versions:
                raise ConversionRefused(key, "not a spec version this server produces")
            with self._lock:  # one build per version, even when two threads ask at once
                found = self._built.get(key)
                if found is None:
                    found = self._built[key] = self._build(key)
        if isinstance(found, ConversionRefused):
            raise found
        return found

    def built(self, version: str | None) -> bool:
        """Whether `version`'s bytes (or its refusal) are ready, so `variant` returns at once."""
        key = version or self.source_version
        return key in self._built or key not in self._versions

    def _build(self, version: str) -> Variant | ConversionRefused:
        try:
            served = to_version(with_appended(self._rendered, version, self._options), version)
        except ConversionRefused as exc:
            return exc
        return make_variant(version, encode(served), gzip_level=self._gzip_level)


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
