"""Kubernetes resource quantities (`8Ki`, `1G`, `-1`, `1.5e3`, `500m`) read as Kubernetes reads them.

k8s.io/apimachinery `resource.ParseQuantity`: an optional sign, a decimal number (`5`, `5.`, `.5`,
`5.5`), then one suffix: binary SI (`Ki` ... `Ei`), decimal SI (`m`, none, `k`, `M`, `G`, `T`, `P`, `E`) or a
decimal exponent (`e3`, `E-2`). `Quantity.Value()` is the integer value rounded up (towards +infinity),
held to int64. A JSON/YAML number is read as its text, as Quantity's UnmarshalJSON does.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

# one pass, no nested repetition: linear on any input
_QUANTITY = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|m|k|M|G|T|P|E)?")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"m": Fraction(1, 1000), "": Fraction(1), "k": Fraction(10**3), "M": Fraction(10**6),
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


def parse_quantity(value: Any) -> int | None:
    """`Quantity.Value()` of a manifest value, or None when Kubernetes would refuse it (`quantities must
    match the regular expression ...`)."""
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
        number *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        number *= _DECIMAL[suffix]
    else:
        exponent = int(suffix[1:])
        if abs(exponent) > 40:
            return None
        number *= Fraction(10) ** exponent
    if sign == "-":
        number = -number
    return max(_INT64[0], min(_INT64[1], math.ceil(number)))
