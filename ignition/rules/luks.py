"""LUKS volumes, Clevis, Tang and CEX (Ignition `types/luks.go`, `clevis.go`, `tang.go`, `cex.go`)."""

from __future__ import annotations

import json
from typing import Any

from ignition.rules import go_url
from ignition.rules.context import Ctx
from ignition.rules.paths import check_path
from ignition.rules.resources import check_resource
from ignition.rules.urls import INVALID_SCHEME, INVALID_URL, check_url_nil_ok


def _reject(name: str) -> Any:
    raise ValueError(name)


def _valid_json(text: str) -> bool:
    """Go's json.Valid (no NaN/Infinity, like Go)."""
    try:
        json.loads(text, parse_constant=_reject)
    except (ValueError, RecursionError):
        return False
    return True


def _check_tang(t: dict[str, Any], base: tuple[str | int, ...], ctx: Ctx) -> None:
    try:
        scheme: str | None = go_url.parse(t.get("url", "")).scheme
    except go_url.URLError:
        scheme = None
    if scheme is None:
        ctx.error(base + ("url",), INVALID_URL)
    elif scheme not in ("http", "https"):
        ctx.error(base + ("url",), INVALID_SCHEME)
    if not t.get("thumbprint"):
        ctx.error(base + ("thumbprint",), "thumbprint is required")
    advertisement = t.get("advertisement")
    if advertisement and not _valid_json(advertisement):
        ctx.error(base + ("advertisement",), "advertisement is not valid JSON")


def _check_custom(custom: dict[str, Any], base: tuple[str | int, ...], ctx: Ctx) -> None:
    pin = custom.get("pin")
    config = custom.get("config")
    # 3.3+ checks a custom pin once any of its fields is set; 3.2 only once pin or config is non-empty.
    if not pin and not config and (custom.get("needsNetwork") is not True or not ctx.since("3.3.0")):
        return
    if pin:
        if not ctx.since("3.6.0") and pin not in ("tpm2", "tang", "sss"):
            ctx.error(base + ("pin",), "unsupported clevis pin")
    elif ctx.since("3.3.0"):
        ctx.error(base + ("pin",), "missing required custom clevis pin")
    else:
        ctx.error(base + ("pin",), "unsupported clevis pin")
    if not config:
        ctx.error(base + ("config",), "missing required custom clevis config")


def check_luks(i: int, luks: dict[str, Any], ctx: Ctx) -> None:
    """Luks.Validate with its Clevis, Tang, CEX and key-file rules."""
    base = ("storage", "luks", i)
    if "/" in luks.get("name", ""):
        ctx.error(base + ("name",), "device names cannot contain slashes")
    label = luks.get("label")
    if label is not None and len(label.encode("utf-8")) > 47:
        ctx.error(base + ("label",), "luks device labels cannot be longer than 47 characters")
    device = luks.get("device")
    if not device:
        ctx.error(base + ("device",), "disk device is required")
    else:
        ctx.error(base + ("device",), check_path(device))
    clevis = luks.get("clevis")
    key_file = luks.get("keyFile") or {}
    if clevis is not None:
        custom = clevis.get("custom")
        others = bool(clevis.get("tang")) or clevis.get("tpm2") is True or bool(clevis.get("threshold"))
        if ctx.since("3.3.0"):
            has_custom = bool(custom and custom.get("pin"))
        else:
            has_custom = custom is not None
        if has_custom and others:
            ctx.error(base + ("clevis",), "cannot use custom clevis config with tpm2, tang, or threshold")
        if custom is not None:
            _check_custom(custom, base + ("clevis", "custom"), ctx)
        for j, tang in enumerate(clevis.get("tang") or ()):
            _check_tang(tang, base + ("clevis", "tang", j), ctx)
    if key_file:
        if check_url_nil_ok(key_file.get("source"), ctx.version) is not None:
            ctx.error(base + ("keys",), "invalid key-file source")
        check_resource(key_file, base + ("keyFile",), ctx)
    cex = luks.get("cex")
    if cex and cex.get("enabled") is True:
        c = clevis or {}
        custom = c.get("custom") or {}
        if (
            c.get("tang")
            or c.get("tpm2") is True
            or c.get("threshold")
            or custom.get("pin")
            or custom.get("config")
            or custom.get("needsNetwork") is True
        ):
            ctx.error(base + ("cex",), "cannot use cex with clevis")
        if key_file.get("source"):
            ctx.error(base + ("cex",), "cannot use key file with cex")
