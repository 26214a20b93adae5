"""The store on disk (`--store DIR`), one JSON file per object.

Layout:
    rendered/<name>.json   immutable RenderedConfig objects (content-addressed, never rewritten)
    pools/<pool>.json      PoolRecord: current target, sources, conditions, history
    nodes/<node>.json      NodeStatus: what each node last reported

Every write goes to a temporary file in the same directory, is fsynced, then renamed over the target
(`fleet.store.atomic_write`), so a reader sees the old or the new file, never half of one.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fleet.rendered import NodeStatus, PoolRecord, RenderedConfig
from fleet.rollout import NodeStatuses
from fleet.store import InUse, NotFound, StoreError, atomic_write, check_name, referenced_names


class DirectoryStore:
    """The store on disk (layout in the module docstring)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._nodes_seen: dict[str, tuple[tuple[int, int, int, int], NodeStatus]] = {}  # list_node_status's
        for sub in ("rendered", "pools", "nodes"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

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
            atomic_write(path, data)
        except OSError as exc:
            raise StoreError(f"{kind}/{name}", f"cannot write: {exc.strerror}") from exc

    def _names(self, kind: str) -> list[str]:
        try:
            return sorted(p.name[:-5] for p in (self.root / kind).iterdir()
                          if p.name.endswith(".json") and not p.name.startswith("."))
        except OSError as exc:
            raise StoreError(kind, f"cannot list: {exc.strerror}") from exc

    @staticmethod
    def _json(kind: str, name: str, raw: bytes) -> dict:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise StoreError(f"{kind}/{name}", f"corrupt JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise StoreError(f"{kind}/{name}", "corrupt: not an object")
        return data

    def put_rendered(self, rendered: RenderedConfig) -> None:
        if self._file("rendered", rendered.name).exists():
            return
        self._write("rendered", rendered.name, rendered.to_json_bytes())

    def get_rendered(self, name: str) -> RenderedConfig:
        return RenderedConfig.from_dict(self._json("rendered", name, self._read("rendered", name)))

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
        self._write("pools", record.name, json.dumps(record.to_dict(), sort_keys=True, indent=2).encode())

    def get_pool(self, pool: str) -> PoolRecord:
        return PoolRecord.from_dict(self._json("pools", pool, self._read("pools", pool)))

    def list_pools(self) -> list[str]:
        return self._names("pools")

    def put_node_status(self, status: NodeStatus) -> None:
        self._write("nodes", status.name, json.dumps(status.to_dict(), sort_keys=True, indent=2).encode())

    def get_node_status(self, node: str) -> NodeStatus:
        return NodeStatus.from_dict(self._json("nodes", node, self._read("nodes", node)))

    def list_node_status(self) -> list[NodeStatus]:
        """Every report; a file unchanged since this store's last listing is not read again.

        "Unchanged" is the same inode, size, mtime and ctime. Every write renames a new file over the old one
        (`atomic_write`), created while the old one still exists, so it never has the inode of the file it
        replaces; a file two writes later could reuse an inode number, but would then also need the same size
        and the same timestamps to the nanosecond. Reading 10,000 reports is then ~10,000 `stat` calls
        instead of 10,000 opens and JSON parses (`GET /pools` and the fleet page read them all).
        """
        directory = self.root / "nodes"
        try:
            with os.scandir(directory) as found:
                entries = sorted((e for e in found if e.name.endswith(".json") and not e.name.startswith(".")),
                                 key=lambda e: e.name)
        except OSError as exc:
            raise StoreError("nodes", f"cannot list: {exc.strerror}") from exc  # never the store's path
        known, seen = self._nodes_seen, {}
        statuses = []
        for entry in entries:
            name = entry.name[:-5]
            try:
                st = entry.stat()
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StoreError(f"nodes/{name}", f"cannot stat: {exc.strerror}") from exc
            key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            hit = known.get(name)
            status = hit[1] if hit is not None and hit[0] == key else self.get_node_status(name)
            seen[name] = (key, status)
            statuses.append(status)
        self._nodes_seen = seen
        return statuses

    def claim_node(self, node: str, decide: Callable[[NodeStatuses], NodeStatus | None]) -> NodeStatus | None:
        """Under an exclusive lock on `<root>/.claim.lock` (flock: held per open file, so it excludes the other
        threads and every other process of `mco serve --workers N` alike)."""
        with self._exclusive():
            handed = decide(NodeStatuses(self.list_node_status()))
            if handed is not None:
                self.put_node_status(handed)
            return handed

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        try:
            fd = os.open(self.root / ".claim.lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError("nodes", f"cannot open the claim lock: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
