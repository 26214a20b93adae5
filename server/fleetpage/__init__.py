"""The fleet page: pools, rollouts and degraded machines at a glance, served by `mco serve` (docs/fleet-page.md).

    views.py     pool rows (counts from server/status.py, as `GET /pools`), machine rows, progress bars
    machines.py  the pool page's filter / sort / paging from query parameters
    access.py    the API's address and token rules, with a session cookie for browsers
    events.py    server-sent events: "the fleet changed", for the page's script to re-fetch
    pages.py     the handlers; render.py the templates (templates/) and security headers; static/ CSS + JS
"""

from __future__ import annotations

from aiohttp import web

from fleet.clock import Clock
from fleet.store import Store
from server.fleet_view import FleetViews
from server.fleetpage.events import Broadcaster
from server.fleetpage.pages import Pages
from server.fleetpage.render import static_files, static_response
from server.settings import ServerSettings


def add_fleet_page(app: web.Application, *, store: Store, settings: ServerSettings,
                   clock: Clock | None = None, views: FleetViews | None = None) -> None:
    """Add the page's routes to `app`: pages and event stream read `store`, the one the API writes (`views`: its
    fleet view, shared with `GET /pools`)."""
    broadcaster = Broadcaster(store, settings.poll_interval)
    pages = Pages(store=store, policy=settings.policy, clock=clock, views=views)
    files = static_files()

    async def static(request: web.Request) -> web.Response:
        name = request.match_info["file"]
        if name not in files:
            raise web.HTTPNotFound()
        return static_response(name, files[name])

    async def events(request: web.Request) -> web.StreamResponse:
        refused = await pages.refuse_address(request)
        return refused if refused is not None else await broadcaster.stream(request)

    async def stop(_app: web.Application) -> None:
        await broadcaster.close()

    app.router.add_get("/", pages.overview)
    app.router.add_get("/ui/", pages.overview)
    app.router.add_get("/ui/pools/{pool}", pages.pool)
    app.router.add_get("/ui/pools/{pool}/diff", pages.diff)
    app.router.add_get("/ui/nodes/{name}", pages.machine)
    app.router.add_post("/ui/token", pages.login)
    app.router.add_post("/ui/logout", pages.logout)
    app.router.add_get("/ui/events", events)
    app.router.add_get("/ui/static/{file}", static)
    app.on_shutdown.append(stop)
