"""Who may fetch what: client address allow/deny lists and per-pool bearer tokens.

- CIDR rules (the MCS leaves this to the cluster network; we do it ourselves): a client matching any
  `deny` network is refused; when `allow` is non-empty the client must match one of its networks.
- Tokens: a pool with tokens requires `Authorization: Bearer <token>`; several tokens per pool may be
  valid at once, so a rotation can overlap (hypershift#1008). Comparison is constant-time. Token files
  are read once at start-up: restart the server to rotate them (docs/server-security.md).
- Node tokens (`--node-secret-file`): a node proves its name with the HMAC-SHA256 of that name under the
  secret, so every replica checks it without shared state; a token for node A never acts for node B.
- Administrator tokens (`--admin-token-file`): the only credential the node administration routes
  (`/nodes`, `/nodes/{name}`, `/nodes/{name}/labels`) accept; they are accepted nowhere else, and no pool or
  node token is accepted there. Without one those routes refuse everyone.
- The Authorization header is judged one way on every route: absent, or exactly one printable-ASCII
  value (`Bearer <token>`, any other scheme counting as no token); sent twice, non-ASCII or with
  control characters it is a malformed request (HTTP 400 naming the header), never a 500.
Refusals carry a reason for the access log; the HTTP answer is always 403 with no config bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from server.errors import PathError, ServerError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class AuthSettingsError(PathError, ValueError):
    """A token file or CIDR given to the server is unusable; `path` names the option."""


class Refused(ServerError):
    """The request is not allowed (HTTP 403); `reason` is for the log only."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BadAuthorization(Refused):
    """The Authorization header cannot be read: HTTP 400 naming the header where a route tells it apart,
    else a refusal like any other."""

    path = "header Authorization"

    def __init__(self, message: str) -> None:
        super().__init__(f"header Authorization: {message}")
        self.message = message


NODE_TOKEN_CONTEXT = b"mco node token v1\x00"
MIN_SECRET_BYTES = 16


def bearer_token(values: Sequence[str] | str | None) -> str | None:
    """The token of the request's Authorization header values (None without one); BadAuthorization if
    unreadable. A single string is one header value."""
    if not values:
        return None
    if isinstance(values, str):
        values = (values,)
    if len(values) > 1:
        raise BadAuthorization("given more than once")
    value = values[0]
    if not value.isascii() or not value.isprintable():
        raise BadAuthorization("must be printable ASCII")
    scheme, _, presented = value.strip().partition(" ")
    token = presented.strip()
    if scheme.lower() != "bearer" or not token:
        return None  # another scheme, or no token: no bearer token presented
    return token


def node_token(secret: bytes, node: str) -> str:
    """The bearer token of `node`: HMAC-SHA256 of its name under the node secret, hex."""
    return hmac.new(secret, NODE_TOKEN_CONTEXT + node.encode(), hashlib.sha256).hexdigest()


def read_node_secret(path: Path, *, option: str = "--node-secret-file") -> bytes:
    """The node secret: the file's bytes without surrounding whitespace, at least 16 of them."""
    try:
        secret = path.read_bytes().strip()
    except OSError as exc:
        raise AuthSettingsError(f"{option} {path}", f"cannot read: {exc.strerror or exc}") from None
    if len(secret) < MIN_SECRET_BYTES:
        raise AuthSettingsError(f"{option} {path}", f"secret shorter than {MIN_SECRET_BYTES} bytes")
    return secret


def parse_networks(values: Iterable[str], *, option: str) -> tuple[Network, ...]:
    """`10.0.0.0/8`, `::1`, `192.168.1.7` -> networks; error names the option and the bad value."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError as exc:
            raise AuthSettingsError(f"{option} {value}", f"not an IP network: {exc}") from None
    return tuple(networks)


def read_token_file(path: Path, *, option: str) -> tuple[str, ...]:
    """Tokens, one per non-empty line (several lines = rotation overlap)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise AuthSettingsError(f"{option} {path}", f"cannot read: {exc.strerror or exc}") from None
    tokens = tuple(line.strip() for line in text.splitlines() if line.strip())
    if not tokens:
        raise AuthSettingsError(f"{option} {path}", "no token in file")
    for t in tokens:
        if any(c.isspace() for c in t) or not t.isprintable():
            raise AuthSettingsError(f"{option} {path}", "a token must be one printable word per line")
    return tokens


