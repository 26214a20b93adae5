"""`mco drift`: the drift nodes reported, and a node's unrepaired drift made declared state.

    mco drift list [--pool P] [-o text|json] --store DIR|etcd://...
    mco drift export NODE [--output-file FILE] --store DIR|etcd://...

`list` prints every drift event the node records keep (fleet/drift_events.py), newest first: when, node, pool,
kind, path, whether the node repaired it, and the fingerprints. `export` writes a MachineConfig (YAML) of NODE's
unrepaired drift (`mco apply --drift report`): each drifted file as found and each unit's enablement as found,
with its pool's role label and the name 99-POOL-NODE-drift (fleet/drift_export.py); put it in the cluster
directory's manifests/ to keep the change. Exit codes: 0 done, 1 unknown node or nothing to export, 2 usage or
I/O error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml

from cli.errors import InvalidInput
from cli.etcd_flags import add_etcd_flags, store_of_flag
from cli.output_flags import add_format, add_output_file, write_output


def register(subparsers: Any) -> None:
    """Add `mco drift list|export`."""
    p = subparsers.add_parser("drift", help="drift the nodes reported; a node's drift as a MachineConfig",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="drift_command", metavar="SUBCOMMAND")
    sub.required = True
    listing = sub.add_parser("list", help="every drift event the node records keep, newest first")
    listing.add_argument("--pool", help="only the nodes of this pool")
    add_format(listing, ("text", "json"), "text")
    export = sub.add_parser("export", help="a MachineConfig (YAML) of a node's unrepaired drift")
    export.add_argument("node", metavar="NODE")
    add_output_file(export)
    for parser, func in ((listing, run_list), (export, run_export)):
        parser.add_argument("--store", required=True, metavar="DIR|etcd://HOST:PORT[,...][/PREFIX]",
                            help="the store the server uses")
        add_etcd_flags(parser)
        parser.set_defaults(func=func)


def run_list(args: argparse.Namespace) -> int:
    """`mco drift list`."""
    from fleet.drift_export import inventory

    with store_of_flag(args.store, args) as store:
        rows = inventory(store.list_node_status(), pool=args.pool)
    if args.output == "json":
        json.dump(rows, sys.stdout, indent=2, sort_keys=True)
        print()
        return 0
    print(f"{'AT':<21}{'NODE':<20}{'POOL':<12}{'KIND':<9}{'REPAIRED':<10}PATH  (expected -> found)")
    for r in rows:
        print(f"{r['at']:<21}{r['node']:<20}{r['pool']:<12}{r['kind']:<9}{'yes' if r['repaired'] else 'no':<10}"
              f"{r['path']}  ({r['expected']} -> {r['found']})")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """`mco drift export NODE`."""
    from fleet.drift_export import export_machineconfig
    from fleet.store import NotFound

    with store_of_flag(args.store, args) as store:
        try:
            status = store.get_node_status(args.node)
        except NotFound:
            raise InvalidInput(f"no node {args.node!r} in the store") from None
    document = export_machineconfig(status)
    if document is None:
        raise InvalidInput(f"node {args.node} has no unrepaired drift to export (drift is exported from nodes run "
                           "with `mco apply --drift report`)")
    text = yaml.safe_dump(document, sort_keys=False)
    if args.output_file is None:
        sys.stdout.write(text)
    else:
        write_output(args.output_file, text)
    return 0
