"""Butane sugar: `.bu` documents (fcos, openshift; also flatcar, r4e, fiot) -> Ignition configs / MachineConfigs.

Pipeline (one module per step): yamlsrc (YAML with positions, go-yaml's scalar rules) -> variants/schema
(which spec, which fields) -> decode (values, type errors, unused keys) -> translate (checks, base copy,
leaf sugar: files.py for local files and data URLs, goflate.py for Go's gzip) -> systemd / trees /
bootdevice / openshift (structural sugar) -> output (Go JSON, go-yaml YAML). report.py holds the problems
with YAML paths and line:col, messages.py Butane's texts.
"""

from __future__ import annotations

from butane.errors import ButaneError
from butane.transpile import STRICT_MESSAGE, ButaneResult, transpile

__all__ = ["ButaneError", "ButaneResult", "STRICT_MESSAGE", "transpile"]
