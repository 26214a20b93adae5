"""Who a `/config/{pool}` request is, and which machine's config it may be served (respond.py asks).

Two ways to name a machine, never both in one request:
- **At first boot, by its facts**: `?mac=&uuid=&serial=&hostname=` (fleet/machines.py chooses the document).
  The facts identify a machine; they authorise nothing: the pool's token and address rules decide, as for the
  pool's config. With node authentication on, a machine whose node the server already knows (it has reported or
  claimed: day 2) is no longer served by its facts (the caller checks the store, `Choice.first_boot_of`).
- **On day 2, by its node**: `?node=NAME` with NAME's node token (server/auth.py `node_token`) in place of the
  pool's token, as on `/rendered/NAME` and the node routes; the machine is the document whose `hostname` is
  NAME (fleet/machines.py `machine_of_node`). Without node authentication there is no node credential, and
  `?node=NAME` is under the pool's token like the facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from multidict import MultiMapping

from fleet.machine_entry import MachineEntry
from fleet.machines import SELECTOR_KEYS, FactError, MachineTie, query_facts
from fleet.names import valid_name
from server.auth import AccessPolicy, BadAuthorization, Refused
from server.errors import ServerError
from server.snapshot import PoolEntry

NODE_PARAM = "node"
__all__ = ["NODE_PARAM", "Choice", "ChoiceRefused", "authorise", "choose"]


class ChoiceRefused(ServerError):
    """The request cannot be served a config: `status`, an error `code`, the client's `message`, the `path` of the
    field at fault, and (403s) the `reason` for the access log only."""

    def __init__(self, status: int, code: str, message: str, path: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.path, self.reason = status, code, message, path, reason


@dataclass(frozen=True, slots=True)
class Choice:
    """The machine chosen (None: the pool's config) and, when chosen by its facts with node authentication on,
    the node whose being known to the store (day 2) withdraws the answer."""

    machine: MachineEntry | None
    first_boot_of: str = ""


def named_node(query: MultiMapping[str] | None) -> str:
    """The node the query names (`?node=NAME`, "" when none); ChoiceRefused (400 naming `query node`) when it is
    unreadable, given twice or beside a machine's facts."""
    if not query or NODE_PARAM not in query:
        return ""
    values = query.getall(NODE_PARAM)
    if len(values) > 1:
        raise ChoiceRefused(400, "machine-facts", "given more than once", f"query {NODE_PARAM}")
    node = values[0]
    if not valid_name(node):
        raise ChoiceRefused(400, "machine-facts", "not a node name (a lowercase DNS name)", f"query {NODE_PARAM}")
    if any(key in query for key in SELECTOR_KEYS):
        raise ChoiceRefused(400, "machine-facts", f"a node is named by {NODE_PARAM} or by its facts "
                            f"({', '.join(SELECTOR_KEYS)}), not both", f"query {NODE_PARAM}")
    return node


def authorise(policy: AccessPolicy, pool: str, authorization: Sequence[str],
              query: MultiMapping[str] | None) -> str:
    """Check the request's credential for `pool` (the address rules are checked before); returns the node the
    request proved to be ("" for none). ChoiceRefused: 400 for an unreadable header or `node`, else 403."""
    try:
        node = named_node(query)
        if node and policy.nodes_authenticated:
            policy.check_node(node, authorization)
        else:
            policy.check_token(pool, authorization)
    except BadAuthorization as exc:
        raise ChoiceRefused(400, "authorization", exc.message, exc.path, exc.message) from None
    except Refused as exc:
        raise ChoiceRefused(403, "forbidden", "forbidden", reason=exc.reason) from None
    return node


def choose(policy: AccessPolicy, entry: PoolEntry, pool: str, node: str,
           query: MultiMapping[str] | None) -> Choice:
    """The machine of an authorised request (`node`: what `authorise` returned): the node's machine, else the one
    its facts select, else none (a 404 when the pool requires a match). ChoiceRefused names the field."""
    machines = entry.machines
    if node:
        machine = machines.of_node(node) if machines is not None else None
        if machine is None:
            raise ChoiceRefused(404, "unknown-machine", f"no machine of pool {pool} is node {node}",
                                f"query {NODE_PARAM}")
        return Choice(machine)
    if machines is None and not entry.record.require_machine:
        return Choice(None)
    try:
        machine = machines.choose(query) if machines is not None else None
    except FactError as exc:
        raise ChoiceRefused(400, "machine-facts", exc.message, f"query {exc.key}") from None
    except MachineTie as exc:
        raise ChoiceRefused(409, "machine-tie", str(exc), "query") from None
    if machine is None:
        if entry.record.require_machine:
            given = ", ".join(sorted(query_facts(query.items() if query else ()))) or \
                "no mac, uuid, serial or hostname given"
            raise ChoiceRefused(404, "unknown-machine", f"no machine of pool {pool} matches ({given})", "query")
        return Choice(None)
    return Choice(machine, machine.node if policy.nodes_authenticated else "")
