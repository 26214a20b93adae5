"""File contents of a rendered config as bytes: data URLs decoded, gzip undone, verification hashes checked.

Only `data:` sources can be baked into an image reproducibly; a remote source (http, https, tftp, s3, gs, arn)
would make the image depend on whatever the URL serves at build time, so `read_resource` reports it as a
problem (`remote-source`) instead of fetching it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ignition.dataurl import decode_data_url, gunzip_contents
from ignition.errors import IgnitionError
from imagebuild.errors import ImageInputError


class SourceProblem(ImageInputError):
    """The resource cannot be turned into bytes; `code` is stable, `field` names the sub-field."""

    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(field, message)
        self.code = code
        self.field = field


def read_resource(resource: Mapping[str, Any] | None) -> bytes | None:
    """The bytes an Ignition resource (`contents`, `append[]`) stands for; None when it has no source."""
    if resource is None:
        return None
    if not isinstance(resource, Mapping):
        raise SourceProblem("json-type", "", "must be an object")
    source = resource.get("source")
    if source is None:
        return None
    if not isinstance(source, str):
        raise SourceProblem("json-type", "source", "must be a string")
    scheme = source.partition(":")[0].lower() if ":" in source else ""
    if scheme != "data":
        raise SourceProblem("remote-source", "source",
                            f"{scheme or 'relative'} source cannot be baked into an image reproducibly "
                            "(inline it as a data URL, or leave the file to Ignition)")
    try:
        data = decode_data_url(source)
    except IgnitionError as exc:
        raise SourceProblem("data-url", "source", f"invalid data URL: {exc}") from exc
    compression = resource.get("compression") or ""
    if compression == "gzip":
        try:
            data = gunzip_contents(data)
        except IgnitionError as exc:
            raise SourceProblem("gzip", "compression", str(exc)) from exc
    elif compression:
        raise SourceProblem("compression", "compression", "invalid compression method")
    _verify(resource.get("verification"), data)
    return data


def _verify(verification: Any, data: bytes) -> None:
    """Check `verification.hash` (`sha512-<hex>` or `sha256-<hex>`) against the decompressed bytes."""
    if not isinstance(verification, Mapping) or not verification.get("hash"):
        return
    spec = str(verification["hash"])
    function, sep, expected = spec.partition("-")
    if not sep or function not in ("sha512", "sha256"):
        raise SourceProblem("hash", "verification.hash", f"unsupported hash {spec!r}")
    actual = hashlib.new(function, data).hexdigest()
    if actual != expected.lower():
        raise SourceProblem("hash-mismatch", "verification.hash",
                            f"contents do not match {function}: expected {expected}, got {actual}")
