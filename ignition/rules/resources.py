"""Resources (`source`, `compression`, `httpHeaders`, `verification`): Ignition `types/resource.go`, `verification.go`."""

from __future__ import annotations

from typing import Any

from ignition.report import Path
from ignition.rules.context import Ctx
from ignition.rules.urls import INVALID_URL, check_url, check_url_nil_ok, scheme_of


def check_hash(value: str, ctx: Ctx) -> str | None:
    """Verification.Validate: `<function>-<hex>` with a known function and the right length."""
    function, sep, digest = value.partition("-")
    if not sep:
        return "malformed hash specifier"
    if function == "sha512":
        size = 128
    elif function == "sha256" and ctx.since("3.1.0"):
        size = 64
    else:
        return "unrecognized hash function"
    if len(digest.encode("utf-8")) != size:
        return "incorrect size for hash sum"
    return None


def check_resource(res: dict[str, Any], path: Path, ctx: Ctx, *, hash_needs_source: bool = True) -> None:
    """Resource.Validate (3.1+) and the 3.0 FileContents/ConfigReference/CaReference equivalents.

    `hash_needs_source=False` for 3.0's ConfigReference and CaReference, which lack that rule."""
    compression = res.get("compression")
    if compression is not None and compression not in ("", "gzip"):
        ctx.error(path + ("compression",), "invalid compression method")
    source = res.get("source")
    verification = res.get("verification")
    if verification:
        digest = verification.get("hash")
        if digest is not None:
            if source is None and hash_needs_source:
                ctx.error(path + ("verification", "hash"), "source must be specified if verification is specified")
            ctx.error(path + ("verification", "hash"), check_hash(digest, ctx))
    if source:
        ctx.error(path + ("source",), check_url_nil_ok(source, ctx.version))
    headers = res.get("httpHeaders")
    if headers:
        if not source:
            ctx.error(path + ("httpHeaders",), INVALID_URL)
        else:
            scheme = scheme_of(source)
            if scheme is None:
                ctx.error(path + ("httpHeaders",), INVALID_URL)
            elif scheme not in ("http", "https"):
                ctx.error(path + ("httpHeaders",), "cannot use HTTP headers with this source scheme")
        for i, header in enumerate(headers):
            if header.get("name", "") == "":
                ctx.error(path + ("httpHeaders", i, "name"), "HTTP header name can't be empty")
            if header.get("value") == "":
                ctx.error(path + ("httpHeaders", i, "value"), "unable to parse HTTP header")


def check_required_source(res: dict[str, Any], path: Path, ctx: Ctx) -> None:
    """validateRequiredSource (3.1+ merge entries and CAs): a non-empty, valid source."""
    source = res.get("source")
    if not source:
        ctx.error(path, "source is required")
    else:
        ctx.error(path, check_url(source, ctx.version))
