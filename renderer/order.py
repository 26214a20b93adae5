"""Merge order of a pool's MachineConfigs (MCO `pkg/controller/common/helpers.go`: MergeMachineConfigs).

MachineConfigs labelled `role: worker` come first, then all the others, each group sorted by name
byte-wise (Go string order). So in a custom pool every custom-role MachineConfig overrides every
worker one whatever the names (`50-infra` after `99-worker-x`); for master and worker pools this is
plain name order. Later wins.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from renderer.model import ROLE_LABEL, MachineConfig

# Code point order is UTF-8 byte order (Go's string order), so names sort as they are.
_NAME = attrgetter("name")


def merge_order(configs: Iterable[MachineConfig]) -> list[MachineConfig]:
    """Worker-role MachineConfigs by name, then the rest by name."""
    workers: list[MachineConfig] = []
    others: list[MachineConfig] = []
    for c in configs:
        (workers if c.labels.get(ROLE_LABEL) == "worker" else others).append(c)
    workers.sort(key=_NAME)
    others.sort(key=_NAME)
    return workers + others
