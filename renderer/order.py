"""Merge order of a pool's MachineConfigs (MCO `MergeMachineConfigs`, notes/mco.md §2.3).

MachineConfigs labelled `role: worker` come first, then all the others, each group sorted by name
byte-wise (Go string order). So in a custom pool every custom-role MachineConfig overrides every
worker one whatever the names (`50-infra` after `99-worker-x`); for master and worker pools this is
plain name order. Later wins.
"""

from __future__ import annotations

from collections.abc import Iterable

from renderer.model import MachineConfig


def merge_order(configs: Iterable[MachineConfig]) -> list[MachineConfig]:
    """Worker-role MachineConfigs by name, then the rest by name."""
    configs = list(configs)
    workers = sorted((c for c in configs if c.role == "worker"), key=lambda c: c.name.encode())
    others = sorted((c for c in configs if c.role != "worker"), key=lambda c: c.name.encode())
    return workers + others
