"""`POST /nodes/{name}/reboot-slot`: a node asks for a rollout slot to reboot to repair drift (its booted kernel
arguments are not its config's, the next boot has them: applier/drift_steps.py). The decision is
fleet/drift_reboot.py's, made in the same claim as a hand-out (the store's lock or compare-and-swap): a granted
node is recorded as Working before the answer, so it counts against maxUnavailable until it reports Done again.

Answer: `{"granted": true}` or `{"granted": false, "reason": "..."}`; an unknown node is 404, a client that is not
the node (or has not the pool's token) 403, a store failure 503 naming no server path.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from aiohttp import web

from fleet.clock import timestamp
from fleet.drift_reboot import REBOOTING, reboot_refusal
from fleet.node_status import NodeStatus, with_report
from fleet.rollout import NodeStatuses
from fleet.store import NotFound, StoreError
from server.accesslog import LOG_NOTE
from server.node_routes import NodeRoutes, json_error, store_failed


def add_reboot_slot(app: web.Application, nodes: NodeRoutes) -> None:
    """Register the route beside the node routes (their checks, store and clock)."""
    def decide_slot(node: str) -> str | None:
        refusal: list[str | None] = ["not decided"]
        now = nodes.clock()

        def decide(statuses: NodeStatuses) -> NodeStatus | None:
            mine = statuses.get(node)
            if mine is None:
                raise NotFound(node, "no status")
            refusal[0] = reboot_refusal(node, nodes.store.get_pool(mine.pool), statuses, now)
            if refusal[0] is not None:
                return None
            return with_report(mine, replace(mine, state="Working", message=REBOOTING, reported_at=timestamp(now)))

        nodes.store.claim_node(node, decide)
        return refusal[0]

    async def reboot_slot(request: web.Request) -> web.Response:
        node = nodes.node_name(request)
        if isinstance(node, web.Response):
            return node
        try:
            known = await asyncio.to_thread(nodes.store.get_node_status, node)
        except NotFound:
            known = None
        except StoreError as exc:
            return store_failed(exc)
        if (refused := nodes.refuse(request, node, known.pool if known is not None else None)) is not None:
            return refused
        if known is None:
            return json_error(404, "unknown-node", f"no node {node!r} has reported", "path name")
        try:
            refusal = await asyncio.to_thread(decide_slot, node)
        except NotFound:
            return json_error(404, "unknown-node", f"no node {node!r} has reported", "path name")
        except StoreError as exc:
            return store_failed(exc)
        request[LOG_NOTE]["reboot-slot"] = "granted" if refusal is None else "refused"
        return web.json_response({"granted": True} if refusal is None else {"granted": False, "reason": refusal})

    app.router.add_post("/nodes/{name}/reboot-slot", reboot_slot)
