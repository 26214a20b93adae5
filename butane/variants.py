"""Which Butane variant/version maps to which Butane base schema and Ignition spec (coreos/butane `docs/specs.md`).

fcos 1.0-1.7 (+1.8.0-experimental), openshift 4.8-4.22 (+4.23.0-experimental; 4.8-4.13 build on fcos 1.3,
4.14-4.18 on fcos 1.5, 4.19+ on fcos 1.6), flatcar 1.0-1.1, r4e 1.0-1.1, fiot 1.0 (+ their experimentals).

Each Butane spec is a base schema (v0_N, the snake_case mirror of one Ignition spec plus sugar) plus
variant sugar. Released specs are frozen: a version's table row never changes, new versions get new rows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    """One Butane spec version: its base schema, the Ignition spec it emits and variant-specific switches."""

    variant: str
    version: str
    base: int  # base schema v0_<base>
    ignition: str  # Ignition spec version written to ignition.version
    fcos_minor: int  # the fcos spec the variant builds on (1.<fcos_minor>.0)
    openshift_minor: int = 0  # 4.<minor> for the openshift variant

    @property
    def package(self) -> str:
        """Go package name of the base schema, as it appears in Butane's type errors."""
        return f"v0_{self.base}"

    @property
    def is_openshift(self) -> bool:
        """True for the openshift variant (MachineConfig output)."""
        return self.variant == "openshift"


_FCOS: dict[str, tuple[int, str, int]] = {
    "1.0.0": (1, "3.0.0", 0),
    "1.1.0": (2, "3.1.0", 1),
    "1.2.0": (3, "3.2.0", 2),
    "1.3.0": (3, "3.2.0", 3),
    "1.4.0": (4, "3.3.0", 4),
    "1.5.0": (5, "3.4.0", 5),
    "1.6.0": (6, "3.5.0", 6),
    "1.7.0": (7, "3.6.0", 7),
    "1.8.0-experimental": (8, "3.7.0-experimental", 8),
}


def _openshift_row(minor: int) -> tuple[int, str, int]:
    if minor <= 13:
        return _FCOS["1.3.0"]
    if minor <= 18:
        return _FCOS["1.5.0"]
    return _FCOS["1.6.0"]


def _build() -> dict[tuple[str, str], Spec]:
    table: dict[tuple[str, str], Spec] = {}
    for version, (base, ign, fminor) in _FCOS.items():
        table[("fcos", version)] = Spec("fcos", version, base, ign, fminor)
    for minor in range(8, 23):
        base, ign, fminor = _openshift_row(minor)
        version = f"4.{minor}.0"
        table[("openshift", version)] = Spec("openshift", version, base, ign, fminor, minor)
    for version, base, ign in (
        ("1.0.0", 4, "3.3.0"),
        ("1.1.0", 5, "3.4.0"),
        ("1.2.0-experimental", 8, "3.7.0-experimental"),
    ):
        table[("flatcar", version)] = Spec("flatcar", version, base, ign, 0)
    for variant, version, base, ign in (
        ("r4e", "1.0.0", 4, "3.3.0"),
        ("r4e", "1.1.0", 5, "3.4.0"),
        ("r4e", "1.2.0-experimental", 8, "3.7.0-experimental"),
        ("fiot", "1.0.0", 5, "3.4.0"),
        ("fiot", "1.1.0-experimental", 8, "3.7.0-experimental"),
    ):
        table[(variant, version)] = Spec(variant, version, base, ign, 0)
    base, ign, fminor = _FCOS["1.8.0-experimental"]
    table[("openshift", "4.23.0-experimental")] = Spec(
        "openshift", "4.23.0-experimental", base, ign, fminor, 23
    )
    return table


SPECS: dict[tuple[str, str], Spec] = _build()


def parse_semver(text: str) -> str | None:
    """The canonical `X.Y.Z[-pre]` of a version string as coreos/go-semver prints it, or None if invalid."""
    core, _, build = text.partition("+")
    core, dash, pre = core.partition("-")
    parts = core.split(".")
    if len(parts) != 3 or not all(p.isdigit() and p.isascii() for p in parts):
        return None
    if dash and not pre:
        return None
    for ident in pre.split(".") if pre else []:
        if not ident or not all(c.isalnum() and c.isascii() or c == "-" for c in ident):
            return None
    numbers = [str(int(p)) for p in parts]
    out = ".".join(numbers)
    if pre:
        out += "-" + pre
    if build:
        out += "+" + build
    return out


def lookup(variant: str, version: str) -> Spec | None:
    """The spec for a variant and canonical version, or None when Butane has no translator for it."""
    return SPECS.get((variant, version))
