"""The `none` backend: the OS itself is not managed here (no image, kernel argument or package changes).

Such changes are recorded as not applied and are not verified; files, units and SSH keys still are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from applier.backends.base import Deployment
from fleet.diff import ConfigDiff
from fleet.rendered import MachineConfigSpec


class NoBackend:
    """A backend that manages nothing."""

    name = "none"

    def booted(self) -> Deployment | None:
        """No deployments here."""
        return None

    def prefetch(self, new: MachineConfigSpec, old: MachineConfigSpec | None = None) -> str:
        """Nothing to pull."""
        return ""

    def stage(self, diff: ConfigDiff, old: MachineConfigSpec, new: MachineConfigSpec) -> dict[str, Any]:
        """Nothing is staged; the fields that would have been are listed."""
        return {"unmanaged": list(diff.os_changes)}

    def verify(self, spec: MachineConfigSpec, staged: dict[str, Any]) -> list[str]:
        """Nothing to check."""
        return []

    def rollback(self) -> None:
        """Nothing to roll back."""

    def next_boot(self) -> Deployment | None:
        """No deployments here."""
        return None

    def boot_watch(self) -> tuple[Path, list[Path]]:
        """Nothing to watch."""
        return Path("/"), []
