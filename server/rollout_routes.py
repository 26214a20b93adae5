"""Steering a pool's rollout over HTTP: what `mco rollout resume|revert|plan --server URL --token-file F` calls.

    POST /pools/{pool}/rollout/resume   continue after the automatic pause          -> the pool's rollout state
    POST /pools/{pool}/rollout/revert   back to the last config every node reached  -> the pool's rollout state
    GET  /pools/{pool}/rollout/plan     what the rollout to the pool's target does  -> the plan (fleet/rollout_plan.py)

Every route needs an administrator token (`mco serve --admin-token-file`, server/auth.py `check_admin`), as the node
administration routes do (server/admin_routes.py); a pool's or a node's token is refused (403). The answers are
fleet/rollout_control.py's and fleet/rollout_plan.py's, the same `mco rollout --store` prints. An unknown pool is a
404, a refused revert (no config every node reached) or resume (the pool is not paused) a 409 naming why;
nothing is written then.

A revert answers once this process serves the config reverted to (its snapshot rebuilt at once, at most
SERVED_WAIT seconds), so `/config/POOL` follows the revert from the answer on, as the revert promises.
"""

from __future__ import annotations

import asyncio
import logging
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
from server.state import ServerState

log = logging.getLogger("mco.server")

SERVED_WAIT = 5.0  # seconds a revert's answer waits for this process to serve the config reverted to


class RolloutRoutes:
    """The rollout steering handlers (dependencies through the constructor; server/app.py wires them)."""

    def __init__(self, *, store: Store, policy: AccessPolicy, clock: Callable[[], datetime],
                 state: ServerState | None = None) -> None:
        self.store = store
        self.policy = policy
        self.clock = clock
        self.state = state

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
        """The pool back to the last config every node reached, pinned; answered once this process serves it."""
        answer = await self._answer(request, lambda pool: rollout_state(
            self.store, revert(self.store, pool, now=self.clock())))
        if answer.status == 200:
            await self._serving(request.match_info["pool"], self.store.get_pool)
        return answer

    async def _serving(self, pool: str, record: Callable[[str], Any]) -> None:
        """Wake the reloader and wait (SERVED_WAIT at most) until the snapshot serves the pool's new target."""
        if self.state is None:
            return
        try:
            target = (await asyncio.to_thread(record, pool)).current
        except StoreError as exc:  # the revert is stored: it is answered, and served at the next reload
            log.warning("pool %s reverted; its record could not be read again to wait for it: %s", pool, exc)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SERVED_WAIT
        while loop.time() < deadline:
            snapshot = self.state.snapshot
            entry = snapshot.pools.get(pool) if snapshot is not None else None
            if entry is not None and entry.record.current == target and entry.payload is not None \
                    and entry.payload.name == target:
                return
            self.state.wake.set()
            await asyncio.sleep(0.01)

    async def plan(self, request: web.Request) -> web.Response:
        """The preview of the rollout to the pool's target."""
        return await self._answer(request, lambda pool: plan_of(self.store, pool, self.clock()))
