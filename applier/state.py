"""The state directory: what the node has (`currentconfig`) and what it is moving to (`pending.json`).

Layout (default `<root>/etc/machine-config-daemon`, as the MCD's):
    currentconfig          the RenderedConfig the node is at; written only after the disk matches it
    pending.json           {config, phase: applying|rebooting, previous, staged, rebootAttempts, bootID,
                           rebootRequestedAt, dropMarkers}: bootID is the boot that requested the reboot
                           (applier/boot.py); dropMarkers the paths whose backups and stamps go at the end
    last-report.json       the last state computed, kept until the server acknowledged it
    failed.json            {name, message}: a target that was rolled back; not retried until the target changes
    orig/<path>.mcdorig    backup of a file that existed before the applier first wrote it
    noorig/<path>.mcdnoorig  stamp: the applier (or Ignition) created this path, no original to restore
Every file is written atomically, so a kill at any point leaves the old or the new version. The order of
writes (pending before touching the disk, currentconfig after) keeps the state never ahead of the disk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from applier.errors import PermanentError
from fleet.atomic import sweep_temp, write_atomic
from fleet.rendered import ModelError, RenderedConfig
from ignition.canonical import canonical_json

CURRENT = "currentconfig"
PENDING = "pending.json"
REPORT = "last-report.json"
FAILED = "failed.json"
SOAK = "soak.json"


@dataclass(frozen=True)
class Pending:
    """An update in progress."""

    config: RenderedConfig
    phase: str  # "applying" | "rebooting"
    previous: str | None = None
    staged: dict[str, Any] = field(default_factory=dict)
    reboot_attempts: int = 0
    boot_id: str = ""  # the boot that requested the reboot
    requested_at: float = 0.0  # when the reboot was last requested (seconds since the epoch)
    drop: tuple[str, ...] = ()  # paths leaving the config: their backups and stamps go once current is written

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"config": self.config.to_dict(), "phase": self.phase, "previous": self.previous,
                "staged": self.staged, "rebootAttempts": self.reboot_attempts, "bootID": self.boot_id,
                "rebootRequestedAt": self.requested_at, "dropMarkers": list(self.drop)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pending:
        """Read the JSON form."""
        return cls(config=RenderedConfig.from_dict(data["config"]), phase=str(data["phase"]),
                   previous=data.get("previous"), staged=dict(data.get("staged") or {}),
                   reboot_attempts=int(data.get("rebootAttempts") or 0), boot_id=str(data.get("bootID") or ""),
                   requested_at=float(data.get("rebootRequestedAt") or 0.0),
                   drop=tuple(str(p) for p in data.get("dropMarkers") or ()))


class StateDir:
    """Reads and writes the state files (layout in the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def ensure(self) -> None:
        """Create the directory and sweep temp files a killed run left behind."""
        try:
            self.path.mkdir(parents=True, exist_ok=True, mode=0o755)
        except OSError as exc:
            raise PermanentError(str(self.path), f"cannot create state directory: {exc}") from exc
        sweep_temp(self.path)

    def _read_json(self, name: str) -> Any:
        file = self.path / name
        try:
            raw = file.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise PermanentError(str(file), f"cannot read: {exc}") from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise PermanentError(str(file), f"corrupt state file: {exc}") from exc

    def _write_json(self, name: str, data: Any) -> None:
        file = self.path / name
        try:
            write_atomic(file, canonical_json(data) + b"\n", mode=0o644)
        except OSError as exc:
            raise PermanentError(str(file), f"cannot write state: {exc}") from exc

    def current(self) -> RenderedConfig | None:
        """The config the node is at, or None on a node never applied to."""
        data = self._read_json(CURRENT)
        if data is None:
            return None
        try:
            return RenderedConfig.from_dict(data)
        except ModelError as exc:
            raise PermanentError(str(self.path / CURRENT), f"corrupt state file: {exc}") from exc

    def set_current(self, config: RenderedConfig) -> None:
        """Record that the disk now matches `config`."""
        self._write_json(CURRENT, config.to_dict())

    def pending(self) -> Pending | None:
        """The update in progress, if any."""
        data = self._read_json(PENDING)
        if data is None:
            return None
        try:
            return Pending.from_dict(data)
        except (KeyError, TypeError, ValueError, ModelError) as exc:
            raise PermanentError(str(self.path / PENDING), f"corrupt state file: {exc}") from exc

    def set_pending(self, pending: Pending) -> None:
        """Record the update in progress (before the disk is touched)."""
        self._write_json(PENDING, pending.to_dict())

    def clear_pending(self) -> None:
        """Forget the update in progress (after currentconfig was written)."""
        try:
            (self.path / PENDING).unlink()
        except FileNotFoundError:
            pass

    def last_report(self) -> dict[str, Any] | None:
        """The last computed state, with `acked` telling whether the server has it."""
        data = self._read_json(REPORT)
        return data if isinstance(data, dict) else None

    def set_last_report(self, report: dict[str, Any]) -> None:
        """Remember the last computed state."""
        self._write_json(REPORT, report)

    def failed(self) -> dict[str, Any] | None:
        """The rolled-back target, if any."""
        data = self._read_json(FAILED)
        return data if isinstance(data, dict) else None

    def set_failed(self, name: str, message: str) -> None:
        """Remember that `name` failed verification and was rolled back."""
        self._write_json(FAILED, {"name": name, "message": message})

    def soak(self) -> dict[str, Any] | None:
        """The health gate in progress (applier/health.py): config, the one it came from, since, failure."""
        data = self._read_json(SOAK)
        return data if isinstance(data, dict) else None

    def set_soak(self, soak: dict[str, Any]) -> None:
        """Record the health gate's state."""
        self._write_json(SOAK, soak)

    def clear_soak(self) -> None:
        """The gate passed, or the node moved on."""
        (self.path / SOAK).unlink(missing_ok=True)

    def clear_failed(self) -> None:
        """Forget a rolled-back target (the pool moved on)."""
        try:
            (self.path / FAILED).unlink()
        except FileNotFoundError:
            pass

    def orig(self, path: str) -> Path:
        """Where the backup of `path` lives."""
        return self.path / "orig" / f"{path.lstrip('/')}.mcdorig"

    def noorig(self, path: str) -> Path:
        """Where the no-original stamp of `path` lives."""
        return self.path / "noorig" / f"{path.lstrip('/')}.mcdnoorig"
