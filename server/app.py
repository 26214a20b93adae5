"""The aiohttp application: routes over the current snapshot and the store.

Status codes (never a blanket 500):
  200 config / JSON      304 If-None-Match matched      400 a malformed request, naming the field
  403 address or token refused (no config bytes)          404 unknown pool, node or rendered config
  405 method not allowed 406 spec version unsatisfiable  408 body too slow   409 a node in no pool
  413 body too large     503 not ready (no good render yet) or the store failed (Ignition retries 5xx)
Every route obeys the --allow/--deny rules (health and metrics too). A pool with tokens shows its
details (sources, nodes, condition messages) only to a request carrying one of its tokens. Node
routes live in node_routes.py, the node administration routes in admin_routes.py, the rollout steering routes in
rollout_routes.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from aiohttp import web

from fleet.clock import Clock, system_clock
from fleet.membership import PoolSelectors
from fleet.names import valid_name
from fleet.node_status import NodeStatus
from fleet.rendered import ModelError, PoolRecord
from fleet.rollout_control import paused_by
from fleet.store import NotFound, Store, StoreError
from renderer.machine_render import MACHINE_ANNOTATION, NODE_ANNOTATION
from server.accesslog import LOG_NOTE
from server.admin_routes import AdminRoutes
from server.auth import AccessPolicy, BadAuthorization, Refused, bearer_token
from server.connection import refuse_version, refused_version, request_done
from server.fleet_metrics import fleet_families
from server.fleet_view import FleetViews
from server.fleetpage import add_fleet_page
from server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from server.metrics import ServerMetrics
from server.node_routes import NodeRoutes, json_error, store_failed
from server.reboot_slot import add_reboot_slot
from server.respond import JSON, SERVER_NAME, ConfigResponder, json_bytes
from server.rollout_routes import RolloutRoutes
from server.settings import ServerSettings
from server.state import ServerState
from server.status import pool_summary, with_machines

STATE: web.AppKey[ServerState] = web.AppKey("state", ServerState)
STORE: web.AppKey[Any] = web.AppKey("store", object)
METRICS: web.AppKey[ServerMetrics] = web.AppKey("metrics", ServerMetrics)
SETTINGS: web.AppKey[ServerSettings] = web.AppKey("settings", ServerSettings)

DesiredFn = Callable[[str, PoolRecord, Sequence[NodeStatus]], "str | None"]
HIDDEN = "hidden: this pool needs a token"


def hide_details(item: dict[str, Any]) -> dict[str, Any]:
    """A pool status without what a pool's token protects: source names, node names and machines, condition
    messages."""
    spec = dict(item["spec"], configuration=dict(item["spec"]["configuration"], source=[]))
    conditions = [dict(c, message=HIDDEN if c.get("message") else "") for c in item["status"]["conditions"]]
    status = dict(item["status"], nodes=[], conditions=conditions)
    status.pop("machines", None)
    return dict(item, spec=spec, status=status)


class Handlers:
    """Route handlers; dependencies come in through the constructor (one composition root: run.py)."""

    def __init__(self, *, state: ServerState, store: Store, settings: ServerSettings, metrics: ServerMetrics,
                 clock: Clock | None = None, views: FleetViews | None = None) -> None:
        self.state = state
        self.store = store
        self.views = views or FleetViews(store)
        self.settings = settings
        self.policy: AccessPolicy = settings.policy
        self.metrics = metrics
        self.clock = clock or system_clock
        self.responder = ConfigResponder(state=state, policy=settings.policy, metrics=metrics,
                                         default_version=settings.default_version)

    # -- /config/{pool}: the hot path (decided in respond.py; `config_first` reaches it without routing) --
    async def config(self, request: web.Request) -> web.StreamResponse:
        """Ignition for a pool, in the negotiated spec version (bytes not built yet: built in a thread first)."""
        return await self.answer_config(request, request.match_info["pool"])

    async def answer_config(self, request: web.BaseRequest, pool: str) -> web.Response:
        """The `/config/{pool}` answer (decided once per parsed request, query and snapshot: respond.py)."""
        responder, method, lines = self.responder, request.method, request.raw_headers
        raw_query = request.query_string  # the recalled answer's key: parsed only when deciding
        answer = responder.recall(method, pool, lines, request.remote, raw_query)
        if answer is None:
            query = request.query
            build = responder.unbuilt(pool, request.headers, query, request.remote)
            if build is not None:
                try:
                    await asyncio.to_thread(build)
                except StoreError as exc:
                    return _named(store_failed(exc))
            answer = responder.decide(method, pool, request.headers, request.remote, query)
            if answer.first_boot_of:  # served by its facts only until its node registers (server/machine_choice.py)
                try:
                    if await asyncio.to_thread(self._registered, answer.first_boot_of):
                        answer = responder.withdrawn(answer)
                except StoreError as exc:
                    return _named(store_failed(exc))
            else:
                responder.remember(method, pool, lines, request.remote, answer, raw_query)
            responder.count(answer, method)
        request[LOG_NOTE] = answer.note
        return web.Response(status=answer.status, body=answer.body or None, headers=answer.headers)

    def _registered(self, node: str) -> bool:
        """Whether the store knows node `node` (it has reported or claimed a slot): its machine is on day 2."""
        try:
            self.store.get_node_status(node)
        except NotFound:
            return False
        return True

    # -- health and metrics --------------------------------------------------------------------------
    async def healthz(self, request: web.Request) -> web.Response:
        """200 once a good render is served; 503 before (or while the store is unreadable at start)."""
        if (refused := self._address(request)) is not None:
            return refused
        feed = f" ({self.state.feed.health().text()})" if self.state.feed is not None else ""
        if self.state.ready:
            return web.Response(text=f"ok{feed}\n")
        return web.Response(status=503, text=f"not ready: {self.state.store_error or 'no good render yet'}{feed}\n")

    async def metrics_page(self, request: web.Request) -> web.Response:
        """Prometheus text exposition."""
        if (refused := self._address(request)) is not None:
            return refused
        try:
            self.metrics.rollout_pauses = await asyncio.to_thread(self._rollout_pauses)
            self.metrics.fleet = await asyncio.to_thread(self._fleet_gauges)
        except StoreError as exc:
            return store_failed(exc)
        response = web.Response(body=self.metrics.exposition())
        response.headers["Content-Type"] = METRICS_CONTENT_TYPE
        return response

    # -- pools ----------------------------------------------------------------------------------------
    def _address(self, request: web.Request) -> web.Response | None:
        try:
            self.policy.check_address(request.remote)
        except Refused as exc:
            request[LOG_NOTE] = {"refused": exc.reason}
            return json_error(403, "forbidden", "forbidden")
        return None

    def _opens(self, request: web.Request, pool: str) -> bool:
        """Whether the request may see this pool's details (always, for a pool without tokens)."""
        if not self.policy.pool_requires_token(pool):
            return True
        try:
            self.policy.check_token(pool, request.headers.getall("Authorization", []))
        except Refused:
            return False
        return True

    async def pools(self, request: web.Request) -> web.Response:
        """Every pool's MachineConfigPool-style status (protected pools without their details)."""
        if (refused := self._address(request)) is not None:
            return refused
        try:
            items = await asyncio.to_thread(self._pool_statuses, None)
        except StoreError as exc:
            return store_failed(exc)
        unpooled = [u for u in items if "metadata" not in u]
        items = [i if self._opens(request, i["metadata"]["name"]) else hide_details(i) for i in items
                 if "metadata" in i]
        body = {"kind": "MachineConfigPoolList", "items": items, "renderErrors": list(self.state.render_errors),
                "unpooled": unpooled[0]["unpooled"] if unpooled else []}
        return web.Response(body=json_bytes(body), content_type=JSON)  # (2.4 MB at 10,000 machines)

    async def pool(self, request: web.Request) -> web.Response:
        """One pool's status (a pool with tokens: only with one of them)."""
        if (refused := self._address(request)) is not None:
            return refused
        name = request.match_info["pool"]
        if not valid_name(name):
            return json_error(400, "invalid-pool-name", "pool name must be a lowercase DNS name", "path pool")
        try:
            self.policy.check_token(name, request.headers.getall("Authorization", []))
        except BadAuthorization as exc:
            return json_error(400, "authorization", exc.message, exc.path)
        except Refused as exc:
            request[LOG_NOTE] = {"refused": exc.reason}
            return json_error(403, "forbidden", "forbidden")
        try:
            items = await asyncio.to_thread(self._pool_statuses, name)
        except NotFound:
            return json_error(404, "unknown-pool", f"no pool {name!r}", "path pool")
        except StoreError as exc:
            return store_failed(exc)
        return web.Response(body=json_bytes(items[0]), content_type=JSON)

    def _rollout_pauses(self) -> list[tuple[str, str]]:
        """(pool, node) of each pool the rollout paused (fleet/rollout_gates.py), read without a claim."""
        pauses = ((name, paused_by(self.store, self.store.get_pool(name))) for name in self.store.list_pools())
        return [(pool, pause.node) for pool, pause in pauses if pause is not None]

    def _fleet_gauges(self) -> list[Any]:
        """The fleet's gauges (server/fleet_metrics.py) from the store now."""
        records = [self.store.get_pool(n) for n in self.store.list_pools()]
        health = self.state.feed.health() if self.state.feed is not None else None
        return fleet_families(records, self.store.list_node_status(), self.clock(), health)

    def _pool_statuses(self, only: str | None) -> list[dict[str, Any]]:
        """Each pool's status; for every pool (`only` None) an extra `{"unpooled": [...]}` item last: the nodes
        whose labels select no pool, with the reason (names only to a caller that may see every pool's). The
        machines come from the fleet view (server/fleet_view.py): counted as records change, encoded once each."""
        names = [only] if only else self.store.list_pools()
        records = [self.store.get_pool(n) for n in names]
        view = self.views.current()
        items = [with_machines(pool_summary(r, view.tally(r.name)), r, self.views.nodes_json(view, r.name))
                 for r in records]
        if only is None:
            selectors = PoolSelectors(records)
            items.append({"unpooled": [{"name": n.name, "labels": dict(n.labels),
                                        "reason": selectors.of(n.labels).reason(n.name)}
                                       for n in view.unpooled]})
        return items

    async def rendered(self, request: web.Request) -> web.Response:
        """The stored RenderedConfig JSON (what the on-node agent diffs against)."""
        if (refused := self._address(request)) is not None:
            return refused
        name = request.match_info["name"]
        if not valid_name(name):
            return json_error(400, "invalid-name", "rendered config name must be a lowercase DNS name", "path name")
        authorization = request.headers.getall("Authorization", [])
        try:
            bearer_token(authorization)
        except BadAuthorization as exc:
            return json_error(400, "authorization", exc.message, exc.path)
        nodes = request.query.getall("node", [])
        if nodes and (len(nodes) != 1 or not valid_name(nodes[0])):
            return json_error(400, "invalid-node", "node must be given once, a lowercase DNS name", "query node")
        try:
            rendered = await asyncio.to_thread(self.store.get_rendered, name)
        except NotFound:
            return json_error(404, "not-found", f"no rendered config {name!r}", "path name")
        except StoreError as exc:
            return store_failed(exc)
        except ModelError:
            return json_error(503, "store", f"rendered config {name} cannot be read")
        try:
            if MACHINE_ANNOTATION in rendered.annotations and self.policy.nodes_authenticated:
                # a machine's config (its addresses, its keys) goes to its own node only (fleet/machines.py)
                node = rendered.annotations.get(NODE_ANNOTATION, "")
                if not node:
                    raise Refused(f"machine config {name} belongs to no node")
                self.policy.check_node(node, authorization)
            elif not (nodes and await self._handed_to_node(nodes[0], name, authorization)):
                self.policy.check_token(rendered.pool, authorization)
        except Refused as exc:
            request[LOG_NOTE] = {"refused": exc.reason}
            return json_error(403, "forbidden", "forbidden")
        return web.Response(body=rendered.to_json_bytes(), content_type=JSON)

    async def _handed_to_node(self, node: str, name: str, authorization: Sequence[str]) -> bool:
        """Whether `?node=N` with N's own token asks for a config the rollout handed N (its record's desired or
        current config, or the one it may pull before its slot). With node authentication on, this opens a
        config of another pool than the one whose token the agent holds: an administrator relabelled the node
        into it (docs/operations.md, *Pools by node labels*). Refused (403) when N's token does not match."""
        if not self.policy.nodes_authenticated:
            return False
        self.policy.check_node(node, authorization)
        try:
            status = await asyncio.to_thread(self.store.get_node_status, node)
        except (NotFound, StoreError):  # no record (or none readable now): the pool's token decides
            return False
        return name in (status.desired_config, status.current_config, status.pull_config)


