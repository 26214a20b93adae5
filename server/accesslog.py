"""Structured access logs: one JSON object per request, never a secret.

Logged: time, worker pid, client address, method, path (never the query string, which may carry a
token), status, body bytes, duration, User-Agent and Accept (truncated), and what the handler noted in
`request[LOG_NOTE]` (pool, served version, rendered name, refusal reason). Never logged: Authorization,
cookies, request bodies.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

LOGGER_NAME = "mco.access"
# where handlers leave what the access log adds (a typed request key where aiohttp has them, 3.13+)
LOG_NOTE: Any = web.RequestKey("log", dict) if hasattr(web, "RequestKey") else "log"
_LIMIT = 200


def _clip(value: str | None) -> str:
    return (value or "")[:_LIMIT]


def entry_json(*, remote: str | None, method: str, path: str, status: int, nbytes: int, seconds: float,
               ua: str | None, accept: str | None, noted: dict[str, Any] | None) -> str:
    """One access-log line (the fields of the module docstring), as sorted JSON."""
    entry: dict[str, Any] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "worker": os.getpid(),
        "remote": remote,
        "method": method,
        "path": _clip(path),
        "status": status,
        "bytes": nbytes,
        "ms": round(seconds * 1000, 3),
        "ua": _clip(ua),
        "accept": _clip(accept),
    }
    if noted:
        entry.update(noted)
    return json.dumps(entry, sort_keys=True)


class JsonAccessLogger(AbstractAccessLogger):
    """aiohttp access logger writing one JSON line per request to the `mco.access` logger."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time_taken: float) -> None:
        self.logger.info(entry_json(
            remote=request.remote, method=request.method, path=request.rel_url.path, status=response.status,
            nbytes=response.body_length, seconds=time_taken, ua=request.headers.get("User-Agent"),
            accept=request.headers.get("Accept"), noted=request.get(LOG_NOTE)))

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)


def configure(target: str | None) -> logging.Logger | None:
    """Send access logs to a file, `-` (stderr), or nowhere (None / `off`); returns the logger to use."""
    logger = logging.getLogger(LOGGER_NAME)
    logger.propagate = False
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    if not target or target == "off":
        return None
    out: logging.Handler = logging.StreamHandler() if target == "-" else logging.FileHandler(target)
    out.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(out)
    logger.setLevel(logging.INFO)
    return logger