@dataclass(frozen=True)
class AccessPolicy:
    """Networks and tokens; an empty policy lets everyone in."""

    allow: tuple[Network, ...] = ()
    deny: tuple[Network, ...] = ()
    tokens: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # pool -> accepted tokens
    all_pools_tokens: tuple[str, ...] = ()  # accepted for every pool (a fleet-wide token, --token-all)
    node_secret: bytes | None = None  # node authentication on (--node-secret-file)
    admin_tokens: tuple[str, ...] = ()  # the node administration routes (--admin-token-file); nothing else

    def check_admin(self, authorization: Sequence[str] | str | None) -> None:
        """Raise Refused unless the request carries an administrator token (BadAuthorization: unreadable)."""
        presented = bearer_token(authorization)
        if not self.admin_tokens:
            raise Refused("no administrator token configured (--admin-token-file)")
        if presented is None:
            raise Refused("no bearer token")
        if not _one_of(presented, self.admin_tokens):
            raise Refused("token not accepted for node administration")

    def check_address(self, remote: str | None) -> None:
        """Raise Refused unless the client address passes the deny and allow lists."""
        if not self.allow and not self.deny:
            return
        verdict = _address_verdict(self.allow, self.deny, remote or "")
        if verdict:
            raise Refused(verdict)

    def pool_requires_token(self, pool: str) -> bool:
        """Whether requests for this pool must carry a bearer token."""
        return bool(self.all_pools_tokens) or pool in self.tokens

    def check_token(self, pool: str, authorization: Sequence[str] | str | None) -> None:
        """Raise Refused unless the Authorization header values carry a token accepted for `pool`.

        BadAuthorization (a 400) when the header is unreadable, whether or not the pool needs a token.
        """
        presented = bearer_token(authorization)
        accepted = self.tokens.get(pool, ()) + self.all_pools_tokens
        if not accepted:
            return
        if presented is None:
            raise Refused("no bearer token")
        if not _one_of(presented, accepted):
            raise Refused(f"token not accepted for pool {pool}")

    @property
    def nodes_authenticated(self) -> bool:
        """Whether node reports and slot claims need the node's own token."""
        return self.node_secret is not None

    def check_node(self, node: str, authorization: Sequence[str] | str | None) -> None:
        """Raise Refused unless the request carries `node`'s own token (no-op without a node secret)."""
        presented = bearer_token(authorization)
        if self.node_secret is None:
            return
        if presented is None:
            raise Refused("no node token")
        if not hmac.compare_digest(presented.encode(), node_token(self.node_secret, node).encode()):
            raise Refused(f"token not accepted for node {node}")


def _one_of(presented: str, accepted: Iterable[str]) -> bool:
    """Whether `presented` is one of `accepted`, compared in constant time against every one."""
    token = presented.encode()
    ok = False
    for candidate in accepted:
        ok |= hmac.compare_digest(token, candidate.encode())
    return ok


@lru_cache(maxsize=4096)
def _address_verdict(allow: tuple[Network, ...], deny: tuple[Network, ...], remote: str) -> str:
    """"" when allowed, else why not (memoised per client address)."""
    try:
        addr = ipaddress.ip_address(remote.split("%", 1)[0])
    except ValueError:
        return f"client address {remote!r} unknown"
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if any(addr in net for net in deny):
        return f"client {addr} in a denied network"
    if allow and not any(addr in net for net in allow):
        return f"client {addr} not in an allowed network"
    return ""
