"""`mco nodes`: node records, their labels and the pool those labels put them in.

    mco nodes list              [-o text|json] (--store DIR|etcd://... | --server URL --token-file F [--ca F])
    mco nodes get NODE          [-o text|json] ...
    mco nodes label NODE K=V K2- [-o text|json] ...

A node's labels decide its pool (fleet/membership.py, as the MCO's GetPoolsForNode); relabelling moves it
through the ordinary rollout. `--store` works on the store directly (a directory, or etcd as `mco serve`
opens it); `--server` goes through a running server's node administration routes, which need the token of
`mco serve --admin-token-file`. Exit codes: 0 done, 1 refused or unknown node, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cli.admin_flags import add_target_flags, target_of
from cli.errors import UsageError


def register(subparsers: Any) -> None:
    """Add `mco nodes list|get|label`."""
    p = subparsers.add_parser("nodes", help="node records: labels, pool membership, state",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="nodes_command", metavar="SUBCOMMAND")
    sub.required = True
    listing = sub.add_parser("list", help="every node with its pool, state and labels")
    get = sub.add_parser("get", help="one node's record: labels, membership, state, history")
    get.add_argument("node", metavar="NODE")
    label = sub.add_parser("label", help="set (K=V) or remove (K-) labels of a node; its pool follows")
    label.add_argument("node", metavar="NODE")
    label.add_argument("edits", metavar="K=V|K-", nargs="+")
    for parser, func in ((listing, run_list), (get, run_get), (label, run_label)):
        add_target_flags(parser)
        parser.add_argument("-o", "--output", choices=("text", "json"), default="text", help="output format")
        parser.set_defaults(func=func)


class _Target:
    """Where the commands act: a store, or a server's node administration routes (`client`)."""

    def __init__(self, store: Any = None, client: Any = None) -> None:
        self.store = store
        self.client = client

    def nodes(self) -> dict[str, Any]:
        if self.client is not None:
            return dict(self.client.json("/nodes"))
        from fleet.node_admin import node_list, selectors_of

        return node_list(self.store.list_node_status(), selectors_of(self.store))

    def node(self, name: str) -> dict[str, Any]:
        if self.client is not None:
            return dict(self.client.json(f"/nodes/{_path_name(name)}"))
        from fleet.node_admin import node_view, selectors_of

        return node_view(self.store.get_node_status(name), selectors_of(self.store))

    def label(self, name: str, put: dict[str, str], remove: tuple[str, ...]) -> dict[str, Any]:
        if self.client is not None:
            patch: dict[str, str | None] = {**put, **dict.fromkeys(remove)}
            return dict(self.client.json(f"/nodes/{_path_name(name)}/labels", method="PATCH", json=patch))
        from fleet.node_admin import node_view, relabel, selectors_of

        selectors = selectors_of(self.store)
        return node_view(relabel(self.store, name, put, remove, selectors), selectors)


def _path_name(name: str) -> str:
    from fleet.store import check_name

    return check_name("nodes", name)  # a name that is one never needs quoting in a path


def _labels_text(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "-"


def _print_node(view: dict[str, Any]) -> None:
    membership = view.get("membership") or {}
    lines = [f"name:     {view['name']}", f"pool:     {view['pool'] or '(none)'}",
             f"labels:   {_labels_text(view.get('labels') or {})}"]
    if membership.get("reason"):
        lines.append(f"unpooled: {membership['reason']}")
    if membership.get("note"):
        lines.append(f"note:     {membership['note']}")
    lines += [f"state:    {view['state']}", f"current:  {view['currentConfig'] or '-'}",
              f"desired:  {view['desiredConfig'] or '-'}", f"message:  {view['message'] or '-'}",
              f"reported: {view['reportedAt'] or '-'}"]
    timeline = view.get("timeline") or []
    if timeline:
        lines.append("update phases:")
        lines += [f"  {e['at']}  {e['phase']:<16}  {e['config']}  {e.get('detail', '')}".rstrip() for e in timeline]
    history = view.get("history") or []
    if history:
        lines.append("history (newest first):")
        lines += [f"  {h['reportedAt']}  {h['state']:<8}  {h['currentConfig'] or '-'} -> {h['desiredConfig'] or '-'}"
                  f"  {h['message']}".rstrip() for h in history]
    print("\n".join(lines))


def _emit(args: argparse.Namespace, data: dict[str, Any], text: Any) -> int:
    if args.output == "json":
        json.dump(data, sys.stdout, indent=2, sort_keys=True)
        print()
    else:
        text(data)
    return 0


def _with_target(args: argparse.Namespace, act: Any) -> int:
    """`act(target)` on the store or server the flags name (cli/admin_flags.py)."""
    with target_of(args) as (store, client):
        return int(act(_Target(store=store, client=client)))


def run_list(args: argparse.Namespace) -> int:
    """Print every node."""
    def table(data: dict[str, Any]) -> None:
        rows = [("NAME", "POOL", "STATE", "PHASE", "LABELS")]
        rows += [(n["name"], n["pool"] or "(none)", n["state"], (n.get("phase") or {}).get("phase") or "-",
                  _labels_text(n.get("labels") or {})) for n in data["items"]]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        for row in rows:
            print("  ".join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True)) + "  " + row[4])

    return _with_target(args, lambda t: _emit(args, t.nodes(), table))


def run_get(args: argparse.Namespace) -> int:
    """Print one node."""
    return _with_target(args, lambda t: _emit(args, t.node(args.node), _print_node))


def run_label(args: argparse.Namespace) -> int:
    """Relabel one node and print it as it now is."""
    from fleet.node_labels import LabelError, parse_edits

    try:
        put, remove = parse_edits(args.edits)
    except LabelError as exc:
        raise UsageError(str(exc)) from None
    return _with_target(args, lambda t: _emit(args, t.label(args.node, put, remove), _print_node))
