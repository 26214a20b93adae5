"""Reporting the node's state (`Working` / `Done` / `Degraded`) to the server's status endpoint.

`POST /nodes/{name}/status` with `{pool, currentConfig, desiredConfig, state, message}`, retried with
backoff while the server is away. A report that still could not be delivered is kept in the state
directory (`last-report.json`, `acked: false`) and sent again on the next sync.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from applier.errors import ApplyError, TemporaryError
from applier.fetch import ServerClient
from applier.retry import retrying
from fleet.drift_events import REPORT_LIMIT, DriftEvent

MAX_MESSAGE = 2000  # the MCD truncates its reason annotation to 2000 characters
PROMPT_TIMEOUT = 1.0  # seconds a report sent while the node is drained waits for the server (`Reporter.send`)


@dataclass(frozen=True)
class NodeReport:
    """One state report."""

    node: str
    pool: str
    current: str
    desired: str
    state: str
    message: str = ""
    phase: str = ""   # the update phase entered (fleet/phases.py), "" outside an update
    detail: str = ""  # the phase's detail: the boot ID of a reboot request, the phase a failure happened in
    drift: tuple[DriftEvent, ...] = ()  # what a drift check found (fleet/drift_events.py)
    staged: str = ""  # the config whose OS image it pulled and prepared before its slot (applier/prestage.py)

    def body(self) -> dict[str, Any]:
        """The POST body (`phase` and `detail` only when set, `drift` only when there are events)."""
        body: dict[str, Any] = {"pool": self.pool, "currentConfig": self.current, "desiredConfig": self.desired,
                                "state": self.state, "message": self.message[:MAX_MESSAGE]}
        if self.phase:
            body["phase"] = self.phase
            if self.detail:
                body["detail"] = self.detail
        if self.drift:
            body["drift"] = [e.to_dict() for e in self.drift[-REPORT_LIMIT:]]
        if self.staged:
            body["staged"] = self.staged
        return body


class Reporter(Protocol):
    """Delivers reports; returns True when the receiver has it."""

    def send(self, report: NodeReport, *, prompt: bool = False) -> bool:
        """Deliver one report; `prompt`: sent while the node is drained, so it may not wait on the receiver (one
        attempt, answered within PROMPT_TIMEOUT or left undelivered: the next report carries the node's state)."""
        ...


@dataclass
class StreamReporter:
    """Writes reports as JSON lines (for `--desired FILE` runs without a server)."""

    stream: TextIO = field(default_factory=lambda: sys.stderr)

    def send(self, report: NodeReport, *, prompt: bool = False) -> bool:
        """Print the report."""
        print(json.dumps({"node": report.node, **report.body()}, sort_keys=True), file=self.stream, flush=True)
        return True



@dataclass
class HttpReporter:
    """POSTs reports to the server with retries and backoff."""

    client: ServerClient
    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 8.0
    errors: list[str] = field(default_factory=list)
    labels: Mapping[str, str] = field(default_factory=dict)  # `--node-labels`: the server keeps them only at registration

    def send(self, report: NodeReport, *, prompt: bool = False) -> bool:
        """POST; False (and the error remembered) when the server stayed away. A `prompt` report is one attempt
        that waits PROMPT_TIMEOUT at most: the node is drained, and a slow or absent server must not keep its
        workloads off it."""
        body: dict[str, Any] = {**report.body(), "labels": dict(self.labels)} if self.labels else report.body()

        def post() -> Any:
            return self.client.request("POST", f"/nodes/{report.node}/status", json=body,
                                       timeout=PROMPT_TIMEOUT if prompt else None)

        try:
            retrying(post, attempts=1 if prompt else self.attempts, base_delay=self.base_delay,
                     max_delay=self.max_delay)
        except TemporaryError as exc:
            self.errors.append(str(exc))
            return False
        except ApplyError as exc:
            self.errors.append(str(exc))
            return False
        return True
