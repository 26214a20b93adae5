"""The page handlers: overview (`/`, `/ui/`), pool, diff, machine, and the token form.

Each handler checks the client address (the API's allow/deny lists), reads pool records and node reports
through the Store protocol in a worker thread (as `GET /pools` does), checks the pool's token with the
API's rule, and renders a template. Client errors are 4xx pages naming the parameter; an unreadable
store is a 503 page. Nothing shown comes from a file's contents: configs appear by name, diffs by path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web

from fleet.clock import Clock, system_clock
from fleet.diff import diff_rendered
from fleet.disruption import disruption
from fleet.disruption_policy import DisruptionPolicy, PolicyError, policy_from_annotations
from fleet.machines import machine_of_node
from fleet.names import valid_name
from fleet.node_status import HISTORY_LIMIT, NodeStatus
from fleet.rendered import ModelError, PoolRecord, RenderedConfig, pool_config_of
from fleet.store import NotFound, Store, StoreError
from server.accesslog import LOG_NOTE
from server.auth import AccessPolicy, Refused
from server.errors import ServerError
from server.fleet_view import FleetView, FleetViews
from server.fleetpage import access
from server.fleetpage.drift import drift_rows
from server.fleetpage.machines import SORTS, QueryError, parse_query, select
from server.fleetpage.phases import in_update, phase_rows
from server.fleetpage.render import page
from server.fleetpage.views import machine_row, pool_row, report_rows
from server.status import PoolTally


class _Stop(ServerError):
    """Answer with this response instead (a refusal or an error page)."""

    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


class Pages:
    """The fleet page's routes over one store."""

    def __init__(self, *, store: Store, policy: AccessPolicy, clock: Clock | None = None,
                 views: FleetViews | None = None) -> None:
        self.store = store
        self.policy = policy
        self.clock = clock or system_clock
        self.views = views or FleetViews(store)

    # -- shared steps ------------------------------------------------------------------------------------
    def _common(self, request: web.Request) -> dict[str, Any]:
        return {"now": self.clock(), "path": request.path_qs, "tokens": self.policy_has_tokens,
                "signed_in": access.COOKIE in request.cookies}

    @property
    def policy_has_tokens(self) -> bool:
        return bool(self.policy.tokens or self.policy.all_pools_tokens)

    def _error(self, request: web.Request, status: int, title: str, message: str, *, ask_token: bool = False
               ) -> _Stop:
        return _Stop(page("error.html.j2", status=status, title=title, message=message, ask_token=ask_token,
                          **self._common(request)))

    def _check_address(self, request: web.Request) -> None:
        try:
            self.policy.check_address(request.remote)
        except Refused as exc:
            request[LOG_NOTE] = {"refused": exc.reason}
            raise self._error(request, 403, "Forbidden", "This address may not use the server.") from None

    def _check_pool(self, request: web.Request, pool: str) -> None:
        credential = access.authorization(request)
        try:
            self.policy.check_token(pool, credential)
        except Refused as exc:
            request[LOG_NOTE] = {"refused": exc.reason}
            message = (f"Pool {pool} needs a token." if credential is None
                       else f"The token given is not accepted for pool {pool}.")
            raise self._error(request, 403, "Token needed", message, ask_token=True) from None

    def _check_any_pool(self, request: web.Request) -> None:
        """With tokens configured, refuse (403) a visitor whose token opens no pool at all."""
        if not self.policy_has_tokens:
            return
        credential = access.authorization(request)
        for pool in self.policy.tokens or ("",):  # "" names no pool: only the all-pools tokens open it
            try:
                self.policy.check_token(pool, credential)
                return
            except Refused:
                continue
        request[LOG_NOTE] = {"refused": "no token accepted for any pool"}
        raise self._error(request, 403, "Token needed", "A token is needed.", ask_token=True)

    def _name(self, request: web.Request, key: str, what: str) -> str:
        name = request.match_info[key]
        if not valid_name(name):
            raise self._error(request, 400, "Bad name", f"path {key}: a {what} name is a lowercase DNS name")
        return name

    async def _read(self, request: web.Request, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return await asyncio.to_thread(fn, *args)
        except NotFound as exc:
            raise self._error(request, 404, "Not found", str(exc)) from None
        except (StoreError, ModelError) as exc:
            raise self._error(request, 503, "Store unavailable", f"The store cannot be read: {exc}") from None

    async def refuse_address(self, request: web.Request) -> web.Response | None:
        """The 403 page for an address the policy refuses, else None."""
        try:
            self._check_address(request)
        except _Stop as stop:
            return stop.response
        return None

    async def _guard(self, request: web.Request, handler: Callable[[web.Request], Any]) -> web.Response:
        try:
            self._check_address(request)
            response: web.Response = await handler(request)
            return response
        except _Stop as stop:
            return stop.response

    # -- overview ----------------------------------------------------------------------------------------
    def _fleet(self) -> tuple[list[PoolRecord], FleetView]:
        return [self.store.get_pool(p) for p in self.store.list_pools()], self.views.current()

    async def overview(self, request: web.Request) -> web.Response:
        """One row per pool the visitor may see."""
        return await self._guard(request, self._overview)

    async def _overview(self, request: web.Request) -> web.Response:
        records, view = await self._read(request, self._fleet)
        credential = access.authorization(request)
        visible = [r for r in records if access.may_see(self.policy, r.name, credential)]
        rows = [pool_row(r, view.tally(r.name), self.clock()) for r in visible]
        updating, unpooled = in_update(view, [r.name for r in visible]), view.unpooled
        hidden = len(records) - len(visible)
        return page("overview.html.j2", rows=rows, hidden=hidden, updating=phase_rows(updating, self.clock()),
                    unpooled=[] if hidden else unpooled,
                    drifted=drift_rows(view, {r.name for r in visible}, self.clock()), **self._common(request))

    # -- pool --------------------------------------------------------------------------------------------
    def _pool_data(self, pool: str) -> tuple[PoolRecord, PoolTally, list[str]]:
        record = self.store.get_pool(pool)
        counted = self.views.current().tally(pool)
        prefix = f"rendered-{pool}-"
        known = [h.name for h in reversed(record.history)]
        if record.current and record.current not in known:
            known.insert(0, record.current)
        others = [n for n in self.store.list_rendered() if n.startswith(prefix) and n not in known]
        return record, counted, known + others

    async def pool(self, request: web.Request) -> web.Response:
        """A pool's machines (filtered, sorted, paged), its targets history and the diff form."""
        return await self._guard(request, self._pool)

    async def _pool(self, request: web.Request) -> web.Response:
        name = self._name(request, "pool", "pool")
        self._check_pool(request, name)
        try:
            query = parse_query(request.query)
        except QueryError as exc:
            raise self._error(request, 400, "Bad query", str(exc)) from None
        record, counted, configs = await self._read(request, self._pool_data, name)
        row = pool_row(record, counted, self.clock())
        chosen = select(counted, query)
        now = self.clock()
        machines = [machine_row(n, record.target_for(n.name) or "", now) for n in chosen.rows]
        return page("pool.html.j2", row=row, record=record, machines=machines, listing=chosen, query=query,
                    sorts=SORTS, configs=configs, **self._common(request))

    # -- diff --------------------------------------------------------------------------------------------
    def _pair(self, pool: str, old: str, new: str) -> tuple[RenderedConfig, RenderedConfig]:
        self.store.get_pool(pool)
        found = self.store.get_rendered(old), self.store.get_rendered(new)
        for rendered, param in zip(found, ("from", "to"), strict=True):
            if rendered.pool != pool:
                raise NotFound(f"rendered/{rendered.name}", f"query {param}: not a rendered config of pool {pool}")
        return found

    async def diff(self, request: web.Request) -> web.Response:
        """What changes between two of the pool's rendered configs, and the disruption (as `mco diff`)."""
        return await self._guard(request, self._diff)

    async def _diff(self, request: web.Request) -> web.Response:
        pool = self._name(request, "pool", "pool")
        self._check_pool(request, pool)
        names = {}
        for param in request.query:
            if param not in ("from", "to"):
                raise self._error(request, 400, "Bad query", f"query {param}: unknown parameter (known: from, to)")
        for param in ("from", "to"):
            value = request.query.get(param, "")
            if not valid_name(value):
                raise self._error(request, 400, "Bad query", f"query {param}: a rendered config name is required")
            names[param] = value
        old, new = await self._read(request, self._pair, pool, names["from"], names["to"])
        changes = diff_rendered(old.spec, new.spec)
        policy_note = ""
        try:  # the policy recorded when `new` was rendered: what the node's agent will apply
            policy = policy_from_annotations(new.annotations)
        except PolicyError as exc:
            policy, policy_note = DisruptionPolicy.defaults(), f"recorded policy unreadable ({exc.path}): defaults"
        verdict = disruption(changes, policy)
        return page("diff.html.j2", pool=pool, old=old.name, new=new.name, changes=changes, verdict=verdict,
                    policy_note=policy_note, **self._common(request))

    # -- machine -----------------------------------------------------------------------------------------
    def _node_data(self, node: str) -> tuple[NodeStatus, PoolRecord | None]:
        status = self.store.get_node_status(node)
        try:
            record: PoolRecord | None = self.store.get_pool(status.pool)
        except NotFound:
            record = None
        return status, record

    async def machine(self, request: web.Request) -> web.Response:
        """A machine's last report, the exact degraded cause, and its reports over time."""
        return await self._guard(request, self._machine)

    async def _machine(self, request: web.Request) -> web.Response:
        node = self._name(request, "name", "node")
        try:
            status, record = await self._read(request, self._node_data, node)
        except _Stop:
            self._check_any_pool(request)  # with tokens on, a 404 is no answer to probe node names with
            raise
        self._check_pool(request, status.pool)
        now = self.clock()
        target = (record.target_for(node) or "") if record is not None else ""
        document = machine_of_node(record.machines, node) if record is not None else None
        return page("machine.html.j2", machine=machine_row(status, target, now),
                    reports=report_rows(status, target, now), limit=HISTORY_LIMIT, pool_known=record is not None,
                    phases=status.timeline,
                    document=document, pool_config=pool_config_of(status.current_config),
                    overlay=status.current_config[len(pool_config_of(status.current_config)) + 1:],
                    **self._common(request))

    # -- token form --------------------------------------------------------------------------------------
    async def login(self, request: web.Request) -> web.Response:
        """Keep a token typed into the form in a session cookie, then go back where the visitor was."""
        return await self._guard(request, self._login)

    async def _login(self, request: web.Request) -> web.Response:
        form = await request.post()
        token = form.get("token")
        target = access.safe_next(str(form.get("next", "/ui/")))
        if not isinstance(token, str) or not token.strip():
            raise self._error(request, 400, "Token needed", "form token: required", ask_token=True)
        token = token.strip()
        if len(token) > access.MAX_TOKEN or not token.isprintable() or any(c.isspace() for c in token):
            raise self._error(request, 400, "Bad token", "form token: one printable word", ask_token=True)
        pools = await self._read(request, self.store.list_pools)
        if not access.token_opens_some_pool(self.policy, token, pools):
            request[LOG_NOTE] = {"refused": "token accepted for no pool"}
            raise self._error(request, 403, "Token refused", "That token is not accepted for any pool.",
                              ask_token=True)
        response = web.Response(status=303, headers={"Location": target})
        access.set_token_cookie(response, token, secure=request.secure)
        return response

    async def logout(self, request: web.Request) -> web.Response:
        """Forget the token cookie."""
        response = web.Response(status=303, headers={"Location": "/ui/"})
        response.del_cookie(access.COOKIE, path="/")
        return response
