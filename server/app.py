"""The aiohttp application: routes over the current snapshot and the store.

Status codes (never a blanket 500):
  200 config / JSON      304 If-None-Match matched      400 bad pool name, Accept or report body
  403 address or token refused (no config bytes)          404 unknown pool, node or rendered config
  405 method not allowed 406 spec version unsatisfiable  413 body too large
  503 not ready (no good render yet) or the store failed (Ignition retries 5xx)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from fleet.rendered import ModelError, NodeStatus, PoolRecord
from fleet.store import NotFound, Store, StoreError, valid_name
from server.accesslog import LOG_NOTE
from server.answer_bytes import SERVER_NAME
from server.auth import AccessPolicy, Refused
from server.fleetpage import add_fleet_page
from server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from server.metrics import ServerMetrics
from server.respond import JSON, ConfigResponder, error_body
from server.settings import ServerSettings
from server.state import ServerState
from server.status import StatusReportError, parse_report, pool_status

STATE: web.AppKey[ServerState] = web.AppKey("state", ServerState)
STORE: web.AppKey[Any] = web.AppKey("store", object)
METRICS: web.AppKey[ServerMetrics] = web.AppKey("metrics", ServerMetrics)
SETTINGS: web.AppKey[ServerSettings] = web.AppKey("settings", ServerSettings)

_JSON = JSON
DesiredFn = Callable[[str, PoolRecord, Sequence[NodeStatus]], "str | None"]


def _error(status: int, code: str, message: str, path: str = "") -> web.Response:
    return web.Response(status=status, body=error_body(code, message, path), content_type=_JSON)


class Handlers:
    """Route handlers; dependencies come in through the constructor (one composition root: run.py)."""

    def __init__(self, *, state: ServerState, store: Store, settings: ServerSettings, metrics: ServerMetrics,
                 desired_for: DesiredFn | None = None, clock: Callable[[], datetime] | None = None) -> None:
        self.state = state
        self.store = store
        self.settings = settings
        self.policy: AccessPolicy = settings.policy
        self.metrics = metrics
        self._desired_for = desired_for
        self.clock = clock or (lambda: datetime.now(UTC))
        self.responder = ConfigResponder(state=state, policy=settings.policy, metrics=metrics,
                                         default_version=settings.default_version)

    # -- /config/{pool}: the hot path (decided in respond.py; connection.py answers most of them itself) --
    async def config(self, request: web.Request) -> web.StreamResponse:
        """Ignition for a pool, in the negotiated spec version."""
        answer = self.responder.answer(request.method, request.match_info["pool"], request.headers, request.remote)
        request[LOG_NOTE] = answer.note
        return web.Response(status=answer.status, body=answer.body or None, headers=answer.headers)

    # -- health and metrics --------------------------------------------------------------------------
    async def healthz(self, request: web.Request) -> web.Response:
        """200 once a good render is served; 503 before (or while the store is unreadable at start)."""
        feed = f" ({self.state.feed.health().text()})" if self.state.feed is not None else ""
        if self.state.ready:
            return web.Response(text=f"ok{feed}\n")
        return web.Response(status=503, text=f"not ready: {self.state.store_error or 'no good render yet'}{feed}\n")

    async def metrics_page(self, request: web.Request) -> web.Response:
        """Prometheus text exposition."""
        body = self.metrics.exposition()
        response = web.Response(body=body)
        response.headers["Content-Type"] = METRICS_CONTENT_TYPE
        return response

    # -- pools and node status -----------------------------------------------------------------------
    def _address(self, request: web.Request) -> web.Response | None:
        try:
            self.policy.check_address(request.remote)
        except Refused as exc:
            request[LOG_NOTE] = {"refused": exc.reason}
            return _error(403, "forbidden", "forbidden")
        return None

    async def pools(self, request: web.Request) -> web.Response:
        """Every pool's MachineConfigPool-style status."""
        if (refused := self._address(request)) is not None:
            return refused
        try:
            items = await asyncio.to_thread(self._pool_statuses, None)
        except StoreError as exc:
            return _error(503, "store", str(exc), exc.path)
        body = {"kind": "MachineConfigPoolList", "items": items, "renderErrors": list(self.state.render_errors)}
        return web.json_response(body)

    async def pool(self, request: web.Request) -> web.Response:
        """One pool's status."""
        if (refused := self._address(request)) is not None:
            return refused
        name = request.match_info["pool"]
        if not valid_name(name):
            return _error(400, "invalid-pool-name", "pool name must be a lowercase DNS name", "path pool")
        try:
            items = await asyncio.to_thread(self._pool_statuses, name)
        except NotFound:
            return _error(404, "unknown-pool", f"no pool {name!r}", "path pool")
        except StoreError as exc:
            return _error(503, "store", str(exc), exc.path)
        return web.json_response(items[0])

    def _pool_statuses(self, only: str | None) -> list[dict[str, Any]]:
        names = [only] if only else self.store.list_pools()
        records = [self.store.get_pool(n) for n in names]
        nodes = self.store.list_node_status()
        return [pool_status(r, nodes) for r in records]

    async def node_status(self, request: web.Request) -> web.Response:
        """A node reports `{pool, currentConfig, desiredConfig, state, message}`; stored, then echoed."""
        if (refused := self._address(request)) is not None:
            return refused
        node = request.match_info["name"]
        if not valid_name(node):
            return _error(400, "invalid-node-name", "node name must be a lowercase DNS name", "path name")
        try:
            body = json.loads(await request.read())
        except ValueError as exc:
            return _error(400, "json", f"body is not JSON: {exc}", "$")
        try:
            status = parse_report(node, body, reported_at=self.clock().strftime("%Y-%m-%dT%H:%M:%SZ"))
        except StatusReportError as exc:
            return _error(400, "invalid-report", exc.message, exc.path)
        request[LOG_NOTE] = {"pool": status.pool, "node": node, "state": status.state}
        try:
            self.policy.check_token(status.pool, list(request.headers.getall("Authorization", [])))
        except Refused as exc:
            request[LOG_NOTE]["refused"] = exc.reason
            return _error(403, "forbidden", "forbidden")
        try:
            await asyncio.to_thread(self._store_status, status)
        except NotFound:
            return _error(404, "unknown-pool", f"no pool {status.pool!r}", "$.pool")
        except StoreError as exc:
            return _error(503, "store", str(exc), exc.path)
        snapshot = self.state.snapshot
        entry = snapshot.pools.get(status.pool) if snapshot is not None else None
        target = entry.record.current if entry is not None else None
        if entry is not None and (entry.held_back or status.state != "Done" or status.current_config != target):
            self.state.wake.set()  # this report may hold back or release the target for booting nodes
        return web.json_response(status.to_dict())

    def _store_status(self, status: NodeStatus) -> None:
        self.store.get_pool(status.pool)  # NotFound for an unknown pool
        self.store.put_node_status(status)

    async def desired(self, request: web.Request) -> web.Response:
        """`{"desiredConfig": NAME, "pool": P}`: where the rollout says this node should go now, with the
        cluster's `nodeDisruptionPolicy` when it has one (the agent applies it on every update)."""
        if (refused := self._address(request)) is not None:
            return refused
        node = request.match_info["name"]
        if not valid_name(node):
            return _error(400, "invalid-node-name", "node name must be a lowercase DNS name", "path name")
        pool = request.query.get("pool", "")
        if pool and not valid_name(pool):
            return _error(400, "invalid-pool-name", "pool name must be a lowercase DNS name", "query pool")
        try:
            answer = await asyncio.to_thread(self._desired, node, pool, list(request.headers.getall("Authorization", [])))
        except Refused as exc:
            request[LOG_NOTE] = {"refused": exc.reason}
            return _error(403, "forbidden", "forbidden")
        except NotFound as exc:
            return _error(404, "not-found", str(exc), exc.path)
        except StoreError as exc:
            return _error(503, "store", str(exc), exc.path)
        except ValueError as exc:  # the pool's maxUnavailable is unusable (RolloutError)
            return _error(503, "pool-spec", str(exc), getattr(exc, "path", ""))
        except _MissingPool:
            return _error(400, "missing-pool", "pool query parameter required for a node that never reported",
                          "query pool")
        if answer["desiredConfig"] is None:
            return _error(503, "not-ready", f"pool {answer['pool']} has no rendered config yet")
        return web.json_response(answer)

    def _desired(self, node: str, pool: str, authorization: Sequence[str]) -> dict[str, Any]:
        answer: dict[str, Any] = {}

        def decide(statuses: list[NodeStatus]) -> NodeStatus | None:
            mine = next((s for s in statuses if s.name == node), None)
            chosen = pool or (mine.pool if mine is not None else "")
            if not chosen:
                raise _MissingPool()
            self.policy.check_token(chosen, authorization)
            record = self.store.get_pool(chosen)
            if self._desired_for is not None:
                desired = self._desired_for(node, record, statuses)
            else:
                from fleet.rollout import desired_for

                desired = desired_for(node, record, statuses)
            answer.update(desiredConfig=desired, pool=chosen)
            if record.disruption_policy is not None:  # the cluster's current policy, beside the target
                answer["nodeDisruptionPolicy"] = record.disruption_policy
            if desired and desired == record.current and (mine is None or mine.desired_config != desired):
                # Record the hand-out before answering, so the next node sees this one as busy.
                now = self.clock().strftime("%Y-%m-%dT%H:%M:%SZ")
                return (replace(mine, pool=chosen, desired_config=desired, reported_at=now) if mine is not None
                        else NodeStatus(node, chosen, "", desired, "Working", "handed out desired config", now))
            return None

        # One claim at a time across threads, worker processes and replicas (the store's lock or CAS).
        self.store.claim_node(node, decide)
        return answer

    async def rendered(self, request: web.Request) -> web.Response:
        """The stored RenderedConfig JSON (what the on-node agent diffs against)."""
        if (refused := self._address(request)) is not None:
            return refused
        name = request.match_info["name"]
        if not valid_name(name):
            return _error(400, "invalid-name", "rendered config name must be a lowercase DNS name", "path name")
        try:
            rendered = await asyncio.to_thread(self.store.get_rendered, name)
        except NotFound:
            return _error(404, "not-found", f"no rendered config {name!r}", "path name")
        except (StoreError, ModelError) as exc:
            return _error(503, "store", str(exc))
        try:
            self.policy.check_token(rendered.pool, list(request.headers.getall("Authorization", [])))
        except Refused as exc:
            request[LOG_NOTE] = {"refused": exc.reason}
            return _error(403, "forbidden", "forbidden")
        return web.Response(body=rendered.to_json_bytes(), content_type=_JSON)


