"""Who may see which pool on the page: the API's rules (server/auth.py), with a cookie for browsers.

The client address passes the same allow/deny lists as every route. A pool with tokens needs one of them,
exactly as `GET /config/<pool>` does; a browser cannot add an `Authorization` header to a link, so the
token may also come from the `mco_token` cookie that the page's form sets (HttpOnly, SameSite=Strict:
other sites can neither read it nor send it along). An `Authorization` header wins over the cookie.
"""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web

from server.auth import AccessPolicy, Refused

COOKIE = "mco_token"
MAX_TOKEN = 4096


def authorization(request: web.Request) -> str | None:
    """The bearer credential the request presents, from the header or the cookie."""
    header = request.headers.get("Authorization")
    if header:
        return header
    cookie = request.cookies.get(COOKIE, "")
    return f"Bearer {cookie}" if cookie else None


def may_see(policy: AccessPolicy, pool: str, credential: str | None) -> bool:
    """Whether the credential opens this pool (True for a pool without tokens)."""
    try:
        policy.check_token(pool, credential)
    except Refused:
        return False
    return True


def token_opens_some_pool(policy: AccessPolicy, token: str, pools: Iterable[str]) -> bool:
    """Whether a token typed into the form is accepted for some pool (so it is worth keeping)."""
    credential = f"Bearer {token}"
    candidates = {*pools, *policy.tokens}
    return any(policy.pool_requires_token(p) and may_see(policy, p, credential) for p in candidates)


def safe_next(value: str) -> str:
    """Where to go after the form: a path on this server under the page, never another site."""
    if value == "/" or (value.startswith("/ui/") and "\\" not in value and "//" not in value):
        return value
    return "/ui/"


def set_token_cookie(response: web.StreamResponse, token: str, *, secure: bool) -> None:
    """Remember the token for this browser session only."""
    response.set_cookie(COOKIE, token, path="/", httponly=True, samesite="Strict", secure=secure)
