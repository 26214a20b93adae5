"""`mco certs init DIR`: CA + serving certificate for `mco serve --tls-listen` (exit 1 bad input, 2 I/O).

`mco certs node-token --secret-file F NODE`: the bearer token NODE presents when `mco serve` runs with
`--node-secret-file F` (HMAC-SHA256 of the node name under the secret; exit 1 for a bad node name, 2 for
an unreadable or too short secret file).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.errors import InvalidInput, UsageError


def register(subparsers: Any) -> None:
    """Add `mco certs` and `mco certs init`."""
    group = subparsers.add_parser("certs", help="certificates for the HTTPS listener")
    sub = group.add_subparsers(dest="certs_command", metavar="SUBCOMMAND")
    sub.required = True
    p = sub.add_parser("init", help="create a CA (or reuse DIR's) and issue a serving certificate",
                       description="Write DIR/ca.crt, ca.key, tls.crt, tls.key (keys 0600). An existing CA is reused, "
                                   "so running it again renews only the serving certificate.")
    p.add_argument("dir", metavar="DIR", type=Path)
    p.add_argument("--dns", action="append", default=[], metavar="NAME", help="DNS subject alternative name (repeatable)")
    p.add_argument("--ip", action="append", default=[], metavar="ADDR", help="IP subject alternative name (repeatable)")
    p.add_argument("--days", type=int, default=365, help="validity of the serving certificate (default 365)")
    p.add_argument("--ca-days", type=int, default=3650, help="validity of a new CA (default 3650)")
    p.add_argument("--cn", default="mco-server", help="common name of the serving certificate")
    p.set_defaults(func=run_init)
    t = sub.add_parser("node-token", help="print the bearer token of a node (for mco serve --node-secret-file)",
                       description="Print NODE's token: what `mco apply --token-file` sends so that a server run "
                                   "with --node-secret-file accepts its reports and update claims.")
    t.add_argument("node", metavar="NODE", help="the node name (as it reports itself)")
    t.add_argument("--secret-file", type=Path, required=True, metavar="FILE",
                   help="the node secret given to mco serve --node-secret-file")
    t.set_defaults(func=run_node_token)


def run_node_token(args: argparse.Namespace) -> int:
    """Print the token on stdout (nothing else)."""
    from fleet.names import MAX_NAME, valid_name
    from server.auth import node_token, read_node_secret

    if not valid_name(args.node):
        raise InvalidInput(f"NODE: {args.node[:64]!r} is not a lowercase DNS name of at most {MAX_NAME} characters")
    secret = read_node_secret(args.secret_file, option="--secret-file")  # unusable: exit 2 (cli/errors.py)
    print(node_token(secret, args.node))
    return 0


def run_init(args: argparse.Namespace) -> int:
    """Create the files and say which."""
    from server.certs import CertError, init_certs

    dns, ips = list(args.dns), list(args.ip)
    if not dns and not ips:
        dns, ips = ["localhost"], ["127.0.0.1", "::1"]
    try:
        result = init_certs(args.dir, dns=dns, ips=ips, days=args.days, ca_days=args.ca_days, common_name=args.cn)
    except CertError as exc:
        if exc.path.startswith("--"):
            raise InvalidInput(str(exc)) from None
        raise UsageError(str(exc)) from None
    print(f"{'created' if result.ca_created else 'reused'} CA {result.ca_cert}", file=sys.stderr)
    print(f"issued {result.cert} (key {result.key}, SANs: {', '.join(dns + ips)})", file=sys.stderr)
    return 0
