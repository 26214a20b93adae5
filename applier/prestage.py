"""The OS image before the slot: when the server lets this node pull the pool's next OS image while it still waits
for its update slot (the desired-config answer's `prefetch`, fleet/image_pulls.py), pull it and prepare what the
backend can without booting it, then stay where it is.

Why: the drained window should hold only the writes and the reboot. Pulled after the slot was taken, the image
costs the slot its pull time; pulled after the drain, the workloads too. The node reports `Done` at its current
config (it is not updating: it takes no slot), with the phase `image-staged` of the config to come and `staged`
naming it, which gives the server's pull back to the pool. What each backend does (docs/rollouts.md): ostree
imports the image into the repo and, on a booted system, stages the deployment, locked; rpm-ostree `rebase --download-only`; bootc `switch --download-only` (a staged
deployment that is not booted until the update unlocks it); a backend or a version without a download-only mode
says so in the message, and pulls while drained.
"""

from __future__ import annotations

from applier.backends.base import Backend
from applier.errors import ApplyError
from applier.plan import make_plan
from applier.report import NodeReport
from applier.reporting import Reporting
from applier.settings import LogFn, SyncResult, no_log
from fleet.rendered import RenderedConfig


def prestage(backend: Backend, reporting: Reporting, current: RenderedConfig, upcoming: RenderedConfig, *,
             log: LogFn = no_log) -> SyncResult:
    """Pull `upcoming`'s OS image (module docstring) and report it staged; the node stays at `current`."""
    plan = make_plan(current.spec, upcoming.spec, manage_os=backend.name != "none")
    note = ""
    if plan.stage_os and plan.diff.os_image:
        try:
            note = backend.prefetch(plan.new, plan.old)
        except ApplyError as exc:  # the update will pull it after its drain: not a failure of this node's config
            note = f"pulling {upcoming.spec.os_image_url} before the slot failed ({exc}); it is pulled in the update"
    message = f"waiting for a slot to move to {upcoming.name}; {note or 'no OS image to pull'}"
    log(message)
    reporting.send(NodeReport(node=reporting.node, pool=reporting.pool(current), current=current.name,
                              desired=current.name, state="Done", message=message, phase="image-staged",
                              detail=note[:200], staged=upcoming.name))
    return SyncResult(state="Done", message=message, current=current.name, desired=current.name, staged=upcoming.name)
