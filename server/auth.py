"""Who may fetch what: client address allow/deny lists and per-pool bearer tokens.

- CIDR rules (the MCS leaves this to the cluster network; we do it ourselves): a client matching any
  `deny` network is refused; when `allow` is non-empty the client must match one of its networks.
- Tokens: a pool with tokens requires `Authorization: Bearer <token>`; several tokens per pool may be
  valid at once, so a rotation can overlap (hypershift#1008). Comparison is constant-time.
Refusals carry a reason for the access log; the HTTP answer is always 403 with no config bytes.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class AuthSettingsError(ValueError):
    """A token file or CIDR given to the server is unusable; `path` names the option."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


class Refused(Exception):
    """The request is not allowed (HTTP 403); `reason` is for the log only."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
    all_pools_tokens: tuple[str, ...] = ()  # accepted for every pool (an admin or fleet-wide token)

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

    def check_token(self, pool: str, authorization: str | None) -> None:
        """Raise Refused unless `authorization` carries a token accepted for `pool`."""
        accepted = self.tokens.get(pool, ()) + self.all_pools_tokens
        if not accepted:
            return
        if not authorization:
            raise Refused("no bearer token")
        scheme, _, presented = authorization.partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            raise Refused("authorization is not a bearer token")
        token = presented.strip().encode()
        ok = False
        for candidate in accepted:
            ok |= hmac.compare_digest(token, candidate.encode())
        if not ok:
            raise Refused(f"token not accepted for pool {pool}")


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
