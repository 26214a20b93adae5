"""Where the desired rendered config comes from: the machine-config server, or a file.

Server: `POST /nodes/{name}/desired?pool=P&wait=S&prestage=1` (claims the node's update slot; GET only asks) ->
`{"desiredConfig": NAME}`, then `GET /rendered/{NAME}` (the stored RenderedConfig JSON), with the cluster CA and
`Authorization: Bearer <token>` when configured. An answer that keeps the node where it is may name, as `prefetch`,
the pool's target whose OS image the node may pull now, before its slot (fleet/image_pulls.py); `prestage=1` says
this agent does, so the server hands it a slot that changes its OS image only once it staged that image. With
`wait` (the agent's sync interval, at most 300 s) the server holds a "stay" answer until a slot frees for this node
or the wait ends: no polling, and a freed slot is taken at once (docs/scale-out.md).
Connection failures, 429 and 5xx answers are TemporaryErrors (retried by applier/retry.py, never sooner than an
answer's `Retry-After` asks); other 4xx are PermanentErrors.
File: the rendered MachineConfig as `mco render --pool P --print` writes it (YAML or JSON).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Protocol

import requests
import yaml

from applier.errors import PermanentError, TemporaryError
from applier.retry import retrying
from fleet.clock import system_clock
from fleet.disruption_policy import POLICY_ANNOTATION, policy_annotation
from fleet.rendered import ModelError, RenderedConfig
from fleet.rollout import MAX_HANDOUT_WAIT
from fleet.rollout_settings import HEALTH_ANNOTATION, gate_annotation

MAX_RETRY_AFTER = 3600.0  # seconds: a longer Retry-After is taken as this (the agent keeps reporting)


class DesiredSource(Protocol):
    """Answers which rendered config the node should be at."""

    def desired(self, node: str, pool: str | None, current: RenderedConfig | None) -> RenderedConfig | None:
        """The desired config (None: the source has nothing for this node)."""
        ...


def load_rendered(text: str, *, source: str) -> RenderedConfig:
    """Parse a rendered MachineConfig document (JSON, or YAML)."""
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as exc:
            raise PermanentError(source, f"not YAML or JSON: {exc}") from exc
    try:
        return RenderedConfig.from_dict(data)
    except ModelError as exc:
        raise PermanentError(source, f"not a rendered MachineConfig: {exc}") from exc


@dataclass
class FileSource:
    """The desired config from a file (re-read every sync, so editing it is a new target)."""

    path: Path

    def desired(self, node: str, pool: str | None, current: RenderedConfig | None) -> RenderedConfig | None:
        """Read and parse the file."""
        try:
            text = Path(self.path).read_text()
        except OSError as exc:
            raise PermanentError(str(self.path), f"cannot read: {exc.strerror or exc}") from exc
        return load_rendered(text, source=str(self.path))



def retry_after(value: str | None) -> float:
    """Seconds a `Retry-After` header asks to wait (delay-seconds, or an HTTP date); 0 when absent or unreadable."""
    if not value:
        return 0.0
    value = value.strip()
    if value.isdigit():
        return float(min(int(value), MAX_RETRY_AFTER))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return 0.0
    if when.tzinfo is None:
        return 0.0
    return min(max((when - system_clock()).total_seconds(), 0.0), MAX_RETRY_AFTER)


class ServerClient:
    """HTTP client for the machine-config server (one requests.Session)."""

    def __init__(self, url: str, *, ca: Path | None = None, token: str = "", node_token: str = "",
                 timeout: float = 10.0) -> None:
        """`token` goes with every request; `node_token` (the node's own, `mco certs node-token`) replaces it on
        the node routes (`/nodes/...`) and on `/rendered/...` (asked as the node: the server gives a node the
        configs it handed it, its machine's or another pool's after a relabel), while `/config/...` keeps asking
        for the pool's token (docs/server-security.md)."""
        self.url = url.rstrip("/")
        self.session = requests.Session()
        # passed on every request: a session-level `verify` loses to REQUESTS_CA_BUNDLE in the environment
        self.verify: str | bool = str(ca) if ca else True
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        self.node_headers = {"Authorization": f"Bearer {node_token}"} if node_token else {}
        self.timeout = timeout

    def request(self, method: str, path: str, *, held: float = 0.0, timeout: float | None = None,
                **kwargs: Any) -> requests.Response:
        """One request (the server may hold it `held` seconds before answering; `timeout`: this request's, not the
        client's); maps failures to TemporaryError / PermanentError naming the URL."""
        url = f"{self.url}{path}"
        limit = self.timeout if timeout is None else timeout
        timeouts = (limit, limit + held) if held else limit
        if self.node_headers and (path.startswith("/nodes/") or path.startswith("/rendered/")):
            kwargs["headers"] = {**kwargs.get("headers", {}), **self.node_headers}
        try:
            response = self.session.request(method, url, timeout=timeouts, verify=self.verify, **kwargs)
        except requests.exceptions.SSLError as exc:
            raise PermanentError(url, f"TLS error: {exc}") from exc
        except requests.RequestException as exc:
            raise TemporaryError(url, f"server unreachable: {exc.__class__.__name__}") from exc
        if response.status_code >= 500 or response.status_code == 429:
            raise TemporaryError(url, f"server answered {response.status_code}",
                                 delay=retry_after(response.headers.get("Retry-After")))
        if response.status_code >= 400:
            raise PermanentError(url, f"server answered {response.status_code}: {response.text.strip()[:200]}")
        return response

    def json(self, path: str, *, method: str = "GET", **kwargs: Any) -> Any:
        """GET (or `method`) a JSON document."""
        response = self.request(method, path, **kwargs)
        try:
            return response.json()
        except ValueError as exc:
            raise PermanentError(f"{self.url}{path}", "answer is not JSON") from exc


@dataclass
class ServerSource:
    """The desired config as the server's rollout decides it."""

    client: ServerClient
    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 8.0
    wait: float = 0.0  # seconds the server may hold a "stay" answer (the agent's interval; 0: answer at once)
    labels: str = ""  # `--node-labels k=v,...`: the labels the node registers with (kept by the server only then)
    # the target whose OS image the server let this node pull before its slot (the last answer's `prefetch`):
    # the agent stages it and stays (applier/prestage.py)
    upcoming: RenderedConfig | None = None

    def desired(self, node: str, pool: str | None, current: RenderedConfig | None) -> RenderedConfig | None:
        """Claim `/nodes/{node}/desired`, then fetch that rendered config unless it is the current one."""
        params = {"pool": pool} if pool else {}
        params["prestage"] = "1"  # a new OS image is pulled when the answer says `prefetch`, before the slot
        if self.labels:
            params["labels"] = self.labels
        held = min(max(self.wait, 0.0), MAX_HANDOUT_WAIT)
        if held:
            params["wait"] = f"{held:.3f}"

        def ask() -> Any:
            return self.client.json(f"/nodes/{node}/desired", method="POST", params=params, held=held)

        answer = retrying(ask, attempts=self.attempts, base_delay=self.base_delay, max_delay=self.max_delay)
        name = answer.get("desiredConfig") if isinstance(answer, dict) else None
        prefetch = answer.get("prefetch") if isinstance(answer, dict) else None
        self.upcoming = self.rendered(prefetch, node) if isinstance(prefetch, str) and prefetch else None
        if not name:
            return current
        if current is not None and current.name == name:
            return with_cluster_policy(current, answer)
        return with_cluster_policy(self.rendered(name, node), answer)

    def reboot_slot(self, node: str) -> str | None:
        """`POST /nodes/{node}/reboot-slot` (server/reboot_slot.py): None when the server granted a rollout slot to
        reboot in (the node's record is Working from now on), else the server's reason."""
        def ask() -> Any:
            return self.client.json(f"/nodes/{node}/reboot-slot", method="POST")

        answer = retrying(ask, attempts=self.attempts, base_delay=self.base_delay, max_delay=self.max_delay)
        if isinstance(answer, dict) and answer.get("granted") is True:
            return None
        reason = answer.get("reason") if isinstance(answer, dict) else None
        return str(reason) if reason else "the server granted no slot"

    def rendered(self, name: str, node: str) -> RenderedConfig:
        """`GET /rendered/{name}`, as `node` (with its node token, the server gives it any config it handed the
        node, whichever pool's: docs/server-security.md)."""
        params = {"node": node} if self.client.node_headers else {}

        def fetch() -> Any:
            return self.client.json(f"/rendered/{name}", params=params)

        data = retrying(fetch, attempts=self.attempts, base_delay=self.base_delay, max_delay=self.max_delay)
        try:
            return RenderedConfig.from_dict(data)
        except ModelError as exc:
            raise PermanentError(f"{self.client.url}/rendered/{name}", f"not a rendered config: {exc}") from exc


def with_cluster_policy(config: RenderedConfig, answer: Mapping[str, Any]) -> RenderedConfig:
    """`config` carrying the cluster's node disruption policy from the desired-config answer, in the annotation
    the agent reads its policy from (fleet.disruption_policy); without one in the answer, `config` as served.
    The server hands the policy beside the rendered config, so a policy-only change moves no target; the
    agent's `--policy FILE` still overrides it. The pool's health gate (`rollout`) travels the same way."""
    policy = answer.get("nodeDisruptionPolicy")
    gate = answer.get("rollout")
    if not isinstance(policy, Mapping) and not isinstance(gate, Mapping):
        return config
    annotations = {k: v for k, v in config.annotations.items() if k not in (POLICY_ANNOTATION, HEALTH_ANNOTATION)}
    if isinstance(policy, Mapping):
        annotations.update(policy_annotation({"nodeDisruptionPolicy": policy}))
    if isinstance(gate, Mapping):  # the pool's health gate (applier/health.py)
        annotations.update(gate_annotation(gate))
    return replace(config, annotations=annotations)
