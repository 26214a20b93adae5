"""Which spec a document is: Ignition's `util.GetConfigVersion`, then the semver match against the accepted versions.

Step 3 of the pipeline (ignition/parse.py): only `ignition.version` is read, the way Go unmarshals its
`versionStub` (keys matched case-insensitively, the last of them winning; a wrong JSON type is fatal), then
coreos/go-semver parses it (`invalid config version (couldn't parse)`) and it must name an accepted version
(`unsupported config version`).
"""

from __future__ import annotations

import re
from typing import Any

from ignition.decode import DupDict, json_kind
from ignition.report import ERROR, Entry
from ignition.versions import ACCEPTED_VERSIONS

MSG_BAD_VERSION = "invalid config version (couldn't parse)"
MSG_UNSUPPORTED = "unsupported config version"

_SEMVER_IDENT = re.compile(r"[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*")
_GO_INT = re.compile(r"[+-]?[0-9]+")


def parse_semver(text: str) -> tuple[int, int, int, str, str] | None:
    """coreos/go-semver's NewVersion: (major, minor, patch, prerelease, metadata), or None if it fails."""
    version, sep, metadata = text.partition("+")
    if not sep:
        metadata = ""
    version, sep, pre = version.partition("-")
    if not sep:
        pre = ""
    parts = version.split(".", 2)
    if len(parts) != 3:
        return None
    for ident in (pre, metadata):
        if ident and not _SEMVER_IDENT.fullmatch(ident):
            return None
    nums = []
    for part in parts:
        if not _GO_INT.fullmatch(part):
            return None
        value = int(part)
        if not -(2**63) <= value < 2**63:
            return None
        nums.append(value)
    return nums[0], nums[1], nums[2], pre, metadata


_ACCEPTED = {parse_semver(v): v for v in ACCEPTED_VERSIONS}


def match_version(text: str) -> tuple[str | None, str | None]:
    """(accepted version, None) or (None, the error text) for an `ignition.version` string."""
    parsed = parse_semver(text)
    if parsed is None:
        return None, MSG_BAD_VERSION
    version = _ACCEPTED.get(parsed)
    if version is None:
        return None, MSG_UNSUPPORTED
    return version, None


def _fold_all(obj: dict[str, Any], name: str) -> list[tuple[str, Any]]:
    """Every (key, value) Go's case-insensitive field lookup feeds into field `name`, in document order."""
    pairs = obj.pairs if type(obj) is DupDict else obj.items()
    return [(key, val) for key, val in pairs if key == name or (isinstance(key, str) and key.lower() == name)]


def version_stub(doc: Any) -> tuple[str | None, Entry | None]:
    """Ignition's util.GetConfigVersion (unmarshal only ignition.version): (the text, None) or (None, the
    json-type error, at the key as spelt)."""
    if doc is None:
        return "", None
    if not isinstance(doc, dict):
        kind = json_kind(doc)
        return None, Entry(ERROR, "json-type", (), f"json: cannot unmarshal {kind} into Go value of type util.versionStub")
    version = ""
    # a repeated key decodes into the same struct, as in Go
    for ign_key, ign in _fold_all(doc, "ignition"):
        if ign is None:
            continue
        if not isinstance(ign, dict):
            return None, Entry(
                ERROR,
                "json-type",
                (ign_key,),
                f"json: cannot unmarshal {json_kind(ign)} into Go struct field versionStub.ignition of type struct",
            )
        for key, value in _fold_all(ign, "version"):
            if value is None:
                continue
            if type(value) is not str:
                return None, Entry(
                    ERROR,
                    "json-type",
                    (ign_key, key),
                    f"json: cannot unmarshal {json_kind(value)} into Go struct field .Ignition.Version of type string",
                )
            version = value
    return version, None


def config_version(doc: Any) -> tuple[str | None, Entry | None]:
    """(the accepted version `doc` declares, None) or (None, the error entry: json-type, version-invalid or
    version-unsupported)."""
    text, error = version_stub(doc)
    if error is not None or text is None:
        return None, error
    version, problem = match_version(text)
    if version is None:
        code = "version-invalid" if problem == MSG_BAD_VERSION else "version-unsupported"
        return None, Entry(ERROR, code, ("ignition", "version"), problem or "")
    return version, None
