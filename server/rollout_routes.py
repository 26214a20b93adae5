"""Steering a pool's rollout over HTTP: what `mco rollout resume|revert|plan --server URL --token-file F` calls.

    POST /pools/{pool}/rollout/resume   continue after the automatic pause          -> the pool's rollout state
    POST /pools/{pool}/rollout/revert   back to the last config every node reached  -> the pool's rollout state
    GET  /pools/{pool}/rollout/plan     what the rollout to the pool's target does  -> the plan (fleet/rollout_plan.py)

Every route needs an administrator token (`mco serve --admin-token-file`, server/auth.py `check_admin`), as the node
administration routes do (server/admin_routes.py); a pool's or a node's token is refused (403). The answers are
fleet/rollout_control.py's and fleet/rollout_plan.py's, the same `mco rollout --store` prints. An unknown pool is a
404, a refused revert (no config every node reached) a 409 naming why; nothing is written then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any

from aiohttp import web

from fleet.names import valid_name
from fleet.rollout_control import RolloutRefused, plan_of, resume, revert, rollout_state
from fleet.store import NotFound, Store, StoreError
from ignition.canonical import canonical_json
from server.accesslog import LOG_NOTE
from server.auth import AccessPolicy
from server.node_routes import admin_refusal, json_error, store_failed
from server.respond import JSON


class RolloutRoutes:
    """The rollout steering handlers (dependencies through the constructor; server/app.py wires them)."""

    def __init__(self, *, store: Store, policy: AccessPolicy, clock: Callable[[], datetime]) -> None:
        self.store = store
        self.policy = policy
        self.clock = clock

    def add_to(self, app: web.Application) -> None:
        """Register the routes."""
        app.router.add_post("/pools/{pool}/rollout/resume", self.resume)
        app.router.add_post("/pools/{pool}/rollout/revert", self.revert)
        app.router.add_get("/pools/{pool}/rollout/plan", self.plan)

    def _refuse(self, request: web.Request) -> web.Response | None:
        if (refused := admin_refusal(self.policy, request)) is not None:
            return refused
        note = request.setdefault(LOG_NOTE, {})
        pool = request.match_info["pool"]
        if not valid_name(pool):
            return json_error(400, "invalid-pool-name", "pool name must be a lowercase DNS name", "path pool")
        note["pool"] = pool
        return None

    async def _answer(self, request: web.Request, compute: Callable[[str], dict[str, Any]]) -> web.Response:
        if (refused := self._refuse(request)) is not None:
            return refused
        pool = request.match_info["pool"]
        try:
            body = await asyncio.to_thread(compute, pool)
        except NotFound:
            return json_error(404, "unknown-pool", f"no pool {pool!r}", "path pool")
        except RolloutRefused as exc:
            return json_error(409, "refused", str(exc), "path pool")
        except StoreError as exc:
            return store_failed(exc)
        return web.Response(body=canonical_json(body), content_type=JSON)

    async def resume(self, request: web.Request) -> web.Response:
        """Failures reported so far no longer pause the pool."""
        return await self._answer(request, lambda pool: rollout_state(
            self.store, resume(self.store, pool, now=self.clock())))

    async def revert(self, request: web.Request) -> web.Response:
        """The pool back to the last config every node reached, pinned."""
        return await self._answer(request, lambda pool: rollout_state(
            self.store, revert(self.store, pool, now=self.clock())))

    async def plan(self, request: web.Request) -> web.Response:
        """The preview of the rollout to the pool's target."""
        return await self._answer(request, lambda pool: plan_of(self.store, pool, self.clock()))
