"""What nodes say and ask: `POST /nodes/{name}/status` and `GET|POST /nodes/{name}/desired`.

Only a node may speak for itself. With a node secret (`mco serve --node-secret-file`), a report and a
slot claim must carry that node's own token (server/auth.py: node_token); a token for node A cannot
act for node B. Without one, the pool's bearer token (if the pool has tokens) is checked as on every
route, and the server warned at start-up that any client may report for any node.

- GET never writes: `GET /nodes/{name}/desired` says what the rollout would hand this node now.
- `POST /nodes/{name}/desired` claims it: the hand-out is recorded (state Working) before the answer,
  so the next node sees this one as busy (maxUnavailable); one claim at a time (the store's lock/CAS).
  With `?wait=SECONDS` (0..300) a claim whose answer would be "stay" is held until a slot may have freed or
  the wait ends, then decided again (server/handout_wait.py): no polling, and a freed slot is taken at once.
- With `?prestage=1` (the agent sends it) the claimant pulls a new OS image before its slot: a node whose slot
  would move it to an OS image it has not staged is told to stay and, within the pool's `max-concurrent-pulls`, to
  pull it (`prefetch`); it takes its slot once it reports the image staged (fleet/image_pulls.py). Every pull then
  counts against the pool's limit, the first wave's too. Clients that do not send it are handed the slot as before.
- A node's pool is computed from its labels (fleet/membership.py, the MCO's GetPoolsForNode), never taken
  from what it says: the pool a report or claim names only tells a node that registers (its first record)
  which role label it has when it gives no labels of its own (`?labels=k=v,...` on the claim, `labels` in
  the report). Later reports and claims change neither labels nor pool; an administrator relabels
  (server/admin_routes.py). A node in no pool (or refused, two custom pools) is registered but never handed
  an update: its claim is answered 409 `unpooled` with the MCO's reason.
- Every client mistake is a 4xx naming the field; a store failure is a 503 that names no server path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from aiohttp import web

from fleet.clock import Clock, timestamp
from fleet.image_pulls import pull_permission
from fleet.label_selector import role_labels
from fleet.machines import machine_of_node
from fleet.membership import PoolSelectors
from fleet.names import valid_name
from fleet.node_admin import selectors_of
from fleet.node_labels import LabelError, parse_label_list
from fleet.node_status import NodeStatus, with_report
from fleet.rendered import PoolRecord, pool_config_of
from fleet.rollout import NodeStatuses, is_unavailable, rollout_rank
from fleet.rollout_control import may_pause, record_pause
from fleet.rollout_turn import waiting
from fleet.store import LoopWrites, NotFound, Store, StoreError
from server.accesslog import LOG_NOTE
from server.auth import AccessPolicy, BadAuthorization, Refused
from server.errors import ServerError
from server.handout_follow import follow_snapshots
from server.handout_wait import HandoutWaiters, PrestageError, WaitError, parse_prestage, parse_wait
from server.metrics import ServerMetrics
from server.os_images import OsImages
from server.presence import Presence, exchange
from server.request_body import BodyError, read_json
from server.respond import JSON, error_body, json_bytes
from server.state import ServerState
from server.status import StatusReportError, parse_report

log = logging.getLogger("mco.server")
DesiredFn = Callable[[str, PoolRecord, Sequence[NodeStatus]], "str | None"]


def json_error(status: int, code: str, message: str, path: str = "") -> web.Response:
    """A JSON error answer (`{"error", "message", "path"}`)."""
    return web.Response(status=status, body=error_body(code, message, path), content_type=JSON)


def refusal(note: dict[str, Any], exc: Refused) -> web.Response:
    """The answer to a refused request: 400 naming the header when it cannot be read, else 403 (the reason goes
    to the access log `note` only)."""
    if isinstance(exc, BadAuthorization):
        note["refused"] = exc.message
        return json_error(400, "authorization", exc.message, exc.path)
    note["refused"] = exc.reason
    return json_error(403, "forbidden", "forbidden")


def admin_refusal(policy: AccessPolicy, request: web.Request) -> web.Response | None:
    """`refusal` of an administrative request (its address, then the admin token), or None: it may go on. Either
    way the request has its access log note."""
    note = request.setdefault(LOG_NOTE, {})
    try:
        policy.check_address(request.remote)
        policy.check_admin(request.headers.getall("Authorization", []))
    except Refused as exc:
        return refusal(note, exc)
    return None


def store_failed(exc: StoreError) -> web.Response:
    """503 for a store failure: logged with the object it concerns, answered without any path."""
    log.error("store failure on %s: %s", exc.path, type(exc).__name__)
    return json_error(503, "store", "the store cannot be read or written; try again")


class MissingPool(ServerError):
    """The desired-config request named no pool and the node never reported one."""


class Unpooled(ServerError):
    """The node's labels put it in no pool (or in two custom pools): it is never handed an update."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NodeRoutes:
    """The node-facing handlers (dependencies through the constructor; run.py is the composition root)."""

    def __init__(self, *, state: ServerState, store: Store, policy: AccessPolicy, read_timeout: float,
                 poll_interval: float, desired_for: DesiredFn | None, clock: Clock, metrics: ServerMetrics) -> None:
        self.state = state
        self.metrics = metrics
        self.store = store
        self.policy = policy
        self.read_timeout = read_timeout
        self._desired_for = desired_for
        self.clock = clock
        self.waiters: HandoutWaiters = state.handouts
        self.presence = Presence(clock)  # which nodes are online: a slot goes to the one whose turn it is
        self.waiters.presence = self.presence.now_checker  # held claims are woken by the same rule
        self.images = OsImages(store)  # what a claim compares: whether its target changes the node's OS image
        self.waiters.image_of = self.images.get  # which held nodes need the target's OS image (woken to pull it)
        self.waiters.load_images = self.images.load
        self._selectors: tuple[object, PoolSelectors] | None = None
        self._loop_checked = False
        self._loop_store: LoopWrites | None = None
        self._stop_following: Callable[[], Awaitable[None]] | None = None
        if state.feed is None:  # an etcd replica's mirror wakes held claims itself (server/replica.py)
            self._stop_following = follow_snapshots(state, store, poll_interval)

    def add_to(self, app: web.Application) -> None:
        """Register the routes; shutdown answers held claims at once; which nodes are online is shared with the
        other server processes through the store while the app runs (server/presence.py `exchange`)."""
        app.router.add_post("/nodes/{name}/status", self.status)
        app.router.add_get("/nodes/{name}/desired", self.desired)
        app.router.add_post("/nodes/{name}/desired", self.claim)

        async def answer_held(_app: web.Application) -> None:
            self.waiters.close()
            if self._stop_following is not None:
                await self._stop_following()
        app.on_shutdown.append(answer_held)

        async def share_presence(_app: web.Application) -> AsyncIterator[None]:
            task = asyncio.create_task(exchange(self.presence, self.store, uuid.uuid4().hex))
            yield
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        app.cleanup_ctx.append(share_presence)

    def selectors(self) -> PoolSelectors | None:
        """Membership against the pools the server serves now (None before the first snapshot)."""
        snapshot = self.state.snapshot
        if snapshot is None:
            return None
        cached = self._selectors
        if cached is None or cached[0] is not snapshot:
            cached = self._selectors = (snapshot, PoolSelectors(e.record for e in snapshot.pools.values()))
        return cached[1]

    def machine_labels(self, node: str) -> Mapping[str, str] | None:
        """The labels of the machine document naming `node` (its `hostname`), which a node registering takes
        before any it gives itself (fleet/machines.py); None when no document names it."""
        snapshot = self.state.snapshot
        for entry in snapshot.pools.values() if snapshot is not None else ():
            machine = machine_of_node(entry.record.machines, node)
            if machine is not None and machine.labels:
                return machine.labels
        return None

    def _membership(self) -> PoolSelectors:
        return self.selectors() or selectors_of(self.store)

    def loop_store(self) -> LoopWrites | None:
        """The store, when this loop awaits its node writes and reads it from memory (an etcd replica's own
        connection: fleet/store.py `LoopWrites`); None: its calls block, and go to a worker thread."""
        if not self._loop_checked:
            self._loop_checked = True
            store = self.store
            if isinstance(store, LoopWrites) and store.writes_on_loop():
                self._loop_store = store
        return self._loop_store

    # -- checks shared by the routes (and server/reboot_slot.py) ------------------------------------------------------------------
    def refuse(self, request: web.Request, node: str, pool: str | None) -> web.Response | None:
        """403/400 unless the address passes and the request carries this node's (or the pool's) token."""
        note = request.setdefault(LOG_NOTE, {})
        note["node"] = node
        authorization = request.headers.getall("Authorization", [])
        try:
            self.policy.check_address(request.remote)
            if self.policy.nodes_authenticated:
                self.policy.check_node(node, authorization)
            elif pool is not None:
                self.policy.check_token(pool, authorization)
        except Refused as exc:
            return refusal(note, exc)
        return None

    @staticmethod
    def node_name(request: web.Request) -> str | web.Response:
        """The `{name}` of a /nodes route, or the 400 naming `path name` when it is not a node name."""
        node = request.match_info["name"]
        if not valid_name(node):
            return json_error(400, "invalid-node-name", "node name must be a lowercase DNS name of at most "
                              "236 characters", "path name")
        return node

    # -- POST /nodes/{name}/status ----------------------------------------------------------------------
    async def status(self, request: web.Request) -> web.Response:
        """A node reports `{pool, currentConfig, desiredConfig, state, message}`; stored, then echoed."""
        node = self.node_name(request)
        if isinstance(node, web.Response):
            return node
        if self.policy.nodes_authenticated and (refused := self.refuse(request, node, None)) is not None:
            return refused  # before reading the body: no work for a client that is not this node
        try:
            body = await read_json(request, timeout=self.read_timeout)
        except BodyError as exc:
            return json_error(exc.status, "body", exc.message, exc.path)
        try:
            status = parse_report(node, body, reported_at=timestamp(self.clock()))
        except StatusReportError as exc:
            return json_error(400, "invalid-report", exc.message, exc.path)
        request[LOG_NOTE] = {"pool": status.pool, "node": node, "state": status.state}
        if not self.policy.nodes_authenticated and (refused := self.refuse(request, node, status.pool)) is not None:
            return refused
        try:
            reported = status.drift  # this report's events (the stored record keeps earlier ones too)
            known, status = await self._store_status(status)
        except NotFound:
            return json_error(404, "unknown-pool", f"no pool {status.pool!r}", "$.pool")
        except StoreError as exc:
            return store_failed(exc)
        for event in reported:
            self.metrics.drift_event(status.pool, event.kind, event.repaired)
        snapshot = self.state.snapshot
        entry = snapshot.pools.get(status.pool) if snapshot is not None else None
        target = entry.record.current if entry is not None else None

        def at_target(s: NodeStatus) -> bool:  # (a machine's config on the target counts: served_config's rule)
            return s.state == "Done" and pool_config_of(s.current_config) == target

        # Only these reports can change which config booting nodes get (snapshot.served_config): any while the
        # pool holds its target back, and one that leaves (or joins without) Done at the target. Rebuilding the
        # snapshot on every other report of a rollout would cost a pass over every node each time.
        if entry is not None and (entry.held_back or (not at_target(status) and (known is None or at_target(known)))):
            self.state.wake.set()
        if (self.state.feed is None and known is not None and known.pool == status.pool and is_unavailable(known)
                and not is_unavailable(status)):
            self.waiters.freed(status.pool, target)  # this report freed a slot (a replica's mirror sees its own)
        elif self.state.feed is None and status.staged and (known is None or known.staged != status.staged):
            self.waiters.recount(status.pool)  # this report gave a pull back: the next held node may pull
        return web.Response(body=json_bytes(status.to_dict()), content_type=JSON)

    async def _store_status(self, status: NodeStatus) -> tuple[NodeStatus | None, NodeStatus]:
        """Store the report in the pool the node's labels select, with its history carried on (`with_report`);
        returns (the previous status, None: first report; the stored one). Then record the pause a failure calls
        for: after, so that no pause names a report that was never stored (until it is recorded, readers derive the
        same pause from the stored failure)."""
        store = self.loop_store()
        if store is None:
            return await asyncio.to_thread(self._store_status_blocking, status)
        known, stored = self._report_record(status)  # (the mirror's, in memory)
        await store.put_node_status_async(stored)
        if may_pause(stored):
            await asyncio.to_thread(record_pause, self.store, stored)
        return known, stored

    def _store_status_blocking(self, status: NodeStatus) -> tuple[NodeStatus | None, NodeStatus]:
        """`_store_status` in a worker thread, for a store whose calls block."""
        known, stored = self._report_record(status)
        self.store.put_node_status(stored)
        record_pause(self.store, stored)
        return known, stored

    def _report_record(self, status: NodeStatus) -> tuple[NodeStatus | None, NodeStatus]:
        """(the node's record, None: its first report; the record to store for `status`)."""
        try:
            known = self.store.get_node_status(status.name)
        except NotFound:
            known = None
        if known is None:
            self.store.get_pool(status.pool)  # NotFound for an unknown pool
            labels = self.machine_labels(status.name) or status.labels or role_labels(status.pool)
        else:
            labels = known.labels
        return known, with_report(known, replace(status, pool=self._membership().of(labels).pool, labels=labels))

    # -- the OS image before the slot (fleet/image_pulls.py) ---------------------------------------------------
    def _pull(self, mine: NodeStatus, record: PoolRecord, statuses: NodeStatuses,
              unknown: list[str]) -> NodeStatus | None:
        """For a node told to stay whose target changes its OS image: its record with the permission to pull it now
        (the same record when it holds one already), or None (no pull, or not now). A config whose image is not read
        yet is added to `unknown` (the caller reads it and decides again)."""
        if not waiting(mine, record) or not self.images.needs_image(mine, record, unknown):
            return None
        now = self.clock()
        return pull_permission(mine, record, statuses, now,
                               self.presence.checker(record.rollout.offline_grace_seconds, now))

    # -- GET / POST /nodes/{name}/desired ----------------------------------------------------------------
    async def desired(self, request: web.Request) -> web.Response:
        """`{"desiredConfig": NAME, "pool": P}`: where the rollout would send this node now, with the cluster's
        `nodeDisruptionPolicy` when it has one (the agent applies it on every update). Writes nothing."""
        return await self._desired(request, claim=False)

    async def claim(self, request: web.Request) -> web.Response:
        """The same answer, with the hand-out recorded so the rollout counts this node as busy."""
        return await self._desired(request, claim=True)

    async def _desired(self, request: web.Request, *, claim: bool) -> web.Response:
        node = self.node_name(request)
        if isinstance(node, web.Response):
            return node
        pool = request.query.get("pool", "")
        if pool and not valid_name(pool):
            return json_error(400, "invalid-pool-name", "pool name must be a lowercase DNS name", "query pool")
        try:
            wait = parse_wait(request.query.getall("wait", []))
        except WaitError as exc:
            return json_error(400, "invalid-wait", str(exc), "query wait")
        try:
            stage_first = parse_prestage(request.query.getall("prestage", []))
        except PrestageError as exc:
            return json_error(400, "invalid-prestage", str(exc), "query prestage")
        given = request.query.getall("labels", [])
        try:
            if len(given) > 1:
                raise LabelError("query labels", "given more than once")
            labels = parse_label_list(given[0], path="query labels") if given else None
        except LabelError as exc:
            return json_error(400, "invalid-labels", exc.message, exc.path)
        if wait and not claim:
            return json_error(400, "invalid-wait", "only the claim (POST) waits; GET answers at once", "query wait")
        if (refused := self.refuse(request, node, None)) is not None:
            return refused
        authorization = request.headers.getall("Authorization", [])
        try:
            answer = await self._answer(request, node, pool, labels, authorization, claim, wait, stage_first)
        except BadAuthorization as exc:
            return json_error(400, "authorization", exc.message, exc.path)
        except Refused as exc:
            request[LOG_NOTE]["refused"] = exc.reason
            return json_error(403, "forbidden", "forbidden")
        except Unpooled as exc:
            return json_error(409, "unpooled", exc.reason, "labels")
        except MissingPool:
            return json_error(400, "missing-pool", "pool query parameter required for a node that never reported",
                              "query pool")
        except NotFound:
            return json_error(404, "unknown-pool", f"no pool {pool!r}", "query pool")
        except StoreError as exc:
            return store_failed(exc)
        except ValueError as exc:  # the pool's maxUnavailable is unusable (RolloutError)
            return json_error(503, "pool-spec", str(exc), getattr(exc, "path", ""))
        if answer["desiredConfig"] is None:
            return json_error(503, "not-ready", f"pool {answer['pool']} has no rendered config yet")
        return web.Response(body=json_bytes(answer), content_type=JSON)

    async def _answer(self, request: web.Request, node: str, pool: str, labels: dict[str, str] | None,
                      authorization: Sequence[str], claim: bool, wait: float, stage_first: bool) -> dict[str, Any]:
        """Decide; while the answer is "stay" and `wait` seconds have not passed, hold until woken and decide again."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        ticket = None
        woken = False
        try:
            while True:
                # a claim as it arrives, or held until its deadline, takes a free slot only in its turn
                # (fleet/rollout_turn.py); a held claim is woken only in its turn, by the same rule
                # (server/handout_wait.py), and then decides without it
                polled = not woken or self.waiters.closing
                answer, stay, rank, staged, first = await self._decide(node, pool, labels, authorization, claim,
                                                                       polled, stage_first)
                remaining = deadline - loop.time()
                transport = request.transport
                if stay is None or remaining <= 0 or transport is None or transport.is_closing():
                    return answer
                ticket = ticket or self.waiters.ticket()
                ticket.rank, ticket.node, ticket.staged, ticket.prestage = rank, node, staged, first
                self.presence.hold(node)
                try:
                    woken = await self.waiters.wait(ticket, answer["pool"], stay, remaining)
                finally:
                    self.presence.release(node)
                if not woken and self.waiters.closing:
                    return answer
                if request.transport is None or request.transport.is_closing():
                    self.waiters.give_back(ticket)  # gone mid-hold: no hand-out; its grace runs from now
                    return answer
                request[LOG_NOTE]["waited"] = round(wait - max(deadline - loop.time(), 0), 3)
        finally:
            if ticket is not None:
                self.waiters.settle(ticket)

    async def _decide(self, node: str, pool: str, given: dict[str, str] | None, authorization: Sequence[str],
                      claim: bool, polled: bool = True,
                      stage_first: bool = False) -> tuple[dict[str, Any], str | None, tuple[Any, ...], str, bool]:
        """(the answer, the node's current config when the answer is "stay": a claim that may be held, and then its
        place in the rollout order, the config whose OS image it staged and whether its slot waits for the target's
        OS image: `prestage` of an available node). `polled`: a claim as it arrives, which takes a free slot only in
        its turn (a woken held claim was woken in its turn)."""
        answer: dict[str, Any] = {}
        stay: list[str | None] = [None]
        rank: list[tuple[Any, ...]] = [()]
        staged: list[str] = [""]
        first = [False]  # its slot waits for the target's OS image (`prestage`, an available node)
        unpooled: list[str] = []
        unknown: list[str] = []  # rendered configs whose OS image a decision needs and `images` lacks
        registering = self.machine_labels(node) or given
        self.presence.saw(node)

        def decide(statuses: NodeStatuses) -> NodeStatus | None:
            unpooled.clear()
            mine = statuses.get(node)
            if mine is None:
                if not pool:
                    raise MissingPool()
                self.store.get_pool(pool)  # NotFound: a node registers naming a pool that exists
            labels = mine.labels if mine is not None else (registering or role_labels(pool))
            membership = self._membership()  # (without a snapshot yet it reads the store: in the claim's thread)
            chosen = membership.of(labels).pool
            if not self.policy.nodes_authenticated:  # the pool token it holds: of the pool it names
                self.policy.check_token(pool or chosen or (mine.pool if mine is not None else ""), authorization)
            now = timestamp(self.clock())
            if not chosen:
                unpooled.append(membership.of(labels).reason(node))
                if mine is None and claim:  # registered, so that an administrator sees it and can label it
                    return NodeStatus(node, "", "", "", "Done", unpooled[0], now, labels=labels)
                return None
            record = self.store.get_pool(chosen)
            if self._desired_for is not None:
                desired = self._desired_for(node, record, statuses)
            else:
                from fleet.rollout import desired_for

                now_at = self.clock()
                present = self.presence.checker(record.rollout.offline_grace_seconds, now_at) if polled else None
                desired = desired_for(node, record, statuses, now=now_at, present=present)
            answer.update(desiredConfig=desired, pool=chosen)
            if record.disruption_policy is not None:  # the cluster's current policy, beside the target
                answer["nodeDisruptionPolicy"] = record.disruption_policy
            gate = record.rollout.health_gate()
            if gate:  # the pool's health gate: the agent reports Done only once it has passed (applier/health.py)
                answer["rollout"] = gate
            stay[0] = desired if mine is not None and desired and desired == mine.current_config else None
            if (stage_first and mine is not None and stay[0] is None and desired and desired == record.target_for(node)
                    and mine.current_config and not is_unavailable(mine)):  # (one unavailable pulls in its slot)
                # its slot only once it staged the image; an image not read yet: stay (read, then decided again)
                if self.images.needs_image(mine, record, unknown) is not False:
                    desired = stay[0] = mine.current_config
                    answer["desiredConfig"] = desired
            if stay[0] is not None and mine is not None:
                rank[0], staged[0] = rollout_rank(mine, record), mine.staged
                first[0] = stage_first and not is_unavailable(mine)
                pulled = self._pull(mine, record, statuses, unknown) if claim else None
                if pulled is not None:  # let pull the target's OS image now: answered at once, not held
                    answer["prefetch"] = pulled.pull_config
                    stay[0] = None
                    return pulled if pulled is not mine else None
            if (claim and desired and desired == record.target_for(node)
                    and (mine is None or mine.desired_config != desired)):
                # Record the hand-out before answering, so the next node sees this one as busy.
                return with_report(mine, replace(mine, pool=chosen, desired_config=desired, reported_at=now)
                                   if mine is not None else NodeStatus(node, chosen, "", desired, "Working",
                                                                       "handed out desired config", now, labels=labels))
            return None

        await self._run_decision(node, decide, claim)
        if unknown:  # read the images outside the claim, then decide again with them known
            await asyncio.to_thread(self.images.load, unknown)
            unknown.clear()
            await self._run_decision(node, decide, claim)
        if unpooled:
            raise Unpooled(unpooled[0])
        return answer, stay[0], rank[0], staged[0], first[0]

    async def _run_decision(self, node: str, decide: Callable[[NodeStatuses], NodeStatus | None], claim: bool) -> None:
        """`decide` as a claim (its hand-out stored; one claim at a time: the store's lock or compare-and-swap) or
        as a read (what a claim would decide, written nowhere): awaited on the store's loop where it has one
        (`loop_store`), else in a worker thread."""
        store = self.loop_store()
        if store is not None and claim:
            await store.claim_node_async(node, decide)
        elif store is not None:
            self.store.read_statuses(decide)  # (the mirror's, in memory)
        elif claim:
            await asyncio.to_thread(self.store.claim_node, node, decide)
        else:
            await asyncio.to_thread(self.store.read_statuses, decide)
