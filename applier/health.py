"""The health gate after an update: a node reports Done only once its health checks have passed for the pool's soak
time (docs/rollouts.md). Until then it reports Working (it keeps its rollout slot); a failing check reports
Degraded, which pauses the pool's rollout (fleet/rollout_gates.py).

The pool's gate comes with the desired config (`rollout` in the server's answer, kept on the config in the
`HEALTH_ANNOTATION`, applier/fetch.py). A pool without one reports Done at once, as before. The checks:
- the default: `systemctl is-system-running` answers `running`, or `degraded` with only units the pool allows
  failed (run only on the live system, `--root /`: a node root elsewhere has no running systemd to ask);
- each check the pool names: a command (exit status 0 passes; run with `MCO_ROOT` set to the agent's root and a
  30 s limit) or an HTTP URL that must answer the expected status.
Its results are phases of the update's timeline (fleet/phases.py): `health-checked` (detail: soaking until when,
then passed), then `done`; a failure is `degraded` naming `health-checked`. While soaking, and once failed, the node reports the config it came from as its currentConfig, with the new one
as desiredConfig: the rollout counts it as still moving (its slot held; a failure pauses the pool), and a
`mco rollout revert` to that config is, for the server, no move at all; the agent then puts the old config
back as any update. The soak state (`soak.json` in the state directory) survives a restart of the agent.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from applier.reporting import Reporting
from applier.settings import SyncResult
from applier.state import StateDir
from fleet.clock import Clock, system_clock, timestamp
from fleet.rendered import RenderedConfig
from fleet.rollout_settings import HEALTH_ANNOTATION, HealthCheck

CHECK_TIMEOUT = 30.0


@dataclass(frozen=True)
class HealthGate:
    """A pool's gate: how long the checks must pass, and which checks."""

    soak_seconds: int
    checks: tuple[HealthCheck, ...]
    allowed_failed_units: tuple[str, ...] = ()

    @classmethod
    def of(cls, config: RenderedConfig) -> HealthGate | None:
        """The gate the config carries (None: report Done at once)."""
        raw = config.annotations.get(HEALTH_ANNOTATION)
        if not raw:
            return None
        try:
            data = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(data, Mapping):
            return None
        checks = tuple(HealthCheck(str(c.get("name", "")), command=tuple(str(a) for a in c.get("command") or ()),
                                   url=str(c.get("url", "")), status=int(c.get("status", 200)))
                       for c in data.get("healthChecks") or () if isinstance(c, Mapping))
        allowed = tuple(str(u) for u in data.get("allowedFailedUnits") or ())
        return cls(int(data.get("soakSeconds", 0) or 0), checks, allowed)


def check_failure(check: HealthCheck, *, root: Path) -> str | None:
    """Why one check fails (None: it passes)."""
    if check.command:
        try:
            done = subprocess.run(check.command, env={**os.environ, "MCO_ROOT": str(root)}, capture_output=True,
                                  timeout=CHECK_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"health check {check.name}: {type(exc).__name__}: {exc}"
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).decode(errors="replace").strip()[-200:]
            return f"health check {check.name}: exit status {done.returncode}" + (f": {tail}" if tail else "")
        return None
    try:
        with urllib.request.urlopen(check.url, timeout=CHECK_TIMEOUT) as answer:  # noqa: S310 (the pool's own URL)
            status = answer.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (OSError, ValueError) as exc:
        return f"health check {check.name}: {check.url}: {exc}"
    return None if status == check.status else f"health check {check.name}: {check.url} answered {status}, " \
                                                f"expected {check.status}"


def systemd_failure(state: str, failed: Sequence[str], allowed: Collection[str]) -> str | None:
    """The default check's verdict: systemd `running`, or `degraded` with only allowed units failed (None: passes)."""
    if state == "running":
        return None
    if state == "degraded":
        others = [u for u in failed if u not in allowed]
        if failed and not others:
            return None
        if others:
            return f"health check systemd: the system is degraded: {', '.join(others)} failed"
    return f"health check systemd: the system is {state or 'unknown'}, not running"


def _systemctl(*args: str) -> str:
    return subprocess.run(["systemctl", *args], capture_output=True, timeout=CHECK_TIMEOUT,
                          check=False).stdout.decode(errors="replace")


def gate_failure(gate: HealthGate, *, root: Path) -> str | None:
    """The first failing check of the gate, the default check first on the live system (None: all pass)."""
    if root == Path("/"):
        try:
            state = _systemctl("is-system-running").strip()
            failed = [line.split()[0] for line in _systemctl("list-units", "--state=failed", "--plain",
                                                             "--no-legend").splitlines() if line.split()] \
                if state == "degraded" else []
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"health check systemd: {exc}"
        problem = systemd_failure(state, failed, gate.allowed_failed_units)
        if problem:
            return problem
    for check in gate.checks:
        failure = check_failure(check, root=root)
        if failure:
            return failure
    return None


@dataclass(eq=False)
class Health:
    """The gate's steps, shared by the update without reboot (applier/updating.py) and the one verified after its
    reboot (applier/verifying.py): the soak state in `state`, the checks run under `root`."""

    root: Path
    state: StateDir
    reporting: Reporting
    clock: Clock = system_clock

    def gated_done(self, config: RenderedConfig, previous: str, message: str, **kw: Any) -> SyncResult:
        """Done for `config`, unless its pool gates it: then the soak starts (and its first check runs)."""
        if HealthGate.of(config) is None:
            return self.reporting.result("Done", message, config, config.name, **kw)
        self.state.set_soak({"name": config.name, "previous": previous, "since": self.clock().timestamp(),
                             "message": message})
        return self.soak_step(config)

    def soak_step(self, config: RenderedConfig) -> SyncResult:
        """One look at a soaking node: Degraded on a failing check, Working until the soak time has passed, Done."""
        soak = self.state.soak() or {}
        gate = HealthGate.of(config) or HealthGate(0, ())
        previous = str(soak.get("previous", ""))
        failed = soak.get("failed")
        if not failed:
            failed = gate_failure(gate, root=self.root)
            if failed:
                self.state.set_soak({**soak, "failed": failed})
        if failed:
            return self.reporting.report_as(previous, config, "Degraded", f"{failed} (config {config.name})",
                                            ("degraded", "health-checked"))
        ends = float(soak.get("since", 0)) + gate.soak_seconds
        if self.clock().timestamp() < ends:
            until = timestamp(datetime.fromtimestamp(ends, UTC))
            return self.reporting.report_as(previous, config, "Working", f"health checks pass; soaking until {until}",
                                            ("health-checked", f"soaking until {until}"))
        self.reporting.report_as(previous, config, "Working", "health checks passed", ("health-checked", "passed"))
        self.state.clear_soak()
        self.reporting.phase = "health-checked"  # `result` then reports the update's `done` phase (fleet/phases.py)
        message = f"{soak.get('message', '')}; health checks passed for {gate.soak_seconds}s"
        return self.reporting.result("Done", message, config, config.name, changed=True)