HANDLERS: web.AppKey[Handlers] = web.AppKey("handlers", Handlers)


def _named(response: web.Response) -> web.Response:
    """`response` with the Server header every config answer carries (respond.py's answers come with it)."""
    response.headers["Server"] = SERVER_NAME
    return response


@web.middleware
async def refuse_odd_versions(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
    """A request in an HTTP version we do not speak is answered 505 before any handler (connection.py)."""
    refused = refuse_version(request)
    return refused if refused is not None else await handler(request)


async def _prepared(request: web.Request, response: web.StreamResponse) -> None:
    """`on_response_prepare`: every routed response names the server as the config answers and connection.py's
    refusals do (no version), and is finished by `_finish`."""
    response.headers["Server"] = SERVER_NAME
    resource = request.match_info.route.resource
    _finish(request, response, resource.canonical if resource is not None else "-", request.app[METRICS])


def _finish(request: web.BaseRequest, response: web.StreamResponse, route: str, metrics: ServerMetrics) -> None:
    """Every response is counted by route and status (the `/config` route also in detail by its handler) and ends
    the request for the read deadline."""
    metrics.http_request(route, response.status)
    request_done(request)


Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]
CONFIG_PREFIX = "/config/"


def config_first(app: web.Application, then: Handler) -> Handler:
    """The handler of the app's `web.Server` (run.py): a plain `GET|HEAD /config/<pool>` goes straight to
    `Handlers.answer_config`, everything else (other methods, sub-paths, a refused HTTP version) to `then`,
    the application's own handler.

    Why it exists: routing, the middleware and the signals cost about a quarter of a config answer's CPU
    (bench/README.md), and the config route is the one a fleet hammers. It is public API only: run.py sets it
    as the `request_handler` of `AppRunner.server` (the `handler` a `web.Server` is built with, read by each
    new connection), and it reads only `web.BaseRequest`. Nothing is skipped but the routing: the address,
    token and machine rules live in `answer_config` (respond.py decides, its answers name the server), and the
    counts and the read deadline's bookkeeping are the routed ones (tests/server/test_config_first.py holds
    both paths to the same answers).
    """
    handlers, metrics = app[HANDLERS], app[METRICS]
    route = CONFIG_PREFIX + "{pool}"

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        path = request.path  # as llhttp and yarl parsed it
        pool = path[len(CONFIG_PREFIX):]
        if (request.method in ("GET", "HEAD") and path.startswith(CONFIG_PREFIX) and pool and "/" not in pool
                and not refused_version(request)):
            response = await handlers.answer_config(request, pool)
            _finish(request, response, route, metrics)
            return response
        return await then(request)
    return handle


