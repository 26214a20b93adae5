"""`mco serve CLUSTER_DIR`: render the cluster, serve it to booting machines, re-render on change.
`mco serve --store etcd://...` (no CLUSTER_DIR): a stateless replica serving what the elected controller
(`mco controller`) rendered into etcd.

Exit codes: 0 after SIGINT/SIGTERM, 2 for bad flags, unreadable token or node-secret files, a --token
for a pool the rendered cluster does not have, or ports that cannot be opened.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.errors import UsageError
from cli.etcd_flags import add_etcd_flags, etcd_settings, tls_flags_without_etcd


def register(subparsers: Any) -> None:
    """Add `mco serve`."""
    p = subparsers.add_parser("serve", help="render a cluster directory and serve its configs over HTTP(S)",
                              description="Render CLUSTER_DIR, serve /config/<pool> to Ignition, re-render on change.")
    p.add_argument("cluster_dir", metavar="CLUSTER_DIR", type=Path, nargs="?",
                   help="the cluster directory to render (not with an etcd store: the controller renders)")
    p.add_argument("--store", metavar="DIR|etcd://HOST:PORT[,HOST:PORT...][/PREFIX]",
                   help="store directory (rendered configs, pool records, node status; survives restarts), "
                        "or an etcd cluster to serve as a stateless replica")
    add_etcd_flags(p)
    p.add_argument("--listen", default="127.0.0.1:22624", metavar="HOST:PORT",
                   help="plain HTTP listener (default 127.0.0.1:22624; 'off' for none)")
    p.add_argument("--tls-listen", metavar="HOST:PORT", help="HTTPS listener, e.g. 0.0.0.0:22623 (needs --cert, --key)")
    p.add_argument("--cert", type=Path, metavar="FILE", help="serving certificate (PEM), reloaded when renewed")
    p.add_argument("--key", type=Path, metavar="FILE", help="serving key (PEM)")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="server processes sharing the ports (SO_REUSEPORT)")
    p.add_argument("--token", action="append", default=[], metavar="POOL=FILE",
                   help="require a bearer token for POOL; FILE holds accepted tokens, one per line (repeatable)")
    p.add_argument("--token-all", type=Path, metavar="FILE", help="tokens accepted for every pool")
    p.add_argument("--node-secret-file", type=Path, metavar="FILE",
                   help="turn node authentication on: a node's report or update claim must carry its own token "
                        "(`mco certs node-token --secret-file FILE NODE`)")
    p.add_argument("--admin-token-file", type=Path, metavar="FILE",
                   help="tokens (one per line) of the node administration routes (`mco nodes --server`): "
                        "accepted there only, and the only credential accepted there")
    p.add_argument("--max-connections", type=int, default=4096, metavar="N",
                   help="open connections per listener; more are closed at once (default 4096)")
    p.add_argument("--max-connections-per-client", type=int, default=256, metavar="N",
                   help="open connections per client address and listener (default 256)")
    p.add_argument("--allow", action="append", default=[], metavar="CIDR",
                   help="only clients in these networks may connect (repeatable)")
    p.add_argument("--deny", action="append", default=[], metavar="CIDR",
                   help="refuse clients in these networks, e.g. the pod network (repeatable)")
    p.add_argument("--default-version", metavar="X.Y.Z",
                   help="spec served when the Accept header names no Ignition version (default: the render's own)")
    p.add_argument("--no-node-annotations", action="store_true",
                   help="do not append /etc/machine-config-daemon/node-annotations.json")
    p.add_argument("--no-encapsulated", action="store_true",
                   help="do not append /etc/ignition-machine-config-encapsulated.json")
    p.add_argument("--no-machine-config-content", action="store_true",
                   help="do not append /etc/mcs-machine-config-content.json")
    p.add_argument("--access-log", default="-", metavar="FILE",
                   help="JSON access log: a file, '-' for stderr (default), 'off'")
    p.add_argument("--poll-interval", type=float, default=1.0, metavar="SECONDS",
                   help="how often to check the cluster directory, store and certificates")
    p.set_defaults(func=run_serve)


def build_settings(args: argparse.Namespace) -> Any:
    """Turn the flags into ServerSettings; every problem is a UsageError naming the flag."""
    from fleet.etcd_url import is_etcd_url
    from server.added_files import AppendOptions
    from server.auth import AccessPolicy, parse_networks, read_node_secret, read_token_file
    from server.negotiate import SUPPORTED_VERSIONS
    from server.settings import Limits, ServerSettings, parse_hostport

    etcd = None
    store_dir = None
    if args.store is not None and is_etcd_url(args.store):
        if args.cluster_dir is not None:
            raise UsageError(f"{args.cluster_dir}: with an etcd store the elected `mco controller` renders; "
                             "give no CLUSTER_DIR")
        etcd = etcd_settings(args.store, args)
    else:
        if tls_flags_without_etcd(args):
            raise UsageError("--etcd-cacert/--etcd-cert/--etcd-key need --store etcd://...")
        if args.cluster_dir is None:
            raise UsageError("CLUSTER_DIR required (or --store etcd://... for a replica)")
        if not args.cluster_dir.is_dir():
            raise UsageError(f"{args.cluster_dir}: not a directory")
        store_dir = Path(args.store) if args.store is not None else None
    try:
        listen = None if args.listen in ("off", "") else parse_hostport(args.listen, option="--listen")
        tls_listen = parse_hostport(args.tls_listen, option="--tls-listen") if args.tls_listen else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if tls_listen and not (args.cert and args.key):
        raise UsageError("--tls-listen needs --cert and --key")
    if (args.cert or args.key) and not tls_listen:
        raise UsageError("--cert/--key given without --tls-listen")
    if listen is None and tls_listen is None:
        raise UsageError("no listener: give --listen or --tls-listen")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.max_connections < 1 or args.max_connections_per_client < 1:
        raise UsageError("--max-connections and --max-connections-per-client must be at least 1")
    if args.default_version and args.default_version not in SUPPORTED_VERSIONS:
        raise UsageError(f"--default-version {args.default_version}: not one of {', '.join(SUPPORTED_VERSIONS)}")
    if args.poll_interval <= 0:
        raise UsageError("--poll-interval must be positive")
    tokens: dict[str, tuple[str, ...]] = {}
    for spec in args.token:  # an unusable token file or CIDR raises AuthSettingsError: exit 2 (cli/errors.py)
        pool, sep, file = spec.partition("=")
        if not sep or not pool or not file:
            raise UsageError(f"--token {spec}: expected POOL=FILE")
        tokens[pool] = tokens.get(pool, ()) + read_token_file(Path(file), option=f"--token {pool}")
    all_tokens = read_token_file(args.token_all, option="--token-all") if args.token_all else ()
    policy = AccessPolicy(allow=parse_networks(args.allow, option="--allow"),
                          deny=parse_networks(args.deny, option="--deny"),
                          tokens=tokens, all_pools_tokens=all_tokens,
                          node_secret=read_node_secret(args.node_secret_file) if args.node_secret_file else None,
                          admin_tokens=read_token_file(args.admin_token_file, option="--admin-token-file")
                          if args.admin_token_file else ())
    return ServerSettings(
        cluster_dir=args.cluster_dir, store_dir=store_dir, etcd=etcd, listen=listen, tls_listen=tls_listen,
        cert_file=args.cert, key_file=args.key, workers=args.workers, default_version=args.default_version,
        policy=policy, append=AppendOptions(node_annotations=not args.no_node_annotations,
                                            encapsulated=not args.no_encapsulated,
                                            machine_config_content=not args.no_machine_config_content),
        access_log=args.access_log, poll_interval=args.poll_interval,
        limits=Limits(max_connections=args.max_connections, max_per_client=args.max_connections_per_client))


def run_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from server.run import Running, run

    settings = build_settings(args)
    if settings.store_dir is None and settings.etcd is None and settings.workers == 1:
        print("mco: no --store: node status will not survive a restart", file=sys.stderr)
    if settings.policy.node_secret is None:
        print("mco: warning: no --node-secret-file: any client may report status for any node and claim its "
              "update slot", file=sys.stderr)

    def announce(running: Running) -> None:
        snapshot = running.state.snapshot
        pools = sorted(snapshot.pools) if snapshot else []
        for error in running.state.render_errors:
            print(f"mco: render: {error}", file=sys.stderr)
        for scheme, host, port in running.addresses:
            print(f"mco: serving {scheme}://{host}:{port} (pools: {', '.join(pools) or 'none yet'}; "
                  f"workers: {settings.workers})", file=sys.stderr)
        if running.addresses and pools:
            scheme, host, port = running.addresses[0]
            example = "worker" if "worker" in pools else pools[0]
            ca = f" --cacert {settings.cert_file.parent / 'ca.crt'}" if scheme == "https" and settings.cert_file else ""
            print(f"mco: fetch a config with: curl{ca} -H 'Accept: application/vnd.coreos.ignition+json;"
                  f"version=3.4.0' {scheme}://{host}:{port}/config/{example}", file=sys.stderr, flush=True)

    from fleet.store import StoreError

    try:
        run(settings, announce=announce)
    except StoreError as exc:
        raise UsageError(f"--store: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot listen: {exc.strerror or exc}") from None
    return 0
