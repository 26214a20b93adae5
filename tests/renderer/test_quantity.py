"""renderer/quantity.py: Kubernetes quantities read (`Quantity.Value()`) and written (`Quantity.String()`) as
k8s.io/apimachinery `pkg/api/resource/quantity.go` does (`ParseQuantity`, `CanonicalizeBytes`); the cases follow
its quantity_test.go (`TestQuantityParse`, `TestQuantityString`, `TestQuantityParseZero`)."""

from __future__ import annotations

from typing import Any

import pytest

from renderer.quantity import parse_quantity, quantity_string

# (manifest value, Quantity.Value(), Quantity.String())
CASES: list[tuple[Any, int | None, str | None]] = [
    ("0", 0, "0"),
    ("0Mi", 0, "0"),
    ("1", 1, "1"),
    ("1000", 1000, "1k"),
    ("100000", 100000, "100k"),
    ("2048", 2048, "2048"),
    ("1.5", 2, "1500m"),
    ("0.1", 1, "100m"),
    ("1000m", 1, "1"),
    ("1500m", 2, "1500m"),
    ("500u", 1, "500u"),
    ("1n", 1, "1n"),
    ("0.0000000001", 1, "1n"),  # below a nano: rounded up to one
    ("8k", 8000, "8k"),
    ("1.5G", 1_500_000_000, "1500M"),
    ("1E", 10**18, "1E"),
    ("8Ki", 8192, "8Ki"),
    ("0.5Ki", 512, "512"),  # binary below 1024 is written decimal
    ("1.5Ki", 1536, "1536"),  # a whole number, no power of 1024 divides it
    ("1023Ki", 1_047_552, "1023Ki"),
    ("1024Mi", 2**30, "1Gi"),
    ("1.5Gi", 1_610_612_736, "1536Mi"),
    ("10Gi", 10 * 2**30, "10Gi"),
    ("1e3", 1000, "1e3"),
    ("1.5e3", 1500, "1500"),
    ("12e6", 12_000_000, "12e6"),
    ("-1", -1, "-1"),
    ("-1G", -(10**9), "-1G"),
    (8192, 8192, "8192"),  # a YAML number, read as its text
    (1.5, 2, "1500m"),
    ("lots", None, None),
    ("1Kib", None, None),
    (".", None, None),
    (True, None, None),
]


@pytest.mark.parametrize(("value", "number", "text"), CASES, ids=[repr(c[0]) for c in CASES])
def test_quantities_read_and_written_as_kubernetes_does(value: Any, number: int | None, text: str | None) -> None:
    assert parse_quantity(value) == number
    assert quantity_string(value) == text
