"""Electing the one controller: a key created only if absent, attached to the candidate's etcd lease.

Each candidate holds a lease of `ttl` seconds, renewed every ttl/3. Campaigning is one transaction: if
`state/leader` does not exist, create it with this candidate's identity on its lease. The winner's leadership
is that key at the revision it created it; the controller's writes compare exactly that (EtcdStore.fenced),
so once the lease is gone (crash, partition, resignation) nothing the old leader sends can land. After a
SIGKILL the key disappears when the lease expires (ttl), and a candidate polling every `poll` seconds takes
over within ttl + poll. Resigning revokes the lease: the key is gone at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from fleet.etcd_client import Connection

log = logging.getLogger("mco.etcd")

POLL = 0.25  # seconds between campaigns of a candidate that is not leading


class Election:
    """One candidate's side of the election."""

    def __init__(self, conn: Connection, *, identity: str, ttl: int = 5) -> None:
        self.conn = conn
        self.identity = identity
        self.ttl = max(ttl, 2)  # etcd grants at least 2 s
        self.key = conn.key("state", "leader")
        self.won_revision = 0
        self._lease: int | None = None
        self._valid_until = 0.0
        self._keepalive: Any = None

    @property
    def leading(self) -> bool:
        """True while this candidate won and its lease is known to be alive."""
        return self.won_revision > 0 and time.monotonic() < self._valid_until

    def campaign(self) -> bool:
        """Try once to become leader; True when this candidate leads (now or already)."""
        if self.leading:
            return True
        self.won_revision = 0
        return self.conn.call(self._campaign)

    async def _campaign(self) -> bool:
        client = self.conn.client
        if self._lease is None or time.monotonic() >= self._valid_until:
            started = time.monotonic()
            lease = await client.lease(self.ttl)
            self._lease, self._valid_until = lease.id, started + lease.ttl
            if self._keepalive is None or self._keepalive.done():
                self._keepalive = asyncio.ensure_future(self._keep_alive())
        tx = client.transactions
        ok, responses = await client.transaction(
            [tx.create(self.key) == 0], [tx.put(self.key, self.identity.encode(), lease=self._lease)], [])
        if ok:
            self.won_revision = responses[0].response_put.header.revision
            log.info("%s leads (revision %d)", self.identity, self.won_revision)
        return ok

    async def _keep_alive(self) -> None:
        client = self.conn.client
        while self._lease is not None:
            lease, sent = self._lease, time.monotonic()
            try:
                reply = await client.refresh_lease(lease)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # etcd unreachable: the lease may still live; try again soon
                log.info("lease keep-alive failed: %s", exc)
                await asyncio.sleep(min(0.5, self.ttl / 3))
                continue
            if lease != self._lease:
                continue
            if reply is None or reply.TTL <= 0:
                log.warning("%s: lease expired; no longer leading", self.identity)
                self._lease, self._valid_until, self.won_revision = None, 0.0, 0
                return
            self._valid_until = sent + reply.TTL
            await asyncio.sleep(self.ttl / 3)

    def leader(self) -> str | None:
        """The identity of the current leader, if any."""

        async def read() -> str | None:
            found = await self.conn.client.get(self.key)
            return found.value.decode() if found is not None else None

        return self.conn.call(read)

    def resign(self) -> None:
        """Give up leadership at once (revoking the lease deletes the key); safe to call when not leading."""
        lease, self._lease, self._valid_until, self.won_revision = self._lease, None, 0.0, 0
        if lease is None:
            return

        async def revoke() -> None:
            if self._keepalive is not None:
                self._keepalive.cancel()
            await self.conn.client.revoke_lease(lease)

        self.conn.call(revoke)
