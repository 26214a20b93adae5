"""The etcd flags `mco serve` and `mco controller` share: `--store etcd://...` and the TLS client files."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cli.errors import UsageError


def add_etcd_flags(parser: argparse.ArgumentParser) -> None:
    """`--etcd-cacert`, `--etcd-cert`, `--etcd-key` (the `--store` flag itself is each command's own)."""
    parser.add_argument("--etcd-cacert", type=Path, metavar="FILE", help="CA bundle that signed the etcd members' certificates")
    parser.add_argument("--etcd-cert", type=Path, metavar="FILE", help="client certificate for etcd (with --etcd-key)")
    parser.add_argument("--etcd-key", type=Path, metavar="FILE", help="client key for etcd")


def etcd_settings(url: str, args: argparse.Namespace) -> Any:
    """Parse `--store etcd://...` with the TLS flags; a UsageError names what is wrong."""
    from fleet.etcd_url import parse_url

    for flag in ("etcd_cacert", "etcd_cert", "etcd_key"):
        path = getattr(args, flag)
        if path is not None and not path.is_file():
            raise UsageError(f"--{flag.replace('_', '-')} {path}: not a readable file")
    try:
        return parse_url(url, cacert=args.etcd_cacert, cert=args.etcd_cert, key=args.etcd_key)
    except ValueError as exc:
        raise UsageError(f"--store {exc}") from None


def tls_flags_without_etcd(args: argparse.Namespace) -> bool:
    """Whether an --etcd-* flag was given although the store is not etcd."""
    return any(getattr(args, f) is not None for f in ("etcd_cacert", "etcd_cert", "etcd_key"))


@contextmanager
def store_of_flag(value: str, args: argparse.Namespace) -> Iterator[Any]:
    """The store a `--store DIR|etcd://...` flag names (with the TLS flags), closed afterwards; a UsageError names
    what is wrong (fleet/store_open.py opens it)."""
    from fleet.etcd_url import is_etcd_url
    from fleet.store_open import close_store, open_store

    if is_etcd_url(value):
        where: Any = etcd_settings(value, args)
    elif tls_flags_without_etcd(args):
        raise UsageError("--etcd-cacert/--etcd-cert/--etcd-key need --store etcd://...")
    else:
        where = Path(value)
        if not where.is_dir():
            raise UsageError(f"--store {where}: not a directory")
    store = open_store(where)
    try:
        yield store
    finally:
        close_store(store)
