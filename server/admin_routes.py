"""Node administration over HTTP: `GET /nodes`, `GET /nodes/{name}`, `PATCH /nodes/{name}/labels`.

What `mco nodes list|get|label --server URL --token-file F` calls. Every route needs an administrator token
(`mco serve --admin-token-file`, server/auth.py: check_admin): a pool's token or a node's token is refused
here (403), and an administrator token is accepted nowhere else. The answers are fleet/node_admin.py's, the
same `mco nodes --store` prints.

`PATCH /nodes/{name}/labels` takes a JSON merge patch of the labels (RFC 7386): `{"k": "v"}` sets, `{"k": null}`
removes. A malformed body or label is a 400 naming the field, an unknown node a 404; nothing is written then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import web

from fleet.membership import PoolSelectors
from fleet.names import valid_name
from fleet.node_admin import node_list, node_view, relabel, selectors_of
from fleet.node_labels import LabelError, check_labels, key_problem
from fleet.node_status import NodeStatus
from fleet.store import NotFound, Store, StoreError
from server.accesslog import LOG_NOTE
from server.auth import AccessPolicy
from server.node_routes import admin_refusal, json_error, store_failed
from server.request_body import BodyError, read_json
from server.respond import JSON, json_bytes, json_fragment


class AdminRoutes:
    """The node administration handlers; `selectors` gives the pools' selectors now (the server's snapshot)."""

    def __init__(self, *, store: Store, policy: AccessPolicy, read_timeout: float,
                 selectors: Callable[[], PoolSelectors | None]) -> None:
        self.store = store
        self.policy = policy
        self.read_timeout = read_timeout
        self._selectors = selectors
        self._held: tuple[Sequence[NodeStatus], PoolSelectors, bytes] | None = None
        self._seen: dict[str, tuple[NodeStatus, Any]] = {}  # node_list's items by record, encoded

    def add_to(self, app: web.Application) -> None:
        """Register the routes."""
        app.router.add_get("/nodes", self.list_nodes)
        app.router.add_get("/nodes/{name}", self.get_node)
        app.router.add_patch("/nodes/{name}/labels", self.label_node)

    def _pools(self) -> PoolSelectors:
        return self._selectors() or selectors_of(self.store)

    @staticmethod
    async def _answer(node: str, compute: Callable[[], dict[str, Any] | bytes]) -> web.Response:
        """`compute()` in a thread, its failures as answers: 404 unknown node, 400 bad label, 503 store."""
        try:
            body = await asyncio.to_thread(compute)
        except NotFound:
            return json_error(404, "unknown-node", f"no node {node!r}", "path name")
        except LabelError as exc:
            return json_error(400, "invalid-labels", exc.message, exc.path)
        except StoreError as exc:
            return store_failed(exc)
        return web.Response(body=body if isinstance(body, bytes) else json_bytes(body), content_type=JSON)

    async def list_nodes(self, request: web.Request) -> web.Response:
        """Every node with its labels, pool and membership."""
        if (refused := admin_refusal(self.policy, request)) is not None:
            return refused
        return await self._answer("", self._listing)

    def _listing(self) -> bytes:
        """`GET /nodes`'s bytes, kept while the store hands back the same listing and the pools are the same (the
        stores keep one list until the next change: a dashboard polling an unchanged fleet costs nothing)."""
        nodes, pools = self.store.list_node_status(), self._pools()
        held = self._held
        if held is not None and held[1].selectors == pools.selectors:
            if held[0] is nodes:
                return held[2]
            seen = self._seen
            if len(seen) > 2 * len(nodes) + 100:  # nodes removed since: start again
                seen = self._seen = {}
        else:
            seen = self._seen = {}
        body = json_bytes(node_list(nodes, pools, seen, json_fragment))  # a report: one item encoded again
        self._held = (nodes, pools, body)  # holding the list: no other list can take its identity
        return body

    async def get_node(self, request: web.Request) -> web.Response:
        """One node's record: labels, pool, membership, state, history."""
        node = request.match_info["name"]
        if (refused := admin_refusal(self.policy, request) or _node_problem(node)) is not None:
            return refused
        return await self._answer(node, lambda: node_view(self.store.get_node_status(node), self._pools()))

    async def label_node(self, request: web.Request) -> web.Response:
        """Apply a merge patch to the node's labels; answers the record as it now is."""
        node = request.match_info["name"]
        if (refused := admin_refusal(self.policy, request) or _node_problem(node)) is not None:
            return refused
        try:
            body = await read_json(request, timeout=self.read_timeout)
        except BodyError as exc:
            return json_error(exc.status, "body", exc.message, exc.path)
        if not isinstance(body, dict):
            return json_error(400, "invalid-labels", "must be a JSON object of label keys to values or null", "$")
        put = {k: v for k, v in body.items() if v is not None}
        remove = [k for k, v in body.items() if v is None]
        try:
            check_labels(put, "$")
            for key in remove:
                if (why := key_problem(key)) is not None:
                    raise LabelError(f"$[{key[:80]!r}]", why)
        except LabelError as exc:
            return json_error(400, "invalid-labels", exc.message, exc.path)
        request[LOG_NOTE]["node"] = node

        def run() -> dict[str, Any]:
            selectors = self._pools()
            return node_view(relabel(self.store, node, put, remove, selectors), selectors)
        return await self._answer(node, run)


def _node_problem(node: str) -> web.Response | None:
    if valid_name(node):
        return None
    return json_error(400, "invalid-node-name", "node name must be a lowercase DNS name of at most 236 characters",
                      "path name")
