"""`mco ignition pointer`: write the pointer config a machine boots with (exit 1 bad input, 2 I/O)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.errors import InvalidInput, UsageError
from cli.output_flags import add_output_file, write_output
from ignition.canonical import pretty_json


def register(subparsers: Any) -> None:
    """Add `mco ignition pointer`."""
    p = subparsers.add_parser("pointer", help="write the pointer config that makes a machine fetch its pool's config",
                              description="Print an Ignition config whose ignition.config.merge (or replace) points "
                                          "at URL/config/POOL, trusting --ca and sending --token-file (or with --node, "
                                          "--node-token-file) as a bearer token.")
    p.add_argument("--pool", required=True, help="the pool whose config the machine fetches")
    p.add_argument("--url", required=True, help="the server, e.g. https://HOST:22623")
    p.add_argument("--ca", type=Path, metavar="FILE", help="CA certificate to trust (e.g. DIR/ca.crt)")
    p.add_argument("--token-file", type=Path, metavar="FILE", help="file holding the pool's bearer token")
    p.add_argument("--replace", action="store_true", help="use ignition.config.replace instead of merge")
    p.add_argument("--machine", action="append", default=[], metavar="KEY=VALUE",
                   help="a fact naming this machine (mac, uuid, serial, hostname; repeatable): the server answers "
                        "with the config of the machine document it matches")
    p.add_argument("--node", default="", metavar="NAME",
                   help="the node whose own config the machine fetches (?node=NAME; not with --machine): a machine "
                        "re-installed after it became a node, or provisioned with its node token")
    p.add_argument("--node-token-file", type=Path, metavar="FILE",
                   help="file holding the node's own token (mco certs node-token), sent instead of --token-file's")
    p.add_argument("--spec-version", default="3.1.0", help="spec of the pointer config (default 3.1.0)")
    add_output_file(p, help="write the pointer config to FILE instead of stdout", old=("-o", "--output"))
    p.set_defaults(func=run_pointer)


def _read(path: Path, flag: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot read: {exc.strerror or exc}") from None


def _token(path: Path, flag: str) -> str:
    """The first token in a token file (one per line)."""
    lines = [line.strip() for line in _read(path, flag).decode(errors="replace").splitlines() if line.strip()]
    if not lines:
        raise InvalidInput(f"{flag} {path}: no token in file")
    return lines[0]


def run_pointer(args: argparse.Namespace) -> int:
    """Build, then print or write, the pointer config."""
    from server.pointer import pointer_config

    ca = _read(args.ca, "--ca") if args.ca else None
    token = _token(args.token_file, "--token-file") if args.token_file else None
    node_token = _token(args.node_token_file, "--node-token-file") if args.node_token_file else None
    config = pointer_config(pool=args.pool, url=args.url, ca_pem=ca, token=token, replace=args.replace,
                            version=args.spec_version, machine=args.machine, node=args.node,
                            node_token=node_token)  # an unusable input raises PointerError: exit 1 (cli/errors.py)
    text = pretty_json(config)
    if args.output_file:
        write_output(args.output_file, text, mode=0o600 if token or node_token else 0o644)  # a token is a secret
    else:
        sys.stdout.write(text)
    return 0
