"""Butane sugar: `.bu` documents (variants fcos and openshift) -> Ignition configs and MachineConfigs.

Pipeline (one module per step): yamlsrc (YAML with positions, go-yaml's scalar rules) -> variants/schema
(which spec, which fields) -> decode (values, type errors, unused keys) -> translate (checks, base copy,
leaf sugar) -> systemd / trees / openshift (structural sugar) -> output (Go JSON, go-yaml YAML).
"""

from __future__ import annotations

from ignition.butane.errors import ButaneError
from ignition.butane.transpile import STRICT_MESSAGE, ButaneResult, transpile

__all__ = ["ButaneError", "ButaneResult", "STRICT_MESSAGE", "transpile"]
