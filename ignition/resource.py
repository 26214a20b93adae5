"""Reading an Ignition resource (`contents`, `append[]`, ...) into the bytes it stands for.

Where it sits: the one reader behind every consumer of resources, so they all read the same bytes and
refuse the same ones: the node agent and `mco diff` (fleet/diff.py), the image builder
(imagebuild/plan_storage.py) and the renderer's reads of generated files. As Ignition does
(internal/resource/url.go, internal/util/verification.go), the source's scheme is the one Go's url.Parse finds,
a `data:` URL is decoded (ignition/dataurl.py), `compression: gzip` is undone, and `verification.hash`
(`sha512-<hex>` or `sha256-<hex>`) is checked over the decompressed bytes, always. Only inline sources are read:
any other scheme is a `remote-source` error (rendered configs carry their contents inline; none is fetched).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ignition.dataurl import decode_data_url, gunzip_contents
from ignition.errors import IgnitionError
from ignition.rules.urls import INVALID_URL, scheme_of

__all__ = ["ResourceError", "check_hash", "read_resource"]

class ResourceError(IgnitionError):
    """A resource that cannot be read: `code` is stable, `field` names its sub-field (`source`, ...)."""

    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.field = field
        self.message = message


def read_resource(resource: Mapping[str, Any] | None) -> bytes | None:
    """The bytes a resource stands for (None when it has no source); only `data:` sources are read."""
    if resource is None:
        return None
    if not isinstance(resource, Mapping):
        raise ResourceError("json-type", "", "must be an object")
    source = resource.get("source")
    if source is None:
        return None
    if not isinstance(source, str):
        raise ResourceError("json-type", "source", "must be a string")
    data = _inline(source)
    compression = resource.get("compression") or ""
    if compression == "gzip":
        try:
            data = gunzip_contents(data)
        except IgnitionError as exc:
            raise ResourceError("gzip", "compression", str(exc)) from exc
    elif compression:
        raise ResourceError("compression", "compression", "invalid compression method")
    check_hash(resource.get("verification"), data)
    return data


def check_hash(verification: Any, data: bytes) -> None:
    """Check `verification.hash` against `data`; no hash given passes."""
    if not isinstance(verification, Mapping) or not verification.get("hash"):
        return
    spec = str(verification["hash"])
    function, sep, expected = spec.partition("-")
    if not sep or function not in ("sha512", "sha256"):
        raise ResourceError("hash", "verification.hash", f"unrecognized hash function in {spec!r}")
    actual = hashlib.new(function, data).hexdigest()
    if actual != expected.lower():
        raise ResourceError("hash-mismatch", "verification.hash",
                            f"contents do not match verification.hash ({function}): expected {expected}, got {actual}")


def _inline(source: str) -> bytes:
    """The raw bytes a `data:` source holds, its scheme the one Go's url.Parse finds (Ignition parses every source so)."""
    scheme = scheme_of(source)
    if scheme is None:
        raise ResourceError("url", "source", INVALID_URL)
    if scheme != "data":
        raise ResourceError("remote-source", "source", f"a {scheme or 'relative'} source is not read (only data: URLs)")
    try:
        return decode_data_url(source)
    except IgnitionError as exc:
        raise ResourceError("data-url", "source", f"invalid data URL: {exc}") from exc
