"""A node's record: what it last reported, the history of its reports, its labels, update phases and drift.

Pure data (no I/O), shared by the stores, the server and the applier; `with_report` is the one rule for how a
new report joins the record it replaces.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from fleet.drift_events import DriftEvent, kept, stored_events
from fleet.label_selector import role_labels
from fleet.phases import PhaseEntry, Timeline, advance, timeline_from, updates_from

NODE_STATES = ("Done", "Working", "Degraded")
HISTORY_LIMIT = 12     # distinct reports a node's record keeps (an update is ~3: handed out, Working, Done)
HISTORY_MESSAGE = 500  # characters of a message a history entry keeps (the record keeps the whole last one)


class Transition(NamedTuple):
    """One distinct report in a node's history: what it said, and when it first said it (`reported_at`).

    A named tuple: a replica decodes every record its watch delivers, and a tuple is built several times
    faster than a frozen dataclass."""

    state: str
    current_config: str
    desired_config: str
    message: str
    reported_at: str

    @classmethod
    def of(cls, status: NodeStatus) -> Transition:
        """The entry for a report (its message cut at HISTORY_MESSAGE characters)."""
        message = status.message
        if len(message) > HISTORY_MESSAGE:
            message = message[:HISTORY_MESSAGE - 1] + "…"
        return cls(status.state, status.current_config, status.desired_config, message, status.reported_at)

    def same(self, other: Transition) -> bool:
        """Whether `other` says the same (only its time differs): a repeat, not a new entry."""
        return self[:4] == other[:4]

    def to_dict(self) -> dict[str, str]:
        """JSON form (the report's field names)."""
        return {"state": self.state, "currentConfig": self.current_config, "desiredConfig": self.desired_config,
                "message": self.message, "reportedAt": self.reported_at}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Transition:
        """Read the stored form (state and config names interned: 10,000 records share a few of each)."""
        get = data.get
        return cls(sys.intern(str(get("state", ""))), sys.intern(str(get("currentConfig", ""))),
                   sys.intern(str(get("desiredConfig", ""))), str(get("message", "")), str(get("reportedAt", "")))


@dataclass(frozen=True, slots=True)
class NodeStatus:
    """What a node last reported: its pool, current and desired rendered config, state and message.

    `history` is the node's last HISTORY_LIMIT distinct reports, newest first, the first being this one
    (`with_report` builds it; empty in a record written before histories, or by a writer that keeps none).
    `registered_at` is when the node first reported or claimed (`with_report` keeps it): the rollout order's
    age (MCO `sortNodeList` uses the Node's creation time). `labels` are the node's labels (fleet/node_labels.py):
    set when it registers, changed only by an administrator; `pool` is the pool they put it in
    (fleet/membership.py; "" for none). `timeline` holds the phases of its current (or last) update and `updates`
    those of earlier ones, newest first (fleet/phases.py; a report carries the phase it enters as a one-entry
    timeline, which `with_report` adds).
    """

    name: str
    pool: str
    current_config: str
    desired_config: str
    state: str
    message: str = ""
    reported_at: str = ""
    history: tuple[Transition, ...] = ()
    registered_at: str = ""
    labels: Mapping[str, str] = None  # type: ignore[assignment]  # None: its pool's role label (__post_init__)
    timeline: Timeline = ()
    updates: tuple[Timeline, ...] = ()
    drift: tuple[DriftEvent, ...] = ()  # the last drift events, newest first (fleet/drift_events.py)
    pull_config: str = ""  # the config whose OS image the server let it pull before its slot (fleet/image_pulls.py)
    pull_at: str = ""      # when (RFC 3339): the permission lapses PULL_LEASE after
    staged: str = ""       # the config whose OS image it reported pulled and prepared, before its slot

    def __post_init__(self) -> None:
        if self.labels is None:  # a record made before labels: the role label it registered with
            object.__setattr__(self, "labels", role_labels(self.pool))

    def transitions(self) -> tuple[Transition, ...]:
        """The history, newest first; a record without one has its own report as its history."""
        return self.history or (Transition.of(self),)

    @property
    def phase(self) -> PhaseEntry | None:
        """The phase its update is in (the last one entered), if it reported any."""
        return self.timeline[-1] if self.timeline else None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the POST body's field names; `history` only when there is one)."""
        data: dict[str, Any] = {
            "name": self.name,
            "pool": self.pool,
            "currentConfig": self.current_config,
            "desiredConfig": self.desired_config,
            "state": self.state,
            "message": self.message,
            "reportedAt": self.reported_at,
            "labels": dict(self.labels),
        }
        if self.history:
            data["history"] = [t.to_dict() for t in self.history]
        if self.registered_at:
            data["registeredAt"] = self.registered_at
        if self.timeline:
            data["timeline"] = [e.to_dict() for e in self.timeline]
        if self.updates:
            data["updates"] = [[e.to_dict() for e in t] for t in self.updates]
        if self.drift:
            data["drift"] = [e.to_dict() for e in self.drift]
        if self.pull_config:
            data["pull"] = {"config": self.pull_config, "at": self.pull_at}
        if self.staged:
            data["staged"] = self.staged
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NodeStatus:
        """Read the stored JSON form (a record without `history` loads with none). Pool, state and config names
        are interned: 10,000 records share a few of each, in less memory, and a pass over every record's state
        (the page's counts) compares one string object."""
        history = data.get("history")
        pull = data.get("pull")
        pool = sys.intern(str(data["pool"]))
        labels = data.get("labels")
        return cls(
            name=str(data["name"]),
            pool=pool,
            current_config=sys.intern(str(data.get("currentConfig", ""))),
            desired_config=sys.intern(str(data.get("desiredConfig", ""))),
            state=sys.intern(str(data.get("state", ""))),
            message=str(data.get("message", "")),
            reported_at=str(data.get("reportedAt", "")),
            history=tuple(Transition.from_dict(t) for t in history[:HISTORY_LIMIT] if isinstance(t, Mapping))
            if isinstance(history, list) else (),
            registered_at=str(data.get("registeredAt", "")),
            labels=_shared_labels(labels) if isinstance(labels, Mapping) else role_labels(pool),
            timeline=timeline_from(data.get("timeline")),
            updates=updates_from(data.get("updates")),
            drift=stored_events(data.get("drift")),
            pull_config=sys.intern(str(pull.get("config", ""))) if isinstance(pull, Mapping) else "",
            pull_at=str(pull.get("at", "")) if isinstance(pull, Mapping) else "",
            staged=sys.intern(str(data.get("staged", ""))),
        )


_LABEL_SETS: dict[frozenset[tuple[str, str]], dict[str, str]] = {}
LABEL_SETS_KEPT = 4096


def _shared_labels(labels: Mapping[Any, Any]) -> dict[str, str]:
    """Stored labels as one dict per distinct label set: 10,000 records share a few dozen (less memory, and a
    listing looks each set's pool up once). The dicts are never changed: relabelling builds a new one."""
    items = frozenset((str(k), str(v)) for k, v in labels.items())
    found = _LABEL_SETS.get(items)
    if found is None:
        if len(_LABEL_SETS) >= LABEL_SETS_KEPT:
            _LABEL_SETS.clear()
        found = _LABEL_SETS[items] = dict(sorted(items))
    return found


def with_report(previous: NodeStatus | None, report: NodeStatus) -> NodeStatus:
    """`report` as the node's new record, carrying the history of `previous` (the record it replaces).

    A report that says what the last entry says (only its time differs) adds nothing; any other becomes
    the newest entry and the oldest beyond HISTORY_LIMIT is dropped. `report`'s own history is ignored,
    so building again on the same `previous` gives the same record. The labels are `previous`'s: a report
    never changes them (only a node's first record takes the report's), nor the permission to pull an OS image
    (`pull_config`, `pull_at`: the server's); `staged` is the report's, else kept. The phase a report enters (the last
    entry of its `timeline`) is added to `previous`'s timeline (fleet/phases.py: advance).
    """
    entry = Transition.of(report)
    past = previous.transitions() if previous is not None else ()
    history = past if past and past[0].same(entry) else (entry, *past[:HISTORY_LIMIT - 1])
    first = (previous.registered_at or (past[-1].reported_at if past else "")) if previous is not None else ""
    timeline, updates = (previous.timeline, previous.updates) if previous is not None else ((), ())
    if report.timeline:
        timeline, updates = advance(timeline, updates, report.timeline[-1])
    drift = kept(report.drift, previous.drift if previous is not None else ())
    pull = (previous.pull_config, previous.pull_at) if previous is not None else ("", "")
    staged = report.staged or (previous.staged if previous is not None else "")
    return replace(report, history=history, registered_at=first or report.reported_at,
                   labels=previous.labels if previous is not None else report.labels, timeline=timeline,
                   updates=updates, drift=drift, pull_config=pull[0], pull_at=pull[1], staged=staged)
