"""The name of a rendered config: `rendered-<pool>-<hash>` (MCO `pkg/controller/render/hash.go`).

Algorithm (stable across runs, machines and Python versions):
    data = canonical JSON of the merged spec, `MachineConfigSpec.to_dict()`: the seven fields
           (config, osImageURL, baseOSExtensionsContainerImage, kernelArguments, extensions, fips,
           kernelType), object keys sorted at every level, no whitespace (`,` and `:` separators),
           non-ASCII written as UTF-8, lists in their merged order;
    hash = MD5(SALT || data), as 32 lowercase hex digits, where SALT is the MCO's fixed 80 bytes.
So the hash changes if and only if the merged spec changes (key order and formatting cannot change it;
any value, list order, or field does). The pool name is not hashed: two pools with the same merged
spec get the same suffix, as in the MCO. Names and sources (which MachineConfigs were merged) are not
part of the spec, so renaming a MachineConfig without changing what it sets keeps the name.
The serialisation is not Go's, so hashes differ from a real cluster's for the same spec.
"""

from __future__ import annotations

import hashlib

from fleet.rendered import RENDERED_PREFIX, MachineConfigSpec
from ignition.canonical import canonical_json

SALT = bytes([
    16, 124, 206, 228, 139, 56, 175, 175, 79, 229, 134, 118, 157, 154, 211, 110, 25, 93, 47, 253,
    172, 106, 37, 7, 174, 13, 160, 185, 110, 17, 87, 52, 219, 131, 12, 206, 218, 141, 116, 135,
    188, 181, 192, 151, 233, 62, 126, 165, 64, 83, 179, 119, 15, 168, 208, 197, 146, 107, 58, 227,
    133, 188, 238, 26, 33, 26, 235, 202, 32, 173, 31, 234, 41, 144, 148, 79, 6, 206, 23, 22,
])
assert len(SALT) == 80


def spec_bytes(spec: MachineConfigSpec) -> bytes:
    """The canonical serialisation that is hashed."""
    return canonical_json(spec.to_dict())


def spec_hash(spec: MachineConfigSpec, data: bytes | None = None) -> str:
    """32 hex digits: MD5 over the salt and the canonical spec (`data`: its `spec_bytes`, if already made)."""
    digest = hashlib.md5(SALT, usedforsecurity=False)
    digest.update(spec_bytes(spec) if data is None else data)  # (no copy of a big pool's bytes behind the salt)
    return digest.hexdigest()


def rendered_name(pool: str, spec: MachineConfigSpec, data: bytes | None = None) -> str:
    """`rendered-<pool>-<hash>` (`data` as in `spec_hash`)."""
    return f"{RENDERED_PREFIX}{pool}-{spec_hash(spec, data)}"
