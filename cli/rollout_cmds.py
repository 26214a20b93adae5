"""`mco rollout`: steer a pool's rollout (docs/rollouts.md).

    mco rollout resume POOL (--store DIR|etcd://... | --server URL --token-file F [--ca F])
                                                          continue after an automatic pause
    mco rollout revert POOL (...)                         back to the last config every machine reached; pinned
    mco rollout plan POOL [CLUSTER_DIR] (...) [-o text|json] [--output-file F] [--fail-on drain|reboot]...
                                                          what the rollout to the pool's (or a fresh render's)
                                                          target would do to each machine; writes nothing

`--server` goes through a running server's rollout routes (server/rollout_routes.py) with the administrator
token of `mco serve --admin-token-file`; a plan of CLUSTER_DIR needs `--store`.

Exit codes: 0 done; 1 refused (nothing to revert to, a resume of a pool its rollout has not paused, an unknown pool,
a plan that would drain or reboot with `--fail-on`, a cluster directory that does not render); 2 usage (an unknown
`--fail-on` or `-o` value too), an unusable store or an unreachable server.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.admin_flags import add_target_flags, target_of
from cli.errors import InvalidInput, UsageError
from cli.output_flags import add_format, add_output_file, write_output
from fleet.clock import system_clock
from fleet.disruption_policy import DisruptionPolicy, PolicyError
from fleet.names import valid_name
from fleet.rendered import PoolRecord, RenderedConfig
from fleet.rollout_control import plan_of, resume, revert, rollout_state
from fleet.rollout_plan import plan_rollout, recorded_durations
from fleet.store import MemoryStore, NotFound, Store
from ignition.canonical import pretty_json


def register(subparsers: Any) -> None:
    """Add `mco rollout resume|revert|plan`."""
    rollout = subparsers.add_parser("rollout", help="steer a pool's rollout: resume, revert, plan",
                                    description="Resume a paused rollout, revert a pool, or preview a rollout.")
    verbs = rollout.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    for verb, helptext in (("resume", "continue a rollout the first failing machine paused"),
                           ("revert", "set the pool back to the last config every machine reached (pinned)"),
                           ("plan", "what a rollout would do to each machine, before anything is written")):
        p = verbs.add_parser(verb, help=helptext, description=helptext)
        p.add_argument("pool", metavar="POOL")
        if verb == "plan":
            p.add_argument("cluster_dir", metavar="CLUSTER_DIR", type=Path, nargs="?",
                           help="render this directory afresh and plan the move to its target (default: the "
                                "pool's target in the store)")
            add_format(p, ("text", "json"), "text")
            add_output_file(p, help="write the plan to FILE instead of stdout (whole or not at all)")
            p.add_argument("--fail-on", choices=("drain", "reboot"), action="append", default=[],
                           help="exit 1 when any machine would drain (or reboot); repeatable: any one met fails")
        add_target_flags(p)
        p.set_defaults(func={"resume": run_resume, "revert": run_revert, "plan": run_plan}[verb])


def _pool_name(pool: str) -> str:
    """`pool`, or InvalidInput (exit 1) for a name no pool can have: an unknown pool, however it is spelt (as
    kubectl answers NotFound for a malformed name), never a usage error."""
    if not valid_name(pool):
        raise InvalidInput(f"no pool {pool[:64]!r}: not a pool name (a lowercase DNS subdomain name)")
    return pool


def _pool(store: Store, pool: str) -> PoolRecord:
    try:
        return store.get_pool(_pool_name(pool))
    except NotFound:
        raise InvalidInput(f"no pool {pool!r} in the store (pools: {', '.join(store.list_pools()) or 'none'})") from None


def _steer(args: argparse.Namespace, verb: str) -> dict[str, Any]:
    """`resume` or `revert` on the store, or through the server's rollout route; the pool's rollout state after."""
    with target_of(args) as (store, client):
        if client is not None:
            return dict(client.json(f"/pools/{_pool_name(args.pool)}/rollout/{verb}", method="POST"))
        _pool(store, args.pool)
        record = (resume if verb == "resume" else revert)(store, args.pool, now=system_clock())
        return rollout_state(store, record)


def run_resume(args: argparse.Namespace) -> int:
    """`mco rollout resume POOL`."""
    state = _steer(args, "resume")
    print(f"pool {state['pool']}: rollout resumed at {state['resumedAt']}; failures reported before it no longer "
          "pause it")
    return 0


def run_revert(args: argparse.Namespace) -> int:
    """`mco rollout revert POOL`."""
    state = _steer(args, "revert")
    print(f"pool {state['pool']}: target {state['revertedFrom']} -> {state['target']}; pinned until the manifests "
          f"render something other than {state['revertedFrom']}")
    return 0


def _fresh(store: Store, record: PoolRecord, cluster_dir: Path) -> tuple[PoolRecord, RenderedConfig, DisruptionPolicy]:
    """The pool's record and target as a render of `cluster_dir` would make them (into memory, from the stored
    record: the same pin and history), and the cluster's disruption policy."""
    from renderer.inputs import load_inputs
    from renderer.render import render_cluster

    scratch = MemoryStore()
    if record.current:
        scratch.put_rendered(store.get_rendered(record.current))
    scratch.put_pool(record)
    result = render_cluster(cluster_dir, store=scratch)
    outcome = result.pools.get(record.name)
    if outcome is None or outcome.errors or outcome.rendered is None:
        for message in outcome.errors if outcome is not None else ():
            print(f"error: pool {record.name}: {message}", file=sys.stderr)
        raise InvalidInput(f"pool {record.name} does not render from {cluster_dir}")
    scratch.put_rendered(outcome.rendered)
    mc = load_inputs(cluster_dir).machine_configuration
    try:
        policy = DisruptionPolicy.from_dict(mc.spec if mc else None)
    except PolicyError as exc:
        raise InvalidInput(f"{mc.origin if mc else ''} {exc}") from exc
    return scratch.get_pool(record.name), outcome.rendered, policy


