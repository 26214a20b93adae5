"""A pool's rollout settings that OpenShift's MachineConfigPool has no field for, and the operator's rollout state.

The one place they are written: annotations on the MachineConfigPool under `rollout.machine-config.io/`
(docs/rollouts.md). OpenShift ignores annotations it does not know, so the manifest stays a valid
MachineConfigPool; a pool without them gets `RolloutSettings()`, stored as no field at all in its record.

| annotation | value | default |
|---|---|---|
| `order` | `oldest-first` or `newest-first` (MCO `pkg/controller/node/node_controller.go` `sortNodeList`) | oldest-first |
| `canaries` | a count (`2`) or a percentage of the pool (`5%`), picked in the rollout order | none |
| `canary-selector` | JSON `{"matchLabels": {...}}`: the nodes with these labels are the canaries | none |
| `soak` | how long a node's health checks must pass after an update before it reports Done and frees its slot; the rest of the pool moves once every canary is Done (`90s`, `10m`, `1h30m`) | 0 |
| `auto-pause` | `true`/`false`: the first failing node of a rollout pauses the pool | true |
| `auto-revert` | `true`/`false`: revert instead of pausing | false |
| `maintenance-windows` | JSON list of `{"days": ["Mon", ...], "start": "HH:MM", "duration": "3h", "timeZone": "UTC"}` | always open |
| `health-checks` | JSON list of `{"name", "command": [argv]}` or `{"name", "url", "status"}` | none |
| `allowed-failed-units` | units that may have failed when systemd says `degraded` (comma-separated) | none |
| `max-concurrent-pulls` | at most this many nodes of the pool stage an OS image at once (0: no limit) | 0 |
| `offline-grace` | how long a node whose turn has come may stay unheard of before it is passed over (`2m`) | 2m |

Parsing never raises: `parse_settings` returns the settings and `(annotation key, message)` problems, which the
renderer reports with the manifest's file:line:col. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet.maintenance_windows import Window, WindowError, parse_duration, parse_window
from ignition.canonical import canonical_json

PREFIX = "rollout.machine-config.io/"
HEALTH_ANNOTATION = PREFIX + "health"  # on a rendered config the agent keeps, never on a pool
ORDERS = ("oldest-first", "newest-first")
_COUNT_RE = re.compile(r"([0-9]{1,6})(%?)\Z")  # ASCII digits only (`\d` is any Unicode digit)
_BOOLS = {"true": True, "false": False}
KEYS = ("order", "canaries", "canary-selector", "soak", "auto-pause", "auto-revert", "maintenance-windows",
        "health-checks", "allowed-failed-units", "max-concurrent-pulls", "offline-grace")
OFFLINE_GRACE = 120  # seconds: twice the agent's default sync interval (a node asks at least that often)
MAX_OFFLINE_GRACE = 3600
_UNIT_RE = re.compile(r"[A-Za-z0-9:_.@\\-]{1,255}\.(?:service|socket|target|mount|timer|path|slice|scope|swap|device)\Z")


@dataclass(frozen=True)
class HealthCheck:
    """A check the node runs after an update: a command (exit 0 passes) or a URL answering `status`."""

    name: str
    command: tuple[str, ...] = ()
    url: str = ""
    status: int = 200

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        if self.command:
            return {"name": self.name, "command": list(self.command)}
        return {"name": self.name, "url": self.url, "status": self.status}


@dataclass(frozen=True)
class RolloutSettings:
    """One pool's settings (table in the module docstring)."""

    order: str = "oldest-first"
    canaries: str = ""
    canary_selector: Mapping[str, str] = field(default_factory=dict)
    soak_seconds: int = 0
    auto_pause: bool = True
    auto_revert: bool = False
    windows: tuple[Window, ...] = ()
    health_checks: tuple[HealthCheck, ...] = ()
    allowed_failed_units: tuple[str, ...] = ()
    max_concurrent_pulls: int = 0
    offline_grace_seconds: int = OFFLINE_GRACE

    @property
    def newest_first(self) -> bool:
        """Whether newer nodes go first."""
        return self.order == "newest-first"

    def canary_count(self, pool_size: int) -> int:
        """How many canaries a count/percentage names for a pool of this size (a percentage rounds up, so 1%
        of a small pool is still one machine)."""
        m = _COUNT_RE.match(self.canaries) if self.canaries else None
        if m is None:
            return 0
        n = int(m.group(1))
        return min(-(-n * pool_size // 100) if m.group(2) else n, pool_size)

    def health_gate(self) -> dict[str, Any]:
        """What the agent needs of these settings, handed with its desired config ({}: no gate)."""
        if not self.health_checks and not self.soak_seconds:
            return {}
        return {"soakSeconds": self.soak_seconds, "healthChecks": [c.to_dict() for c in self.health_checks],
                "allowedFailedUnits": list(self.allowed_failed_units)}

    def to_dict(self) -> dict[str, Any]:
        """The stored form: only the fields that differ from the defaults (a pool without settings stores none)."""
        out: dict[str, Any] = {}
        default = RolloutSettings()
        if self.order != default.order:
            out["order"] = self.order
        if self.canaries:
            out["canaries"] = self.canaries
        if self.canary_selector:
            out["canarySelector"] = dict(self.canary_selector)
        if self.soak_seconds:
            out["soakSeconds"] = self.soak_seconds
        if not self.auto_pause:
            out["autoPause"] = False
        if self.auto_revert:
            out["autoRevert"] = True
        if self.windows:
            out["maintenanceWindows"] = [w.to_dict() for w in self.windows]
        if self.health_checks:
            out["healthChecks"] = [c.to_dict() for c in self.health_checks]
        if self.allowed_failed_units:
            out["allowedFailedUnits"] = list(self.allowed_failed_units)
        if self.max_concurrent_pulls:
            out["maxConcurrentPulls"] = self.max_concurrent_pulls
        if self.offline_grace_seconds != OFFLINE_GRACE:
            out["offlineGraceSeconds"] = self.offline_grace_seconds
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RolloutSettings:
        """Read the stored form (written by `to_dict`, so trusted to have its shape)."""
        if not data:
            return cls()
        windows = []
        for w in data.get("maintenanceWindows") or ():
            try:
                windows.append(parse_window(w))
            except WindowError:
                continue
        return cls(
            order=str(data.get("order", "oldest-first")),
            canaries=str(data.get("canaries", "")),
            canary_selector={str(k): str(v) for k, v in (data.get("canarySelector") or {}).items()},
            soak_seconds=int(data.get("soakSeconds", 0)),
            auto_pause=bool(data.get("autoPause", True)),
            auto_revert=bool(data.get("autoRevert", False)),
            windows=tuple(windows),
            health_checks=tuple(_check_of(c) for c in data.get("healthChecks") or () if isinstance(c, Mapping)),
            allowed_failed_units=tuple(str(u) for u in data.get("allowedFailedUnits") or ()),
            max_concurrent_pulls=int(data.get("maxConcurrentPulls", 0)),
            offline_grace_seconds=int(data.get("offlineGraceSeconds", OFFLINE_GRACE)),
        )


def gate_annotation(gate: Mapping[str, Any]) -> dict[str, str]:
    """The annotation that carries a desired-config answer's health gate (`health_gate`) on the config the agent
    keeps (applier/fetch.py, applier/health.py)."""
    return {HEALTH_ANNOTATION: canonical_json(dict(gate)).decode()}


def _check_of(data: Mapping[str, Any]) -> HealthCheck:
    command = data.get("command")
    return HealthCheck(name=str(data.get("name", "")), command=tuple(str(a) for a in command or ()),
                       url=str(data.get("url", "")), status=int(data.get("status", 200)))


def _health_checks(raw: Any) -> tuple[tuple[HealthCheck, ...], str | None]:
    if not isinstance(raw, list):
        return (), "must be a JSON list of checks"
    checks: list[HealthCheck] = []
    names: set[str] = set()
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) or not item["name"]:
            return (), f"check {i}: an object with a non-empty name"
        if item["name"] in names:
            return (), f"check {i}: duplicate name {item['name']!r}"
        names.add(item["name"])
        command, url, status = item.get("command"), item.get("url"), item.get("status", 200)
        if (command is None) == (url is None):
            return (), f"check {i}: exactly one of command or url"
        if command is not None:
            if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
                return (), f"check {i}: command must be a non-empty list of strings"
            if not command[0].startswith("/"):
                return (), f"check {i}: command[0] must be an absolute path"
            checks.append(HealthCheck(item["name"], command=tuple(command)))
            continue
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            return (), f"check {i}: url must be an http:// or https:// URL"
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            return (), f"check {i}: status must be an HTTP status code"
        checks.append(HealthCheck(item["name"], url=url, status=status))
    return tuple(checks), None


def _json(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"not valid JSON: {exc}"


def parse_settings(annotations: Mapping[str, str]) -> tuple[RolloutSettings, list[tuple[str, str]]]:
    """The settings in a pool's annotations, and every problem as (annotation key, message). Unknown keys under
    the prefix are problems too (a misspelt setting must not be silently ignored)."""
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []

    def bad(key: str, message: str) -> None:
        problems.append((PREFIX + key, message))

    for full, text in annotations.items():
        if not full.startswith(PREFIX):
            continue
        key = full[len(PREFIX):]
        if key not in KEYS:
            bad(key, f"unknown rollout setting (known: {', '.join(KEYS)})")
            continue
        text = text.strip()
        if key == "order":
            if text not in ORDERS:
                bad(key, f"must be one of {', '.join(ORDERS)}, got {text!r}")
            else:
                values["order"] = text
        elif key == "canaries":
            m = _COUNT_RE.match(text)
            if m is None or (m.group(2) and int(m.group(1)) > 100):
                bad(key, f"must be a count or a percentage up to 100%, got {text!r}")
            else:
                values["canaries"] = text
        elif key == "canary-selector":
            data, err = _json(text)
            labels = data.get("matchLabels") if isinstance(data, Mapping) else None
            if err or not isinstance(labels, Mapping) or not labels or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in labels.items()) or set(data) != {"matchLabels"}:
                bad(key, err or 'must be {"matchLabels": {"label": "value", ...}} with at least one label')
            else:
                values["canary_selector"] = dict(labels)
        elif key in ("soak", "offline-grace"):
            seconds = parse_duration(text)
            if seconds is None:
                bad(key, f"must be a duration such as 90s, 10m or 1h30m, got {text!r}")
            elif key == "offline-grace" and not 1 <= seconds <= MAX_OFFLINE_GRACE:
                bad(key, f"must be from 1s to 1h (an offline node must not hold the pool longer), got {text!r}")
            else:
                values["soak_seconds" if key == "soak" else "offline_grace_seconds"] = seconds
        elif key in ("auto-pause", "auto-revert"):
            if text not in _BOOLS:
                bad(key, f"must be true or false, got {text!r}")
            else:
                values[key.replace("-", "_")] = _BOOLS[text]
        elif key == "maintenance-windows":
            data, err = _json(text)
            if err or not isinstance(data, list) or not data:
                bad(key, err or "must be a non-empty JSON list of windows")
                continue
            try:
                values["windows"] = tuple(parse_window(w) for w in data)
            except WindowError as exc:
                bad(key, str(exc))
        elif key == "health-checks":
            data, err = _json(text)
            checks, problem = _health_checks(data) if err is None else ((), err)
            if problem:
                bad(key, problem)
            else:
                values["health_checks"] = checks
        elif key == "allowed-failed-units":
            units = tuple(u.strip() for u in text.split(",") if u.strip())
            wrong = [u for u in units if not _UNIT_RE.match(u)]
            if not units or wrong:
                bad(key, f"must be a comma-separated list of unit names, got {(wrong or [text])[0]!r}")
            else:
                values["allowed_failed_units"] = units
        elif key == "max-concurrent-pulls":
            if not text.isdigit() or len(text) > 6:
                bad(key, f"must be a non-negative integer, got {text!r}")
            else:
                values["max_concurrent_pulls"] = int(text)
    if "canaries" in values and "canary_selector" in values:
        bad("canaries", "give canaries or canary-selector, not both")
    return RolloutSettings(**values), problems
