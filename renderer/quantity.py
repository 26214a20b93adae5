"""Kubernetes resource quantities (`8Ki`, `1G`, `-1`, `1.5e3`, `500m`) read as Kubernetes reads them.

k8s.io/apimachinery `resource.ParseQuantity`: an optional sign, a decimal number (`5`, `5.`, `.5`,
`5.5`), then one suffix: binary SI (`Ki` ... `Ei`), decimal SI (`n`, `u`, `m`, none, `k`, `M`, `G`, `T`, `P`, `E`) or a
decimal exponent (`e3`, `E-2`). `Quantity.Value()` is the integer value rounded up (towards +infinity),
held to int64. A JSON/YAML number is read as its text, as Quantity's UnmarshalJSON does. `Quantity.String()`, what
the MCO writes (storage.conf's overlay `size`) and quotes in its refusals, is the canonical form
(`quantity_string`): `1.5Gi` is `1536Mi`, `1000` is `1k`, `1.5G` is `1500M`.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

# one pass, no nested repetition: linear on any input
_QUANTITY = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|n|u|m|k|M|G|T|P|E)?")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6),
            "G": Fraction(10**9), "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18)}
_INT64 = (-(2**63), 2**63 - 1)


def quantity_text(value: Any) -> str | None:
    """The text a manifest value stands for as a quantity (a string, or a number's text); None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    return value if isinstance(value, str) else None


def _parsed(value: Any) -> tuple[Fraction, str] | None:
    """(the exact value, its format: "binary", "decimal" or "exponent"), or None when Kubernetes refuses it."""
    text = quantity_text(value)
    if text is None or len(text) > 100:
        return None
    m = _QUANTITY.fullmatch(text)
    if m is None:
        return None
    sign, whole, frac, suffix = m.group(1), m.group(2), m.group(3), m.group(4) or ""
    if not whole and not frac:
        return None
    number = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    if suffix in _BINARY:
        number, form = number * _BINARY[suffix], "binary"
    elif suffix in _DECIMAL:
        number, form = number * _DECIMAL[suffix], "decimal"
    else:
        exponent = int(suffix[1:])
        if abs(exponent) > 40:
            return None
        number, form = number * Fraction(10) ** exponent, "exponent"
    return (-number if sign == "-" else number), form


def parse_quantity(value: Any) -> int | None:
    """`Quantity.Value()` of a manifest value, or None when Kubernetes would refuse it (`quantities must
    match the regular expression ...`)."""
    parsed = _parsed(value)
    return None if parsed is None else max(_INT64[0], min(_INT64[1], math.ceil(parsed[0])))


_SI_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def _factors(amount: int, base: int) -> tuple[int, int]:
    """`amount` without its factors of `base`, and how many there were (apimachinery `removeInt64Factors`)."""
    times = 0
    while amount and amount % base == 0:
        amount, times = amount // base, times + 1
    return amount, times


def quantity_string(value: Any) -> str | None:
    """`Quantity.String()` of a manifest value (apimachinery `CanonicalizeBytes`), or None when it is refused.

    The value is first held to nano precision, rounded away from zero (`ParseQuantity`). Binary SI stays binary
    when it is a whole number of at least 1024 in magnitude, written with the largest power of 1024 that divides it;
    otherwise (and for decimal SI and exponents) it is an integer times a power of ten that is a multiple of three,
    written with its SI suffix (`e` and the power for an exponent).
    """
    parsed = _parsed(value)
    if parsed is None:
        return None
    number, form = parsed
    nanos = abs(number) * 10**9
    nanos_whole = math.ceil(nanos)  # away from zero, as inf.RoundUp
    sign = "-" if number < 0 else ""
    if nanos_whole == 0:
        return "0"
    if form == "binary" and nanos_whole >= 1024 * 10**9 and nanos_whole % 10**9 == 0:
        amount, power = _factors(nanos_whole // 10**9, 1024)
        if power < len(_BINARY_SUFFIX):
            return f"{sign}{amount}{_BINARY_SUFFIX[power]}"
    amount, times = _factors(nanos_whole, 10)
    exponent = times - 9
    shift = exponent % 3  # down to a multiple of three, the mantissa grown to match
    amount, exponent = amount * 10**shift, exponent - shift
    if form == "exponent":
        return f"{sign}{amount}" + (f"e{exponent}" if exponent else "")
    suffix = _SI_SUFFIX.get(exponent)
    return f"{sign}{amount}{suffix}" if suffix is not None else f"{sign}{amount}e{exponent}"