def _text(plan: dict[str, Any]) -> str:
    rows = [("NODE", "CURRENT", "ACTION", "WAVE", "START", "END")]
    for m in plan["machines"]:
        action = m["action"] + (f" ({', '.join(m['units'])})" if m["units"] else "") + (" +drain" if m["drain"] else "")
        if m.get("pull"):  # the new OS image, pulled before its slot
            action += f" (pulls {m['pull']['start']:.0f}s-{m['pull']['end']:.0f}s)"
        wave = ("at once" if m["action"] == "provision" else "-") if m["wave"] is None else (f"{m['wave']} canary" if m["canary"] else str(m["wave"]))
        rows.append((m["node"], m["currentConfig"] or "-", action, wave, f"{m['start']:.0f}s", f"{m['end']:.0f}s"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    moving = sum(m["action"] != "none" for m in plan["machines"])
    lines.append(f"pool {plan['pool']} -> {plan['target']}: {moving} of {len(plan['machines'])} machines move; "
                 f"expected total {plan['total']:.0f}s from {plan['begins']} (maintenance windows included)")
    if plan.get("waitsFor"):
        lines.append(f"the rollout stalls until {', '.join(plan['waitsFor'])} is available again: the machines "
                     "already unavailable fill maxUnavailable (times above assume it is when the stall begins)")
    hold = plan.get("hold")
    if hold:
        after = ("machines start when it opens (times below include the wait)" if hold["kind"] == "window" else
                 "the machines below move as shown once it is lifted, times counted from then")
        lines.insert(0, f"pool {plan['pool']} is held ({hold['kind']}): {hold['reason']}; {after}")
    defaults = [f"{a} {d['seconds']:.0f}s" for a, d in plan["durations"].items() if d["source"] == "default"]
    if defaults:
        lines.append(f"durations not recorded by the fleet, defaults used: {', '.join(defaults)}")
    return "\n".join(lines)


def _planned(args: argparse.Namespace) -> dict[str, Any]:
    with target_of(args) as (store, client):
        if client is not None:
            if args.cluster_dir is not None:
                raise UsageError("a plan of CLUSTER_DIR renders it against the store: give --store, not --server")
            return dict(client.json(f"/pools/{_pool_name(args.pool)}/rollout/plan"))
        record = _pool(store, args.pool)
        if args.cluster_dir is None:
            return plan_of(store, args.pool, system_clock())
        record, target, policy = _fresh(store, record, args.cluster_dir)
        fleet = store.list_node_status()
        statuses = [s for s in fleet if s.pool == args.pool]
        return plan_rollout(record, target, statuses, rendered=store.get_rendered, policy=policy, now=system_clock(),
                            durations=recorded_durations(fleet)).to_dict()


def run_plan(args: argparse.Namespace) -> int:
    """`mco rollout plan POOL [CLUSTER_DIR]`."""
    plan = _planned(args)
    text = pretty_json(plan) if args.output == "json" else _text(plan) + "\n"
    if args.output_file is not None:
        write_output(args.output_file, text)
    else:
        print(text, end="")
    failed = 0
    for condition in dict.fromkeys(args.fail_on):
        flagged = [m["node"] for m in plan["machines"] if m["wave"] is not None and m[condition]]
        if flagged:
            print(f"mco: {len(flagged)} machine(s) would {condition}: {', '.join(flagged)}", file=sys.stderr)
            failed = 1
    return failed
