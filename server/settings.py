"""Settings of one `mco serve`: a small frozen dataclass the CLI fills in and every part reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from server.added_files import AppendOptions
from server.auth import AccessPolicy

if TYPE_CHECKING:
    from fleet.etcd_url import EtcdSettings


@dataclass(frozen=True)
class Limits:
    """Bounds on what a client may send (aiohttp answers 400/413/431 beyond them)."""

    max_line_size: int = 4096        # request line
    max_field_size: int = 8190       # one header
    max_headers: int = 64            # header count
    max_body: int = 64 * 1024        # POST bodies (node status reports are small)
    keepalive_timeout: float = 75.0
    read_timeout: float = 10.0       # a request head (or body) must arrive within this many seconds
    handshake_timeout: float = 10.0  # a TLS handshake must finish within this many seconds
    max_connections: int = 4096      # open connections per listener (gate.py)
    max_per_client: int = 256        # open connections per client address and listener


@dataclass(frozen=True)
class ServerSettings:
    """Everything `mco serve` was told.

    cluster_dir      the cluster directory to render (None: serve what the store already holds)
    store_dir        where rendered configs, pool records and node reports live (None: in memory)
    etcd             the etcd cluster to mirror instead (no cluster_dir: `mco controller` renders)
    listen           plain HTTP (host, port) or None
    tls_listen       HTTPS (host, port) or None; needs cert_file and key_file
    workers          server processes sharing the ports with SO_REUSEPORT (the first one renders)
    default_version  spec served when the Accept header names no Ignition version
                     (None: the rendered config's own version)
    poll_interval    seconds between checks of the cluster directory / store / certificate files
    """

    cluster_dir: Path | None
    store_dir: Path | None = None
    etcd: EtcdSettings | None = None  # `--store etcd://...`: a stateless replica of the etcd store
    listen: tuple[str, int] | None = ("127.0.0.1", 22624)
    tls_listen: tuple[str, int] | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    workers: int = 1
    default_version: str | None = None
    policy: AccessPolicy = field(default_factory=AccessPolicy)
    append: AppendOptions = field(default_factory=AppendOptions)
    limits: Limits = field(default_factory=Limits)
    access_log: str | None = "-"
    poll_interval: float = 1.0
    gzip_level: int = 6


def parse_hostport(value: str, *, option: str) -> tuple[str, int]:
    """`127.0.0.1:22624`, `[::1]:22623`, `:22624` (all addresses) -> (host, port)."""
    host, sep, port = value.rpartition(":")
    if not sep:
        raise ValueError(f"{option} {value}: expected HOST:PORT")
    host = host.strip("[]") or "0.0.0.0"
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"{option} {value}: port {port!r} is not a number") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"{option} {value}: port out of range")
    return host, number
