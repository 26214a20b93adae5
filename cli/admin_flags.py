"""Where the administration commands act: a store (`--store DIR|etcd://...` with the etcd TLS flags), or a running
server through its administrator routes (`--server URL --token-file F [--ca F]`, the token of
`mco serve --admin-token-file`). Shared by `mco nodes` and `mco rollout`."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cli.errors import UsageError
from cli.etcd_flags import add_etcd_flags, store_of_flag, tls_flags_without_etcd


def add_target_flags(parser: argparse.ArgumentParser) -> None:
    """`--store` (and the etcd TLS flags), or `--server`, `--token-file`, `--ca`."""
    parser.add_argument("--store", metavar="DIR|etcd://HOST:PORT[,...][/PREFIX]", help="the store to work on")
    add_etcd_flags(parser)
    parser.add_argument("--server", metavar="URL", help="a running `mco serve` (instead of --store)")
    parser.add_argument("--token-file", type=Path, metavar="FILE",
                        help="the administrator token (`mco serve --admin-token-file`), with --server")
    parser.add_argument("--ca", type=Path, metavar="FILE", help="CA bundle of the server's certificate")


@contextmanager
def target_of(args: argparse.Namespace) -> Iterator[tuple[Any, Any]]:
    """(store, None) or (None, a ServerClient carrying the administrator token), as the flags say; UsageError
    for a wrong combination. The store is closed afterwards."""
    if (args.store is None) == (args.server is None):
        raise UsageError("give one of --store or --server")
    if args.server is not None:
        if tls_flags_without_etcd(args):
            raise UsageError("--etcd-cacert/--etcd-cert/--etcd-key need --store etcd://...")
        if args.token_file is None:
            raise UsageError("--server needs --token-file (the administrator token)")
        from applier.fetch import ServerClient

        try:
            token = args.token_file.read_text().strip()
        except OSError as exc:
            raise UsageError(f"--token-file {args.token_file}: {exc.strerror or exc}") from None
        yield None, ServerClient(args.server, ca=args.ca, token=token)
        return
    if args.token_file is not None or args.ca is not None:
        raise UsageError("--token-file and --ca go with --server")
    with store_of_flag(args.store, args) as store:
        yield store, None
