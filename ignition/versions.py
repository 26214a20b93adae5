"""The Ignition spec versions this library reads, in order (first step of the pipeline: which schema applies).

Released versions are frozen; `3.7.0-experimental` is what Ignition HEAD accepts as its experimental spec
(its only addition is the `virtiofs` filesystem format). Anything else is `unsupported config version`.
"""

from __future__ import annotations

SUPPORTED_VERSIONS: tuple[str, ...] = ("3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0")
LATEST: str = "3.6.0"
EXPERIMENTAL: str = "3.7.0-experimental"
# Every version string `parse` accepts, oldest first.
ACCEPTED_VERSIONS: tuple[str, ...] = SUPPORTED_VERSIONS + (EXPERIMENTAL,)

_ORDER = {v: i for i, v in enumerate(ACCEPTED_VERSIONS)}


def version_index(version: str) -> int:
    """Position of an accepted version in ACCEPTED_VERSIONS (raises KeyError for others)."""
    return _ORDER[version]


def at_least(version: str, minimum: str) -> bool:
    """True when `version` is `minimum` or newer (both accepted versions)."""
    return _ORDER[version] >= _ORDER[minimum]


def is_accepted(version: str) -> bool:
    """True for a version string that names a spec this library reads."""
    return version in _ORDER
