"""The store on disk (`--store DIR`), one JSON file per object.

Layout:
    rendered/<name>.json   immutable RenderedConfig objects (content-addressed, never rewritten)
    pools/<pool>.json      PoolRecord: current target, sources, conditions, history
    nodes/<node>.json      NodeStatus: what each node last reported
    .nodes.journal         which node records changed, in order (fleet/node_journal.py)
    .claim.lock, .nodes.journal.lock   flock(2) targets (hand-outs and reports; journal writes and compaction)
    .pools.lock            flock(2) target of `update_pool` (a read, change and write of a pool record)
    presence/<owner>.json  which nodes each server process heard from lately (fleet/presence_digest.py)

Every write goes to a temporary file in the same directory, is fsynced, then renamed over the target
(`fleet.atomic.write_atomic`), so a reader sees the old or the new file, never half of one. The directory
belongs to mco: node records changed by other programs while it runs are seen late (fleet/node_journal.py).
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from fleet import presence_digest
from fleet.atomic import write_atomic
from fleet.clock import system_clock
from fleet.node_journal import NodeIndex, load_record
from fleet.node_status import NodeStatus, with_report
from fleet.rendered import PoolRecord, RenderedConfig
from fleet.rollout import NodeStatuses
from fleet.store import InUse, NotFound, StoreError, T, check_name, referenced_names, stored_object
from ignition.canonical import canonical_json

STALE_PRESENCE = 60.0  # seconds after a presence digest's time to live ran out before a reader removes its file


class DirectoryStore:
    """The store on disk (layout in the module docstring)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        for sub in ("rendered", "pools", "nodes"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self._index = NodeIndex(self.root)  # every node's status, followed through the journal
        self._lock = threading.RLock()  # the index's: `decide` may read the store again
        self._seen: dict[str, NodeStatus] = {}  # each node's record as this store last read or wrote it
        self._presence_last: dict[str, bytes] = {}  # what this process last wrote as each owner (`publish_presence`)

    def _file(self, kind: str, name: str) -> Path:
        return self.root / kind / f"{check_name(kind, name)}.json"

    def _read(self, kind: str, name: str) -> bytes:
        path = self._file(kind, name)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise NotFound(f"{kind}/{name}", "not found") from None
        except OSError as exc:  # the message names the object, never the store's path on disk
            raise StoreError(f"{kind}/{name}", f"cannot read: {exc.strerror}") from exc

    def _write(self, kind: str, name: str, data: bytes) -> None:
        path = self._file(kind, name)
        try:
            write_atomic(path, data)
        except OSError as exc:
            raise StoreError(f"{kind}/{name}", f"cannot write: {exc.strerror}") from exc

    def _names(self, kind: str) -> list[str]:
        try:
            return sorted(p.name[:-5] for p in (self.root / kind).iterdir()
                          if p.name.endswith(".json") and not p.name.startswith("."))
        except OSError as exc:
            raise StoreError(kind, f"cannot list: {exc.strerror}") from exc

    def put_rendered(self, rendered: RenderedConfig) -> None:
        if self._file("rendered", rendered.name).exists():
            return
        self._write("rendered", rendered.name, rendered.to_json_bytes())

    def get_rendered(self, name: str) -> RenderedConfig:
        return RenderedConfig.from_dict(stored_object(self._read("rendered", name), f"rendered/{name}"))

    def list_rendered(self) -> list[str]:
        return self._names("rendered")

    def delete_rendered(self, name: str) -> None:
        path = self._file("rendered", name)
        if not path.exists():
            raise NotFound(f"rendered/{name}", "no such rendered config")
        if name in referenced_names(self):
            raise InUse(f"rendered/{name}", "still referenced by a pool or node")
        path.unlink()

    def put_pool(self, record: PoolRecord) -> None:
        self._write("pools", record.name, canonical_json(record.to_dict(), pretty=True))

    def get_pool(self, pool: str) -> PoolRecord:
        return PoolRecord.from_dict(stored_object(self._read("pools", pool), f"pools/{pool}"))

    def update_pool(self, pool: str, change: Callable[[PoolRecord | None], PoolRecord | None]) -> PoolRecord | None:
        """Under an exclusive lock on `<root>/.pools.lock`: every process's `update_pool` waits for the others."""
        check_name("pools", pool)
        with self._exclusive(".pools.lock", "pools"):
            try:
                known: PoolRecord | None = self.get_pool(pool)
            except NotFound:
                known = None
            updated = change(known)
            if updated is not None:
                self.put_pool(updated)
            return updated

    def list_pools(self) -> list[str]:
        return self._names("pools")

    def put_node_status(self, status: NodeStatus) -> None:
        """Under the claims' lock, so a report never undoes a claim or a relabel: a record with a history
        (fleet.node_status.with_report) was built on the node's record as this store last saw it; when another
        writer (a process, or `mco nodes label`) changed it since, the history is built again on the record found,
        as the etcd store does (fleet/etcd_reports.py)."""
        with self._exclusive(".claim.lock", "nodes"):
            self._put_node_status(status, built_on_seen=True)

    def _put_node_status(self, status: NodeStatus, *, built_on_seen: bool) -> None:
        """The write itself, the claims' lock held (`built_on_seen`: False for a claim, decided on the records
        read under that lock)."""
        name = check_name("nodes", status.name)
        if built_on_seen and status.history:
            found = load_record(self.root / "nodes", name, None)
            current = found[1] if found is not None else None
            with self._lock:
                seen = self._seen.get(name)
            if current is not None and seen is not None and current != seen:
                status = with_report(current, status)
        data = canonical_json(status.to_dict(), pretty=True)
        with self._index.journal.writing(name):
            self._write("nodes", name, data)
        with self._lock:
            self._seen[name] = status

    def get_node_status(self, node: str) -> NodeStatus:
        found = load_record(self.root / "nodes", check_name("nodes", node), None)
        if found is None or found[1] is None:
            raise NotFound(f"nodes/{node}", "not found")
        with self._lock:
            self._seen[node] = found[1]
        return found[1]

    def list_node_status(self) -> list[NodeStatus]:
        """Every report: the records named in the journal since the last call are read again, not the others
        (fleet/node_journal.py). The list is shared until the next change: callers must not modify it."""
        with self._lock:
            return self._index.refresh().ordered()

    def read_statuses(self, read: Callable[[NodeStatuses], T]) -> T:
        """`read` on this store's statuses brought up to date from the journal (fleet/node_journal.py)."""
        with self._lock:
            return read(self._index.refresh())

    def claim_node(self, node: str, decide: Callable[[NodeStatuses], NodeStatus | None]) -> NodeStatus | None:
        """Under an exclusive lock on `<root>/.claim.lock` (flock: held per open file, so it excludes the other
        threads and every other process of `mco serve --workers N` alike); `decide` sees this store's statuses
        brought up to date from the journal, so a claim costs the changes since the last one, not the fleet."""
        with self._exclusive(".claim.lock", "nodes"):
            with self._lock:
                handed = decide(self._index.refresh())
            if handed is not None:
                self._put_node_status(handed, built_on_seen=False)
            return handed

    def publish_presence(self, owner: str, nodes: Collection[str] | None, ttl: float) -> None:
        """`presence/<owner>.json`, written whole when its names change (each process of `mco serve --workers N`
        writes its own); kept alive by its modification time, touched without a write (or written again when a
        reader removed it)."""
        path = self.root / "presence" / f"{check_name('presence', owner)}.json"
        try:
            if nodes is None and owner in self._presence_last:
                try:
                    os.utime(path)
                    return
                except FileNotFoundError:
                    pass  # removed by a reader while this process stalled: written again below
            data = presence_digest.encode(nodes or (), ttl) if nodes is not None else self._presence_last.get(
                owner, presence_digest.encode((), ttl))
            path.parent.mkdir(exist_ok=True)
            write_atomic(path, data)
            self._presence_last[owner] = data
        except OSError as exc:
            raise StoreError(f"presence/{owner}", f"cannot write: {exc.strerror}") from exc

    def read_presence(self) -> frozenset[str]:
        """The digests under `presence/` touched within their time to live; a file a minute past it (its process
        has gone) is removed."""
        now = system_clock().timestamp()
        live = []
        try:
            paths = sorted((self.root / "presence").glob("*.json"))
        except OSError:
            paths = []
        for path in paths:
            try:
                touched = path.stat().st_mtime
                blob = path.read_bytes()
            except OSError:
                continue  # removed meanwhile by another reader
            decoded = presence_digest.decode(blob)
            ttl = decoded[0] if decoded is not None else 0.0
            if touched + ttl + STALE_PRESENCE < now:
                path.unlink(missing_ok=True)  # a digest that is not one goes too, once as old
            elif decoded is not None and touched + ttl >= now:
                live.append(decoded[1])
        return presence_digest.union(live)

    @contextmanager
    def _exclusive(self, lock: str, kind: str) -> Iterator[None]:
        try:
            fd = os.open(self.root / lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(kind, f"cannot open the lock: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
