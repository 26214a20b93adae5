"""Where a node's update stands: the phases the agent reports as it enters them, and the timeline a node record
keeps of them (the current update's, and a bounded history of earlier ones). Pure.

The phases follow the MCO's MachineConfigNode conditions (`oc get machineconfignodes`; openshift/api
`machineconfiguration/v1` `MachineConfigNodeUpdate*`), one per step of an update, in the order the agent goes
through them (those an update does not need are skipped):

    prepared          target fetched, actions computed             UpdatePrepared
    image-staged      OS image (and kernel arguments) staged        UpdateExecuted / ImagePulledFromRegistry
    drained           the drain hook ran                            Cordoned, Drained
    written           files, units and SSH keys written             UpdateExecuted / FilesAndOS
    reboot-requested  the reboot asked for (detail: the boot ID)    RebootedNode (pending)
    rebooted          a new boot seen                               RebootedNode
    verified          the new boot checked against the target       UpdateComplete (in progress)
    uncordoned        the uncordon hook ran                         Resumed, Uncordoned
    health-checked    the pool's health checks pass (detail: soaking (beyond the MCO: applier/health.py)
                      until when)
    done              at the target                                 UpdateComplete
    degraded          failed (detail: the phase it failed in)       UpdateDegraded

Timeline rules (`advance`): an entry that repeats the last one (phase, config, detail) adds nothing;
`prepared` (unless the timeline holds only `image-staged` of the same config: an OS image pulled before the
node's slot, module fleet/image_pulls.py), or any phase for another config than the timeline's, starts a new timeline and moves the old one
into the history (newest first, at most UPDATES_LIMIT); a timeline keeps its first entry and its last
TIMELINE_LIMIT - 1.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, NamedTuple

PHASES = ("prepared", "image-staged", "drained", "written", "reboot-requested", "rebooted", "verified",
          "uncordoned", "health-checked", "done", "degraded")
FINAL = frozenset({"done", "degraded"})
TIMELINE_LIMIT = 16
UPDATES_LIMIT = 5
DETAIL_LIMIT = 200  # characters of a phase's detail kept (a boot ID, a phase name)

Timeline = tuple["PhaseEntry", ...]


class PhaseEntry(NamedTuple):
    """One phase entered: which, when (RFC 3339), for which rendered config, and its detail."""

    phase: str
    at: str
    config: str = ""
    detail: str = ""

    def repeats(self, other: PhaseEntry) -> bool:
        """Whether `other` says the same (only its time differs)."""
        return (self.phase, self.config, self.detail) == (other.phase, other.config, other.detail)

    def to_dict(self) -> dict[str, str]:
        """JSON form (`detail` only when there is one)."""
        data = {"phase": self.phase, "at": self.at, "config": self.config}
        if self.detail:
            data["detail"] = self.detail
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PhaseEntry:
        """Read the stored form (phase and config names interned: 10,000 records share a few of each)."""
        get = data.get
        return cls(sys.intern(str(get("phase", ""))), str(get("at", "")), sys.intern(str(get("config", ""))),
                   str(get("detail", "")))


def advance(timeline: Timeline, updates: tuple[Timeline, ...], entry: PhaseEntry) -> tuple[Timeline, tuple[Timeline, ...]]:
    """The (timeline, history of earlier timelines) after `entry` (rules in the module docstring)."""
    if timeline and timeline[-1].repeats(entry):
        return timeline, updates
    staged_first = entry.phase == "prepared" and len(timeline) == 1 and timeline[0].phase == "image-staged" \
        and timeline[0].config == entry.config  # the OS image was staged before the slot: the same update
    if timeline and ((entry.phase == "prepared" and not staged_first) or entry.config != timeline[0].config):
        return (entry,), (timeline, *updates)[:UPDATES_LIMIT]
    grown = (*timeline, entry)
    if len(grown) > TIMELINE_LIMIT:
        grown = (grown[0], *grown[len(grown) - TIMELINE_LIMIT + 1:])
    return grown, updates


def timeline_from(data: Any) -> Timeline:
    """A stored timeline (anything else: none)."""
    if not isinstance(data, list):
        return ()
    return tuple(PhaseEntry.from_dict(e) for e in data[-TIMELINE_LIMIT:] if isinstance(e, Mapping))


def updates_from(data: Any) -> tuple[Timeline, ...]:
    """Stored earlier timelines (anything else: none)."""
    if not isinstance(data, list):
        return ()
    return tuple(timeline_from(t) for t in data[:UPDATES_LIMIT] if isinstance(t, list))
