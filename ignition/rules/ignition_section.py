"""The `ignition` section: config merge/replace, certificate authorities, proxy (Ignition `types/ignition.go`, `tls.go`, `proxy.go`)."""

from __future__ import annotations

from typing import Any

from ignition.rules import go_url
from ignition.rules.context import Ctx
from ignition.rules.resources import check_required_source, check_resource
from ignition.rules.urls import INVALID_URL, check_url


def _check_proxy(value: str | None, path: tuple[str | int, ...], ctx: Ctx, http_ok: bool) -> None:
    if value is None:
        return
    try:
        scheme = go_url.parse(value).scheme
    except go_url.URLError:
        ctx.error(path, INVALID_URL)
        return
    if scheme not in ("http", "https"):
        ctx.error(path, "proxies must be http(s)")
    elif scheme == "http" and not http_ok:
        ctx.warn(path, "insecure plaintext HTTP proxy specified for HTTPS resources")


def check_ignition(ign: dict[str, Any], ctx: Ctx) -> None:
    """Everything under `ignition` except the version (already checked by the parser)."""
    base = ("ignition",)
    new = ctx.since("3.1.0")
    config = ign.get("config") or {}
    for i, ref in enumerate(config.get("merge") or ()):
        path: tuple[str | int, ...] = base + ("config", "merge", i)
        if new:
            check_required_source(ref, path, ctx)
        check_resource(ref, path, ctx, hash_needs_source=new)
    replace = config.get("replace")
    if replace:
        check_resource(replace, base + ("config", "replace"), ctx, hash_needs_source=new)
    tls = (ign.get("security") or {}).get("tls") or {}
    for i, ca in enumerate(tls.get("certificateAuthorities") or ()):
        path = base + ("security", "tls", "certificateAuthorities", i)
        if new:
            check_required_source(ca, path, ctx)
            check_resource(ca, path, ctx)
        else:
            ctx.error(path + ("source",), check_url(ca.get("source", ""), ctx.version))
            sub = {k: v for k, v in ca.items() if k != "source"}
            check_resource(sub, path, ctx, hash_needs_source=False)
    proxy = ign.get("proxy")
    if proxy:
        _check_proxy(proxy.get("httpProxy"), base + ("proxy", "httpProxy"), ctx, True)
        _check_proxy(proxy.get("httpsProxy"), base + ("proxy", "httpsProxy"), ctx, False)
