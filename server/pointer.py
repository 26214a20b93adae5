"""The pointer config: the small Ignition config an installer hands a machine so it fetches the real one.

`ignition.config.merge` (or `replace`) points at `<url>/config/<pool>` (with `?mac=...&hostname=...` for one
machine's own config, `--machine`, or `?node=NAME` for a node's, `--node`); `ignition.security.tls.
certificateAuthorities` carries our CA as a base64 data URL (as the MCO's installer stub does); a bearer
token travels as an `Authorization` header of that reference (`httpHeaders`, spec 3.1+): the pool's token, or
with `--node` the node's own token (server/machine_choice.py: with node authentication on, a node's config is
served to that token only, from its first boot on).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

from cryptography import x509

from fleet.machines import FactError, normalise
from fleet.names import valid_name
from server.errors import ServerError

POINTER_VERSIONS = ("3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0")


class PointerError(ServerError, ValueError):
    """An input of the pointer config is unusable; `path` names the flag."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def config_url(base: str, pool: str) -> str:
    """`https://host:22623` + `worker` -> `https://host:22623/config/worker` (a full /config/ URL is kept)."""
    if not valid_name(pool):
        raise PointerError("--pool", f"{pool!r} is not a lowercase DNS name")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PointerError("--url", f"{base!r} must be an http:// or https:// URL with a host")
    if parts.query or parts.fragment:
        raise PointerError("--url", "must not have a query or fragment")
    path = parts.path.rstrip("/")
    if not path.endswith(f"/config/{pool}"):
        path = f"{path}/config/{pool}"
    return f"{parts.scheme}://{parts.netloc}{path}"


def ca_data_url(pem: bytes) -> str:
    """The CA bundle as `data:text/plain;charset=utf-8;base64,...`; refuses bytes that hold no certificate."""
    try:
        certs = x509.load_pem_x509_certificates(pem)
    except ValueError as exc:
        raise PointerError("--ca", f"not a PEM certificate: {exc}") from None
    if not certs:
        raise PointerError("--ca", "no certificate in file")
    return "data:text/plain;charset=utf-8;base64," + base64.b64encode(pem).decode()


def machine_query(facts: Sequence[str]) -> str:
    """`mac=52:54:00:aa:bb:cc&hostname=node-a` from `KEY=VALUE` strings naming selector keys (fleet/machines.py):
    the query the server picks the machine's own config by, values normalised."""
    pairs: dict[str, str] = {}
    for fact in facts:
        key, sep, value = fact.partition("=")
        if not sep:
            raise PointerError("--machine", f"{fact!r} is not KEY=VALUE")
        if key in pairs:
            raise PointerError("--machine", f"{key} given more than once")
        try:
            pairs[key] = normalise(key, value)
        except FactError as exc:
            raise PointerError(f"--machine {key}", exc.message) from None
    return urlencode(pairs)


def node_query(node: str, machine: Sequence[str]) -> str:
    """`node=NAME`: the query naming a node's own config on day 2 (never beside a machine's facts)."""
    if not valid_name(node):
        raise PointerError("--node", f"{node!r} is not a node name (a lowercase DNS name)")
    if machine:
        raise PointerError("--node", "a machine is named by --node or by its --machine facts, not both")
    return urlencode({"node": node})


def _bearer(token: str, flag: str) -> str:
    token = token.strip()
    if not token or any(c.isspace() for c in token) or not token.isprintable():
        raise PointerError(flag, "the token must be one printable word")
    return f"Bearer {token}"


def pointer_config(*, pool: str, url: str, ca_pem: bytes | None = None, token: str | None = None,
                   replace: bool = False, version: str = "3.1.0", machine: Sequence[str] = (), node: str = "",
                   node_token: str | None = None) -> dict[str, Any]:
    """The pointer config as a JSON-ready dict (`machine`: KEY=VALUE facts naming one machine, `machine_query`;
    `node`: the node whose own config it fetches, with `node_token`, its node token, instead of the pool's)."""
    if version not in POINTER_VERSIONS:
        raise PointerError("--spec-version", f"{version!r} is not one of {', '.join(POINTER_VERSIONS)}")
    source = config_url(url, pool)
    if node:
        source += "?" + node_query(node, machine)
    elif machine:
        source += "?" + machine_query(machine)
    reference: dict[str, Any] = {"source": source}
    if node_token is not None and (not node or token is not None):
        raise PointerError("--node-token-file", "a node's token goes with --node, and instead of --token-file")
    authorization = _bearer(token, "--token-file") if token is not None else \
        _bearer(node_token, "--node-token-file") if node_token is not None else None
    if authorization is not None:
        if version == "3.0.0":
            raise PointerError("--spec-version", "httpHeaders (the token) need spec 3.1.0 or newer")
        reference["httpHeaders"] = [{"name": "Authorization", "value": authorization}]
    ignition: dict[str, Any] = {"version": version,
                                "config": {"replace": reference} if replace else {"merge": [reference]}}
    if ca_pem is not None:
        ignition["security"] = {"tls": {"certificateAuthorities": [{"source": ca_data_url(ca_pem)}]}}
    return {"ignition": ignition}
