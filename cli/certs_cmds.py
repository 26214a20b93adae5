"""`mco certs init DIR`: CA + serving certificate for `mco serve --tls-listen` (exit 1 bad input, 2 I/O)."""

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
