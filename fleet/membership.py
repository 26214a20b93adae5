"""Which pool a node belongs to, from its labels alone (MCO `pkg/helpers/helpers.go`: GetPoolsForNode, ListPools). Pure.

The rule, as the MCO has it:
- A node labelled `kubernetes.io/os=windows` is not managed: no pool.
- The pools whose `nodeSelector` matches the node's labels are its candidates; a pool with an empty (or
  absent) selector matches nothing. They fall into `master`, `worker` and the custom pools (any other name).
- No candidate: the node is in no pool (unpooled: never handed an update).
- Two or more custom pools: refused, with the MCO's error `node N belongs to K custom roles, cannot proceed
  with this Node`; the node is in no pool and keeps the config it has.
- One custom pool: that pool, unless `master` matches too, when `master` wins and the MCO logs
  `Found master node that matches selector for custom pool P, defaulting to master. ...`; `worker`, when it
  matches, follows as the secondary pool (`pools[1]`).
- `master` (with or without `worker`): `master`. Otherwise `worker`.

The node's pool is `pools[0]`; it is what the node record's `pool` holds, and the only thing pool records count
by. `PoolSelectors` answers for a fixed set of pool records, memoised per distinct label set (a fleet of 10,000
nodes has a few dozen), so the server decides each claim's membership in O(1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fleet.label_selector import LabelSelector
from fleet.rendered import PoolRecord

MASTER, WORKER = "master", "worker"
OS_LABEL = "kubernetes.io/os"
MEMO_LIMIT = 4096  # distinct label sets remembered per set of pool records


@dataclass(frozen=True)
class Membership:
    """GetPoolsForNode's answer for one label set: the pools (the node's own first), or why there is none."""

    pools: tuple[str, ...] = ()
    custom_roles: int = 0       # custom pools matched; two or more is the MCO's refusal
    master_over: str = ""       # the custom pool `master` won over (the MCO's log message names it)
    windows: bool = False

    @property
    def pool(self) -> str:
        """The node's pool ("" when it has none)."""
        return self.pools[0] if self.pools else ""

    def reason(self, node: str) -> str:
        """Why the node is in no pool, in the MCO's words where it has them ("" when it has a pool)."""
        if self.pools:
            return ""
        if self.custom_roles > 1:
            return f"node {node} belongs to {self.custom_roles} custom roles, cannot proceed with this Node"
        if self.windows:
            return f"node {node} is a windows node so won't be managed by MCO"
        return f"node {node} matches no pool's nodeSelector"

    def note(self) -> str:
        """The MCO's message when `master` won over a custom pool ("" otherwise)."""
        if not self.master_over:
            return ""
        return (f"Found master node that matches selector for custom pool {self.master_over}, defaulting to master. "
                "This node will not have any custom role configuration as a result. Please review the node to make "
                "sure this is intended")


def pools_for_labels(labels: Mapping[str, str], selectors: Iterable[tuple[str, LabelSelector]]) -> Membership:
    """The rule of the module docstring for `labels`, against `(pool name, nodeSelector)` pairs."""
    if labels.get(OS_LABEL) == "windows":
        return Membership(windows=True)
    master = worker = False
    custom: list[str] = []
    for name, selector in selectors:
        if selector.is_empty or not selector.matches(labels):  # an empty selector matches nothing
            continue
        if name == MASTER:
            master = True
        elif name == WORKER:
            worker = True
        else:
            custom.append(name)
    custom.sort()
    if len(custom) > 1:
        return Membership(custom_roles=len(custom))
    tail = (WORKER,) if worker else ()
    if custom:
        if master:
            return Membership((MASTER, *tail), custom_roles=1, master_over=custom[0])
        return Membership((custom[0], *tail), custom_roles=1)
    if master:
        return Membership((MASTER,))
    return Membership(tail)


class PoolSelectors:
    """Membership against one fixed set of pool records, memoised per label set. Thread-safe enough: the memo is
    a dict written whole per entry (a race computes an entry twice, identically)."""

    def __init__(self, records: Iterable[PoolRecord]) -> None:
        self.selectors = tuple((r.name, r.selector) for r in records)
        self.names = frozenset(name for name, _ in self.selectors)
        self._memo: dict[frozenset[tuple[str, str]], Membership] = {}

    def of(self, labels: Mapping[str, str]) -> Membership:
        """The membership of a node carrying `labels`."""
        key = frozenset(labels.items())
        found = self._memo.get(key)
        if found is None:
            found = pools_for_labels(labels, self.selectors)
            if len(self._memo) >= MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = found
        return found
