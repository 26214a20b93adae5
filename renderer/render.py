"""Rendering a cluster directory into the store: the orchestration of the whole flow.

    cluster directory -> Inputs (inputs.py) -> per pool: render_pool (render_pool.py) -> store

What it decides:
- A pool with errors keeps its previous target and gets `RenderDegraded=True` with the MCO's message
  `Failed to render configuration for pool <pool>: <errors>`; the other pools still render.
- Problems owned by every pool or by the cluster as a whole are listed in `RenderResult.errors`
  (inputs.py says which degrade every pool).
- Everything is computed first, then written: new rendered configs (immutable, content-addressed),
  then pool records, each atomically. Nothing is half-written.
- When a pool's `spec.nodeSelector` changed (or a pool is new), every node is placed again by its labels once the
  pool records are written (fleet/node_admin.py `place_nodes`): a node the selectors now put in another pool is
  counted there at once, and is handed that pool's config through the ordinary rollout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from fleet.clock import Clock, system_clock, timestamp
from fleet.conditions import ConditionProblem
from fleet.disruption_policy import DisruptionPolicy, PolicyError
from fleet.node_admin import place_nodes, selectors_of
from fleet.rendered import Condition, HistoryEntry, PoolRecord, RenderedConfig
from fleet.rollout_control import with_pin
from fleet.store import NotFound, Store, StoreError
from ignition.report import path_str
from renderer.errors import StoreWriteFailed
from renderer.generated import Failure
from renderer.inputs import EVERY_POOL, WHOLE_CLUSTER, Inputs, load_inputs
from renderer.last_sync import failure_conditions
from renderer.machine_render import pool_of_machine, render_machines
from renderer.problems import Problem
from renderer.render_pool import PoolOutcome, render_pool
from renderer.validate_machineconfigs import Verdict

RENDER_DEGRADED = "RenderDegraded"


@dataclass(frozen=True)
class PoolRender:
    """One pool's outcome."""

    pool: str
    rendered: RenderedConfig | None   # the pool's current target after this render (old one kept on error)
    errors: tuple[str, ...]           # "manifests/50-x.yaml:12:9 $.spec.config...: path not absolute"
    changed: bool                     # target moved to a new rendered config
    warnings: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()     # MachineConfigs merged (merge order), even when the render failed


@dataclass(frozen=True)
class RenderResult:
    """Every pool's outcome, plus errors not tied to one pool."""

    pools: Mapping[str, PoolRender]
    errors: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    machines: Mapping[str, RenderedConfig] = field(default_factory=dict)  # machine document -> its config

    @property
    def ok(self) -> bool:
        """No errors anywhere."""
        return not self.errors and all(not p.errors for p in self.pools.values())


def _overrides(inputs: Inputs) -> tuple[str, ...]:
    mc = inputs.machine_configuration
    if mc is None:
        return ()
    block = mc.spec.get("irreconcilableValidationOverrides")
    storage = block.get("storage") if isinstance(block, Mapping) else None
    return tuple(str(s) for s in storage) if isinstance(storage, list) else ()


def _as_data(problem: Problem) -> ConditionProblem:
    """A problem as the condition records it beside the message (fleet/conditions.py)."""
    return ConditionProblem(problem.message, problem.source, problem.line, problem.col,
                            path_str(problem.path) if problem.path else "")


def _message(pool: str, errors: Sequence[Problem]) -> str:
    return f"Failed to render configuration for pool {pool}: " + "; ".join(p.format() for p in errors)


def _cluster_policy(inputs: Inputs) -> Mapping[str, Any] | None:
    """The MachineConfiguration's `spec.nodeDisruptionPolicy` as written, handed to agents beside the target."""
    mc = inputs.machine_configuration
    policy = mc.spec.get("nodeDisruptionPolicy") if mc is not None else None
    if not isinstance(policy, Mapping) or not policy:
        return None
    try:
        DisruptionPolicy.from_dict(mc.spec if mc is not None else None)
    except PolicyError:  # reported by the render; agents keep the defaults rather than a policy in error
        return None
    return dict(policy)


def _pin(previous: PoolRecord | None, rendered: RenderedConfig | None) -> str:
    """The config `mco rollout revert` left, while this render still yields it ("" : not pinned). The pin lasts
    until the manifests change (a render yielding any other config, or a failing one, which keeps the pin)."""
    if previous is None or not previous.reverted_from:
        return ""
    return previous.reverted_from if rendered is None or rendered.name == previous.reverted_from else ""


