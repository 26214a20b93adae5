"""Whether a registries.conf change is safe without a drain (MCO pkg/daemon/drain.go:
isSafeContainerRegistryConfChanges): only added mirrors that are digest-only, nothing removed or changed.
Pure, no I/O."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from typing import Any

from fleet.diff import ContentsError, file_contents

REGISTRIES_CONF = "/etc/containers/registries.conf"


def _registries(entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The parsed TOML of a registries.conf file entry ({} when absent); None when it cannot be read."""
    if entry is None:
        return {}
    try:
        raw = file_contents(entry)
        data = tomllib.loads(raw.decode("utf-8")) if raw else {}
    except (ContentsError, ValueError, UnicodeDecodeError):
        return None
    return data


def _regs_by_key(conf: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for reg in conf.get("registry") or ():
        if isinstance(reg, Mapping):
            out[str(reg.get("prefix") or reg.get("location") or "")] = reg
    return out


def _mirrors(reg: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(m.get("location", "")): m for m in reg.get("mirror") or () if isinstance(m, Mapping)}


def _digest_only(mirror: Mapping[str, Any]) -> bool:
    return mirror.get("pull-from-mirror") == "digest-only"


# what toml.Decode into sysregistriesv2.Registry leaves in a key the file does not write: its zero value
_ZERO: dict[str, Any] = {"prefix": "", "location": "", "blocked": False, "insecure": False, "pull-from-mirror": ""}


def _field(table: Mapping[str, Any], key: str) -> Any:
    return table.get(key, _ZERO[key])


def registries_change_is_safe(old_entry: Mapping[str, Any] | None, new_entry: Mapping[str, Any] | None) -> bool:
    """True when a registries.conf change can be applied with a crio reload and no drain."""
    old, new = _registries(old_entry), _registries(new_entry)
    if old is None or new is None:
        return False
    old_search = list(old.get("unqualified-search-registries") or ())
    new_search = list(new.get("unqualified-search-registries") or ())
    if new_search[:len(old_search)] != old_search:
        return False
    old_regs, new_regs = _regs_by_key(old), _regs_by_key(new)
    if set(old_regs) - set(new_regs):
        return False
    for key, reg in new_regs.items():
        mirrors = _mirrors(reg)
        if key not in old_regs:
            if mirrors:
                if not all(_digest_only(m) for m in mirrors.values()):
                    return False
            elif reg.get("mirror-by-digest-only") is not True:
                return False
            continue
        before = old_regs[key]
        for field_name in ("prefix", "location", "blocked", "insecure"):
            if _field(before, field_name) != _field(reg, field_name):
                return False
        old_mirrors = _mirrors(before)
        if set(old_mirrors) - set(mirrors):
            return False
        for loc, mirror in mirrors.items():
            if loc in old_mirrors:
                was = _field(old_mirrors[loc], "pull-from-mirror")
                if _field(mirror, "pull-from-mirror") != was and not _digest_only(mirror):
                    return False
            elif not _digest_only(mirror) and reg.get("mirror-by-digest-only") is not True:
                return False
    return True
