"""`mco render` and `mco diff` (see cli/main.py for exit-code conventions).

    mco render CLUSTER_DIR [--store DIR|etcd://...]      render every pool; table: pool, rendered, sources, changed
    mco render CLUSTER_DIR --pool P --print [-o yaml|json]
                                                         the pool's rendered MachineConfig on stdout
    mco render CLUSTER_DIR --explain P [PATH|UNIT|karg]  which manifest (file:line) set what, and what it overrode
    mco render CLUSTER_DIR --explain P [QUERY] --machine M  the same for machine document M's config
    mco diff A B --store S [--cluster DIR] [-o json]      two rendered configs from the store
    mco diff --pool P --store S --cluster DIR [-o json]   the pool's current target against a fresh render

`--store` is a directory (created by `mco render` if missing) or an etcd URL with the etcd TLS flags, opened by
the one opener of stores (cli/etcd_flags.py `store_of_flag`, fleet/store_open.py). Without `--store`, `mco render`
renders into memory (nothing is written). Exit codes: 0 ok; 1 a pool
failed to render (errors on stderr, file:line:col and field path) or a name is unknown; 2 unusable
directory or store.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from cli.errors import InvalidInput, UsageError
from cli.etcd_flags import add_etcd_flags, store_of_flag, tls_flags_without_etcd
from cli.output_flags import add_deprecated_switch, add_format
from fleet.diff import diff_rendered
from fleet.disruption import disruption
from fleet.disruption_policy import DisruptionPolicy, PolicyError
from fleet.etcd_url import is_etcd_url
from fleet.rendered import RenderedConfig
from fleet.store import MemoryStore, NotFound, Store
from fleet.store_open import open_store
from ignition.canonical import pretty_json
from renderer.inputs import load_inputs
from renderer.provenance import explain
from renderer.render import RenderResult, render_cluster

STORE = "DIR|etcd://HOST:PORT[,...][/PREFIX]"


def register(subparsers: Any) -> None:
    """Add `mco render` and `mco diff`."""
    render = subparsers.add_parser("render", help="render a cluster directory into rendered-<pool>-<hash> configs",
                                   description="Render every pool of a cluster directory into the store.")
    render.add_argument("cluster_dir", metavar="CLUSTER_DIR", type=Path)
    render.add_argument("--store", metavar=STORE, help="store directory or etcd URL (default: render in memory, "
                        "write nothing)")
    add_etcd_flags(render)
    render.add_argument("--pool", help="the pool to --print")
    render.add_argument("--print", dest="print_config", action="store_true",
                        help="print the pool's rendered MachineConfig document")
    add_format(render, ("yaml", "json"), "yaml", what="format for --print")
    render.add_argument("--explain", nargs="+", metavar=("POOL", "QUERY"),
                        help="provenance of POOL's rendered config, optionally for one path, unit or karg")
    render.add_argument("--machine", metavar="NAME",
                        help="with --print or --explain: the config of machine document NAME of the pool instead")
    render.set_defaults(func=run_render)

    diff = subparsers.add_parser("diff", help="what changes between two rendered configs, and the disruption",
                                 description="Compare two rendered configs (or a pool's target with a fresh "
                                             "render) and say what a node must do to apply the change.")
    diff.add_argument("names", nargs="*", metavar="NAME", help="two rendered config names (A B)")
    diff.add_argument("--store", metavar=STORE, required=True, help="store directory or etcd URL")
    add_etcd_flags(diff)
    diff.add_argument("--pool", help="compare the pool's current target with a fresh render of --cluster")
    diff.add_argument("--cluster", type=Path, help="cluster directory (fresh render; disruption policies)")
    add_format(diff, ("text", "json"), "text")
    add_deprecated_switch(diff, "--json", "json")
    diff.set_defaults(func=run_diff)


@contextmanager
def _store(value: str | None, args: argparse.Namespace, *, create: bool) -> Iterator[Store]:
    """The store `--store` names: none (memory, nothing written), etcd (`store_of_flag`), or a directory, created
    when missing if `create` (a first render starts a store; a diff only reads one). Closed afterwards."""
    if value is not None and (is_etcd_url(value) or not create):  # (a directory read only must exist: 2 if not)
        with store_of_flag(value, args) as store:
            yield store
        return
    if value == "":
        raise UsageError("--store: empty (give a directory or an etcd URL)")
    if tls_flags_without_etcd(args):
        raise UsageError("--etcd-cacert/--etcd-cert/--etcd-key need --store etcd://...")
    try:
        store = open_store(Path(value) if value is not None else None)
    except OSError as exc:
        raise UsageError(f"cannot open store {value}: {exc.strerror or exc}") from exc
    yield store


def _render(cluster_dir: Path, store: Store) -> RenderResult:
    return render_cluster(cluster_dir, store=store)  # (ClusterUnusable: its exit code from cli/errors.py)


def _report_errors(result: RenderResult) -> None:
    for message in result.errors:
        print(f"error: {message}", file=sys.stderr)
    for message in result.warnings:
        print(message, file=sys.stderr)
    for pool in result.pools.values():
        for message in pool.errors:
            print(f"error: pool {pool.pool}: {message}", file=sys.stderr)
        for message in pool.warnings:
            print(f"pool {pool.pool}: {message}", file=sys.stderr)


def _table(result: RenderResult) -> str:
    rows = [("POOL", "RENDERED", "SOURCES", "CHANGED")]
    for name in sorted(result.pools):
        pool = result.pools[name]
        rendered = pool.rendered.name if pool.rendered else "-"
        status = "yes" if pool.changed else ("DEGRADED" if pool.errors else "no")
        if pool.errors and pool.rendered:
            status = "DEGRADED (kept)"
        rows.append((name, rendered, str(len(pool.rendered.sources if pool.rendered and not pool.errors
                                             else pool.sources)), status))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def document(rendered: RenderedConfig, output: str) -> str:
    """The rendered MachineConfig as YAML or JSON text."""
    data = rendered.to_dict()
    data["provenance"] = dict(sorted(data["provenance"].items()))  # (kept in merge order by the render)
    if output == "json":
        return pretty_json(data)
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1 << 30)


def run_render(args: argparse.Namespace) -> int:
    """`mco render`."""
    if args.print_config and not args.pool:
        raise UsageError("--print needs --pool P")
    if args.pool and not args.print_config:
        raise UsageError("--pool is used with --print")
    if args.machine is not None and not (args.print_config or args.explain):
        raise UsageError("--machine is used with --print or --explain")
    if args.explain and len(args.explain) > 2:
        raise UsageError("--explain takes a pool and at most one PATH, UNIT or karg")
    with _store(args.store, args, create=True) as store:
        return _run_render(args, store)


def _run_render(args: argparse.Namespace, store: Store) -> int:
    result = _render(args.cluster_dir, store)
    _report_errors(result)
    wanted = args.pool or (args.explain[0] if args.explain else None)
    if wanted is not None:
        pool = result.pools.get(wanted)
        if pool is None:
            raise InvalidInput(f"no pool {wanted!r} (pools: {', '.join(sorted(result.pools))})")
        if pool.rendered is None or pool.errors:
            raise InvalidInput(f"pool {wanted} did not render")
        shown = pool.rendered
        if args.machine is not None:
            machine = result.machines.get(args.machine)
            if machine is None or machine.pool != wanted:
                raise InvalidInput(f"no machine {args.machine!r} in pool {wanted} (machines: "
                                   f"{', '.join(sorted(n for n, c in result.machines.items() if c.pool == wanted))})")
            shown = machine
        if args.print_config:
            sys.stdout.write(document(shown, args.output))
            return 0
        query = args.explain[1] if len(args.explain) > 1 else None
        lines = explain(shown.provenance, query)
        if not lines:
            raise InvalidInput(f"nothing in {shown.name} matches {query!r}")
        width = max(len(k) for k, _ in lines)
        print(f"# {shown.name}")
        for key, value in lines:
            print(f"{key.ljust(width)}  <- {value}")
        return 0
    print(_table(result))
    return 0 if result.ok else 1


def _policy(cluster_dir: Path | None) -> DisruptionPolicy:
    if cluster_dir is None:
        return DisruptionPolicy.defaults()
    inputs = load_inputs(cluster_dir)
    mc = inputs.machine_configuration
    try:
        return DisruptionPolicy.from_dict(mc.spec if mc else None)
    except PolicyError as exc:
        source = mc.origin if mc else ""
        raise InvalidInput(f"{source} {exc}") from exc


def _get(store: Store, name: str) -> RenderedConfig:
    return store.get_rendered(name)  # (NotFound exits 1, other StoreErrors 2: cli/errors.py)


def run_diff(args: argparse.Namespace) -> int:
    """`mco diff`."""
    with _store(args.store, args, create=False) as store:
        return _run_diff(args, store)


def _run_diff(args: argparse.Namespace, store: Store) -> int:
    if args.pool:
        if args.names:
            raise UsageError("give either two rendered names or --pool P, not both")
        if args.cluster is None:
            raise UsageError("--pool needs --cluster CLUSTER_DIR to render afresh")
        try:
            record = store.get_pool(args.pool)
        except NotFound as exc:
            raise InvalidInput(f"pool {args.pool} has no target in the store: {exc}") from exc
        if not record.current:
            raise InvalidInput(f"pool {args.pool} has no current target in the store")
        old = _get(store, record.current)
        scratch = MemoryStore()
        scratch.put_rendered(old)
        scratch.put_pool(record)
        result = _render(args.cluster, scratch)
        pool = result.pools.get(args.pool)
        if pool is None or pool.errors or pool.rendered is None:
            if pool is not None:
                for message in pool.errors:
                    print(f"error: pool {args.pool}: {message}", file=sys.stderr)
            raise InvalidInput(f"pool {args.pool} does not render from {args.cluster}")
        new = pool.rendered
    else:
        if len(args.names) != 2:
            raise UsageError("give two rendered config names: mco diff A B --store S")
        old, new = _get(store, args.names[0]), _get(store, args.names[1])
    changes = diff_rendered(old.spec, new.spec)
    verdict = disruption(changes, _policy(args.cluster))
    if args.output == "json":
        print(pretty_json({"from": old.name, "to": new.name, "diff": changes.to_dict(),
                           "disruption": verdict.to_dict()}), end="")
        return 0
    print(f"--- {old.name}")
    print(f"+++ {new.name}")
    for line in changes.summary() or ["(no changes)"]:
        print(line)
    drain = "drain" if verdict.drain else "no drain"
    actions = ", ".join(str(a) for a in verdict.actions)
    print(f"disruption: {verdict.verdict} ({drain}; actions: {actions})")
    for reason in verdict.reasons:
        print(f"  {reason}")
    return 0
