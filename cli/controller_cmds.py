"""`mco controller CLUSTER_DIR --store etcd://...`: a candidate for the one elected controller that renders.

Exit codes: 0 after SIGINT/SIGTERM (leadership resigned at once), 2 for bad flags or an unreachable etcd at start.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from cli.errors import UsageError
from cli.etcd_flags import add_etcd_flags, etcd_settings


def register(subparsers: Any) -> None:
    """Add `mco controller`."""
    p = subparsers.add_parser(
        "controller", help="render a cluster directory into an etcd store, as the elected leader of N candidates",
        description="Campaign for leadership through an etcd lease; while leading, render CLUSTER_DIR into the "
                    "store whenever it changes. Replicas (`mco serve --store etcd://...`) serve the result.")
    p.add_argument("cluster_dir", metavar="CLUSTER_DIR", type=Path, help="the cluster directory to render")
    p.add_argument("--store", required=True, metavar="etcd://HOST:PORT[,HOST:PORT...][/PREFIX]",
                   help="the etcd cluster (and key prefix, default mco) shared with the replicas")
    add_etcd_flags(p)
    p.add_argument("--lease-ttl", type=int, default=5, metavar="SECONDS",
                   help="leadership lease: after a crash another candidate leads within this plus one second "
                        "(default 5, at least 2)")
    p.add_argument("--id", default=None, metavar="NAME", help="this candidate's name (default HOST-PID)")
    p.add_argument("--poll-interval", type=float, default=0.5, metavar="SECONDS",
                   help="how often the leader checks the cluster directory for changes")
    p.set_defaults(func=run_controller)


def run_controller(args: argparse.Namespace) -> int:
    """Campaign and render until interrupted."""
    from fleet.etcd_client import Connection
    from fleet.etcd_election import Election
    from fleet.etcd_url import is_etcd_url
    from fleet.store import ElectedStore, StoreError
    from fleet.store_open import close_store, open_store
    from server.controller import Controller

    if not args.cluster_dir.is_dir():
        raise UsageError(f"{args.cluster_dir}: not a directory")
    if not is_etcd_url(args.store):
        raise UsageError(f"--store {args.store}: the controller needs an etcd://HOST:PORT[,...][/PREFIX] store")
    if args.lease_ttl < 2:
        raise UsageError("--lease-ttl must be at least 2 (etcd's shortest lease)")
    if args.poll_interval <= 0:
        raise UsageError("--poll-interval must be positive")
    settings = etcd_settings(args.store, args)
    logging.basicConfig(level=logging.INFO, format="mco controller: %(message)s", stream=sys.stderr)
    identity = args.id or f"{socket.gethostname()}-{os.getpid()}"
    conn = Connection(settings)
    store = open_store(settings)
    try:
        assert isinstance(store, ElectedStore)  # (an etcd store)
        election = Election(conn, identity=identity, ttl=args.lease_ttl)
        try:
            election.leader()  # reach etcd once before announcing anything
        except StoreError as exc:
            raise UsageError(f"--store: cannot reach etcd: {exc}") from None
        controller = Controller(args.cluster_dir, store, election, interval=args.poll_interval)

        def stop(signum: int, frame: object) -> None:
            controller.stop.set()
            election.resign()  # at once, even in the middle of a render: its fenced writes then fail whole

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        print(f"mco: controller candidate {identity} on {args.store}", file=sys.stderr, flush=True)
        controller.run()
    finally:
        close_store(store)
        conn.close()
    return 0
