"""Where an etcd store lives: the `etcd://` URL and the TLS client files, parsed without the etcd client.

URL: `etcd://HOST:PORT[,HOST:PORT...][/PREFIX]` (PREFIX defaults to `mco`). Every key lives under
`/<PREFIX>/v1/`, so a new layout can live beside an old one. Kept apart from fleet/etcd_client.py so that
telling a directory from etcd (fleet/store_open.py, the CLI) does not load the gRPC client.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SCHEME = "etcd://"
DEFAULT_PREFIX = "mco"
LAYOUT = "v1"


def is_etcd_url(value: str) -> bool:
    """Whether a `--store` value names etcd rather than a directory."""
    return value.startswith(SCHEME)


@dataclass(frozen=True)
class EtcdSettings:
    """Where the cluster is and how to authenticate to it (the `--etcd-cacert/--etcd-cert/--etcd-key` files)."""

    endpoints: tuple[tuple[str, int], ...]
    prefix: str = DEFAULT_PREFIX
    cacert: Path | None = None
    cert: Path | None = None
    key: Path | None = None

    @property
    def root(self) -> bytes:
        """The versioned key prefix every key starts with."""
        return f"/{self.prefix}/{LAYOUT}/".encode()


def parse_url(url: str, *, cacert: Path | None = None, cert: Path | None = None,
              key: Path | None = None) -> EtcdSettings:
    """`etcd://HOST:PORT[,HOST:PORT...][/PREFIX]` -> EtcdSettings; ValueError names what is wrong."""
    if not is_etcd_url(url):
        raise ValueError(f"{url}: expected etcd://HOST:PORT[,HOST:PORT...][/PREFIX]")
    rest = url[len(SCHEME):]
    hosts, _, prefix = rest.partition("/")
    prefix = prefix.strip("/") or DEFAULT_PREFIX
    if any(not part or part in (".", "..") for part in prefix.split("/")):
        raise ValueError(f"{url}: prefix {prefix!r} has an empty or dot segment")
    endpoints = []
    for item in hosts.split(","):
        host, sep, port = item.rpartition(":")
        host = host.strip("[]")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{url}: endpoint {item!r} is not HOST:PORT")
        endpoints.append((host, int(port)))
    if (cert is None) != (key is None):
        raise ValueError("--etcd-cert and --etcd-key go together")
    return EtcdSettings(tuple(endpoints), prefix, cacert, cert, key)