def _record(previous: PoolRecord | None, outcome: PoolOutcome, now: str,
            failures: Sequence[Failure] = (), policy: Mapping[str, Any] | None = None) -> tuple[PoolRecord, bool]:
    """The pool's new record; the bool says whether the target moved."""
    pool = outcome.pool
    old_current = previous.current if previous else None
    old_history = previous.history if previous else ()
    conditions = {c.type: c for c in (previous.conditions if previous else ())}
    current: str | None
    pinned = _pin(previous, outcome.rendered)
    if outcome.rendered is not None:
        current, sources = outcome.rendered.name, outcome.sources
        degraded = Condition(RENDER_DEGRADED, "False")
    else:
        current, sources = old_current, (previous.sources if previous else ())
        degraded = Condition(RENDER_DEGRADED, "True", reason="",  # the MCO leaves the reason empty
                             message=_message(pool.name, outcome.errors),
                             problems=tuple(_as_data(p) for p in outcome.errors))
    if pinned and previous is not None:
        current, sources = old_current, previous.sources
    old = conditions.get(RENDER_DEGRADED)
    since = old.last_transition_time if old is not None and old.status == degraded.status else now
    conditions[RENDER_DEGRADED] = replace(degraded, last_transition_time=since)
    conditions = with_pin(conditions, old_current, pinned, now)
    failure_conditions(conditions, failures, now)
    changed = current is not None and current != old_current
    history = old_history + ((HistoryEntry(current, now),) if changed and current else ())
    if pool.broken and previous is not None:  # keep what we knew of the pool's rollout settings
        max_unavailable, node_selector, paused = previous.max_unavailable, previous.selector, previous.paused
        settings = previous.rollout
    else:
        max_unavailable, node_selector, paused = pool.max_unavailable, pool.node_selector, pool.paused
        settings = pool.rollout
    return PoolRecord(name=pool.name, current=current, sources=sources,
                      conditions=tuple(conditions[k] for k in sorted(conditions)), history=history,
                      max_unavailable=max_unavailable, node_selector=node_selector, paused=paused,
                      disruption_policy=policy, rollout=settings,
                      resumed_at=previous.resumed_at if previous is not None else "", reverted_from=pinned,
                      require_machine=previous.require_machine if pool.broken and previous else pool.require_machine
                      ), changed


def _operator_state(now: PoolRecord | None, *, record: PoolRecord) -> PoolRecord:
    """`record` with the operator's rollout state as the store holds it now (`now`; the store's `update_pool` hands
    it over): a `mco rollout resume` or a pause recorded while this render ran is kept (a revert written meanwhile
    moved the target: the record read now wins whole)."""
    if now is None:
        return record
    if now.reverted_from and not record.reverted_from and record.current == now.reverted_from:
        return replace(now, rollout=record.rollout, max_unavailable=record.max_unavailable,
                       node_selector=record.node_selector, paused=record.paused,
                       disruption_policy=record.disruption_policy)
    pause = now.pause if now.pause is not None and now.pause.target == record.current else None  # a new target: gone
    return replace(record, resumed_at=now.resumed_at, pause=pause)


def render_cluster(cluster_dir: Path, *, store: Store,
                   clock: Clock | None = None) -> RenderResult:
    """Render every pool of `cluster_dir` into `store` (see the module docstring for the rules)."""
    clock = clock or system_clock
    inputs = load_inputs(Path(cluster_dir))
    now = timestamp(clock())
    validated: dict[int, Verdict] = {}  # id(MachineConfig) -> its verdict: each is validated once
    overrides = _overrides(inputs)
    outcomes: list[tuple[PoolOutcome, PoolRecord | None, RenderedConfig | None]] = []
    try:
        for pool in inputs.pools:
            previous: PoolRecord | None
            try:
                previous = store.get_pool(pool.name)
            except NotFound:
                previous = None
            current = None
            if previous is not None and previous.current:
                try:
                    current = store.get_rendered(previous.current)
                except NotFound:
                    current = None
            outcome = render_pool(pool, inputs, validated=validated, current=current, overrides=overrides)
            outcomes.append((outcome, previous, current))
        records: list[tuple[PoolRecord, bool]] = []
        for outcome, previous, _ in outcomes:
            if outcome.rendered is not None:
                store.put_rendered(outcome.rendered)
            records.append(_record(previous, outcome, now, inputs.failures.get(outcome.pool.name, ()),
                                   _cluster_policy(inputs)))
        known = {c.name: c for o, _, current in outcomes for c in (o.rendered, current) if c is not None}
        machines = render_machines(  # over each pool's target as its record now has it (a revert pins the old)
            Path(cluster_dir), inputs.cluster, inputs.machines, pool_of=pool_of_machine([r for r, _ in records]),
            targets={r.name: known.get(r.current) if r.current else None for r, _ in records},
            previous={o.pool.name: previous.machines for o, previous, _ in outcomes if previous is not None},
            broken=frozenset(inputs.broken_machines))
        records = [(replace(r, machines=tuple(machines.entries.get(r.name, ()))), changed) for r, changed in records]
        for config in machines.configs.values():
            store.put_rendered(config)
        for record, _ in records:
            store.update_pool(record.name, partial(_operator_state, record=record))
        if any(previous is None or previous.node_selector != record.node_selector
               for (_, previous, _), (record, _) in zip(outcomes, records, strict=True)):
            place_nodes(store, selectors_of(store))  # the nodes the new selectors select elsewhere move now
    except StoreError as exc:
        raise StoreWriteFailed(exc.path, f"store: {exc}") from exc
    pools: dict[str, PoolRender] = {}
    for (outcome, _previous, current), (record, changed) in zip(outcomes, records, strict=True):
        target = outcome.rendered if outcome.rendered is not None and not record.reverted_from else current
        pools[outcome.pool.name] = PoolRender(
            pool=outcome.pool.name, rendered=target, errors=tuple(p.format() for p in outcome.errors),
            changed=changed, warnings=tuple(p.format() for p in outcome.warnings), sources=outcome.sources)
    unowned_problems = [p for owner, p in inputs.problems if owner in (EVERY_POOL, WHOLE_CLUSTER)]
    unowned_problems += machines.problems
    unowned = tuple(dict.fromkeys(p.format() for p in unowned_problems if p.severity == "error"))
    unowned_warnings = tuple(dict.fromkeys(p.format() for p in unowned_problems if p.severity == "warning"))
    return RenderResult(pools=pools, errors=unowned, warnings=unowned_warnings, machines=machines.configs)
