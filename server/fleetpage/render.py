"""HTML responses: jinja2 templates (package data, autoescaped) and the headers every page carries.

The Content-Security-Policy allows nothing from outside the server and nothing inline: the stylesheet and
the script are files under /ui/static/, the progress bars are inline SVG drawn with attributes and CSS
classes. Pages are never cached (they show live state); the static files are cached briefly.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import jinja2
from aiohttp import web

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
STATIC_TYPES = {"fleet.css": "text/css", "fleet.js": "text/javascript"}

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("server.fleetpage", "templates"),
                          autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def page(template: str, *, status: int = 200, **context: Any) -> web.Response:
    """Render a template into a response with the page headers."""
    body = _ENV.get_template(template).render(**context)
    return web.Response(status=status, text=body, content_type="text/html", charset="utf-8",
                        headers=PAGE_HEADERS)


def static_files() -> dict[str, bytes]:
    """The stylesheet and script, read once from the package."""
    root = resources.files("server.fleetpage") / "static"
    return {name: (root / name).read_bytes() for name in STATIC_TYPES}


def static_response(name: str, body: bytes) -> web.Response:
    """A static file with its type, the same security headers and a short cache lifetime."""
    headers = {**PAGE_HEADERS, "Cache-Control": "max-age=300"}
    return web.Response(body=body, headers={**headers, "Content-Type": f"{STATIC_TYPES[name]}; charset=utf-8"})
