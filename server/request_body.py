"""A JSON request body, read with a deadline and parsed as `json` does (ignition/canonical.py `parse_json`): every failure a 4xx naming the field."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from aiohttp.http import HttpProcessingError

from ignition.canonical import parse_json
from server.errors import ServerError


class BodyError(ServerError):
    """The request body cannot be used: the status and the field to name."""

    def __init__(self, status: int, message: str, path: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.path = path


async def read_json(request: web.Request, *, timeout: float) -> Any:
    """The request body as JSON; BodyError (a 4xx naming the field) for anything unreadable."""
    try:
        async with asyncio.timeout(timeout):
            raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise BodyError(413, f"body larger than {request.client_max_size} bytes", "body") from None
    except TimeoutError:
        raise BodyError(408, f"body not received within {timeout:g} s", "body") from None
    except (web.RequestPayloadError, HttpProcessingError, ConnectionError) as exc:  # llhttp / the decompressor
        # refused the body (gzip that is not gzip, a chunk or length that does not add up), or the client left
        encoding = request.headers.get("Content-Encoding")
        if encoding:
            raise BodyError(400, f"body is not valid {encoding[:20]!r} data ({type(exc).__name__})",
                            "header Content-Encoding") from None
        raise BodyError(400, f"body cannot be read ({type(exc).__name__})", "body") from None
    try:
        return parse_json(raw)
    except RecursionError:
        raise BodyError(400, "body nests too deeply", "$") from None
    except UnicodeDecodeError:
        raise BodyError(400, "body is not UTF-8", "$") from None
    except ValueError as exc:
        raise BodyError(400, f"body is not JSON: {exc}", "$") from None