def create_app(*, state: ServerState, store: Store, settings: ServerSettings, metrics: ServerMetrics,
               desired_for: DesiredFn | None = None, clock: Clock | None = None) -> web.Application:
    """The aiohttp application with every route (no listeners; run.py adds them)."""
    app = web.Application(client_max_size=settings.limits.max_body, middlewares=[refuse_odd_versions])
    app.on_response_prepare.append(_prepared)
    app[STATE] = state
    app[STORE] = store
    app[METRICS] = metrics
    app[SETTINGS] = settings
    views = FleetViews(store)
    add_fleet_page(app, store=store, settings=settings, clock=clock, views=views)
    h = app[HANDLERS] = Handlers(state=state, store=store, settings=settings, metrics=metrics, clock=clock,
                                 views=views)
    app.router.add_get("/config/{pool}", h.config)
    app.router.add_get("/healthz", h.healthz)
    app.router.add_get("/metrics", h.metrics_page)
    app.router.add_get("/pools", h.pools)
    app.router.add_get("/pools/{pool}", h.pool)
    metrics.held_claims.set_function(state.handouts.held)
    metrics.held_wakeups = lambda: (state.handouts.woken, state.handouts.lost, state.handouts.pull_woken)
    nodes = NodeRoutes(state=state, store=store, policy=settings.policy, read_timeout=settings.limits.read_timeout,
                       poll_interval=settings.poll_interval, desired_for=desired_for, clock=h.clock, metrics=metrics)
    nodes.add_to(app)
    add_reboot_slot(app, nodes)
    AdminRoutes(store=store, policy=settings.policy, read_timeout=settings.limits.read_timeout,
                selectors=nodes.selectors).add_to(app)
    RolloutRoutes(store=store, policy=settings.policy, clock=h.clock, state=state).add_to(app)
    app.router.add_get("/rendered/{name}", h.rendered)
    return app