class _MissingPool(Exception):
    """The desired-config query named no pool and the node never reported one."""


@web.middleware
async def count_requests(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
    """Count every request by route and status (the `/config` route is counted in detail by its handler)."""
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        resource = request.match_info.route.resource
        request.app[METRICS].http_request(resource.canonical if resource is not None else "-", status)


async def _server_header(request: web.Request, response: web.StreamResponse) -> None:
    """Every response names the server as the cached config answers do (answer_bytes.py), no version."""
    response.headers["Server"] = SERVER_NAME


def create_app(*, state: ServerState, store: Store, settings: ServerSettings, metrics: ServerMetrics,
               desired_for: DesiredFn | None = None, clock: Callable[[], datetime] | None = None) -> web.Application:
    """The aiohttp application with every route (no listeners; run.py adds them)."""
    app = web.Application(client_max_size=settings.limits.max_body, middlewares=[count_requests])
    app.on_response_prepare.append(_server_header)
    app[STATE] = state
    app[STORE] = store
    app[METRICS] = metrics
    app[SETTINGS] = settings
    store = add_fleet_page(app, store=store, settings=settings, clock=clock)  # writes record report history
    h = Handlers(state=state, store=store, settings=settings, metrics=metrics, desired_for=desired_for, clock=clock)
    app.router.add_get("/config/{pool}", h.config)
    app.router.add_get("/healthz", h.healthz)
    app.router.add_get("/metrics", h.metrics_page)
    app.router.add_get("/pools", h.pools)
    app.router.add_get("/pools/{pool}", h.pool)
    app.router.add_post("/nodes/{name}/status", h.node_status)
    app.router.add_get("/nodes/{name}/desired", h.desired)
    app.router.add_get("/rendered/{name}", h.rendered)
    return app
