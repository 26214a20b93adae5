"""The server's use of ignition/: translate a rendered config to the negotiated spec and encode it.

Kept in one module so that the payload builder depends on two functions, not on ignition/'s layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from server.errors import ServerError


class ConversionRefused(ServerError):
    """The config cannot be expressed in the requested spec version; `fields` lists the offending paths."""

    def __init__(self, version: str, message: str, fields: tuple[str, ...] = ()) -> None:
        super().__init__(f"cannot serve spec {version}: {message}")
        self.version = version
        self.message = message
        self.fields = fields


def config_version(config: Mapping[str, Any]) -> str:
    """The `ignition.version` of a parsed config ("" when absent)."""
    ign = config.get("ignition")
    version = ign.get("version") if isinstance(ign, Mapping) else None
    return version if isinstance(version, str) else ""


def to_version(config: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The config in spec `version` (up or down); raises ConversionRefused when down-translation cannot."""
    if config_version(config) == version:
        return dict(config)
    from ignition.errors import IgnitionError
    from ignition.translate import translate

    try:
        return translate(config, version)
    except IgnitionError as exc:
        report = getattr(exc, "report", None)
        entries = list(getattr(report, "entries", None) or [])
        fields = tuple(e.path_str() for e in entries if getattr(e, "severity", "error") == "error")
        message = "; ".join(f"{e.path_str()}: {e.message}" for e in entries) if entries else str(exc)
        raise ConversionRefused(version, message, fields) from exc


def encode(config: Mapping[str, Any]) -> bytes:
    """Stable compact JSON bytes (ignition/'s canonical form)."""
    from ignition.canonical import canonical_json

    return canonical_json(config)
