"""The directory store's change journal: which node reports changed, so a reader re-reads only those.

Every node-status write of a DirectoryStore (`put_node_status`, and the status a `claim_node` stores)
appends two lines to `<root>/.nodes.journal`, each one `write(2)` on a descriptor opened with O_APPEND (so
concurrent writers never interleave inside a line):

    ?<node>     before the record `nodes/<node>.json` is renamed into place (intent)
    +<node>     after the rename (done), also when the write failed

The file starts with a header line naming its generation (`mco-nodes-journal 1 <32 random hex digits>`).
A reader (`NodeIndex`) keeps every node's status with the (inode, size, mtime, ctime) of the file it parsed,
the generation it follows and the byte offset it has read up to. A refresh reads only the complete lines
after that offset and stats the records they name: a record whose stat did not change is not read again.
A `?` without its `+` yet keeps its node "pending": its record is stat-ed at every refresh until the `+`
comes. So a writer SIGKILLed between its rename and its `+` line does not leave readers stale: they see the
new record's stat. One killed before its rename leaves a record that never changes: one stat per refresh
until the next compaction.

A reader lists `nodes/` once (stat-ing each record, parsing only those whose stat changed) when the journal's
generation is not the one it follows (its first refresh, a compaction, a journal removed and created again),
when the journal is shorter than its offset (truncated), or when a line is not `?` or `+` and a valid node
name (`valid_name`; e.g. a writer killed in mid-line, then another line appended to the fragment). It notes
the journal's length before listing and counts the intents written before it, so no write in flight is
missed. Corrupt journal content never fails a read; a corrupt record raises StoreError naming the node.

Compaction: once the journal passes COMPACT_AT bytes, the writer that notices replaces it by rename with a
new, empty generation. Writers hold a shared flock on `<root>/.nodes.journal.lock` from their `?` to their
`+`; compaction takes it exclusively without waiting (LOCK_NB: skipped while any write is in flight, tried
again at a later write). So every write had both lines in one generation, its rename happened before the
compaction, and each reader's next refresh lists `nodes/` after that: nothing is lost with the old file.

Supported: any number of DirectoryStore instances, threads and processes writing node reports through
DirectoryStore on one directory. Not seen while mco runs: records changed by other programs (an edit, a
restore): readers see them after their next listing; removing the journal makes every reader list once.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fleet.atomic import write_atomic
from fleet.node_status import NodeStatus
from fleet.rollout import NodeStatuses
from fleet.store import MAX_NAME, StoreError, stored_object, valid_name

JOURNAL = ".nodes.journal"
LOCK = ".nodes.journal.lock"
MAGIC = b"mco-nodes-journal 1 "
HEADER_LEN = len(MAGIC) + 32 + 1
COMPACT_AT = 1 << 20           # bytes (~30,000 lines): past this, a writer starts a new generation
MAX_READ = 8 * COMPACT_AT      # a longer journal (compaction kept failing, or hostile) is not read: list instead

Key = tuple[int, int, int, int]


def stat_key(st: os.stat_result) -> Key:
    """What tells two versions of a record apart: every write renames a new file (a new inode) over the old
    one; a later file reusing the inode number would also need the same size and nanosecond timestamps."""
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def parse_status(name: str, raw: bytes) -> NodeStatus:
    """A node record's bytes as a NodeStatus; StoreError (naming the node, never a path) when corrupt."""
    data = stored_object(raw, f"nodes/{name}")
    try:
        status = NodeStatus.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"nodes/{name}", f"corrupt: {exc!r}") from exc
    if status.name != name:
        raise StoreError(f"nodes/{name}", "corrupt: the record names another node")
    return status


def load_record(nodes: Path, name: str, known: Key | None) -> tuple[Key, NodeStatus | None] | None:
    """(stat key, status) of `nodes/<name>.json`; the status is None when the key is `known` (not read again).
    None: no such record."""
    path = nodes / f"{name}.json"
    try:
        if known is not None and stat_key(os.stat(path)) == known:
            return known, None
        with open(path, "rb") as fh:
            key = stat_key(os.fstat(fh.fileno()))
            raw = fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:  # the message names the node, never the store's path on disk
        raise StoreError(f"nodes/{name}", f"cannot read: {exc.strerror}") from exc
    return key, parse_status(name, raw)


def parse_line(line: bytes) -> tuple[bool, str] | None:
    """(done, node) of one journal line without its newline; None when it is not one."""
    if not 2 <= len(line) <= MAX_NAME + 1 or line[:1] not in (b"?", b"+"):
        return None
    try:
        name = line[1:].decode("ascii")
    except UnicodeDecodeError:
        return None
    return (line[:1] == b"+", name) if valid_name(name) else None


def count_pending(pending: dict[str, int], done: bool, name: str) -> None:
    """Intents (`?`) not yet matched by a done (`+`), per node."""
    left = pending.get(name, 0) + (-1 if done else 1)
    if left > 0:
        pending[name] = left
    else:
        pending.pop(name, None)


class Journal:
    """The journal file of one store directory: appending, creating, replacing."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / JOURNAL
        self._lock_path = root / LOCK

    @contextmanager
    def writing(self, name: str) -> Iterator[None]:
        """Around the rename of `nodes/<name>.json`: the `?` line before, the `+` line after."""
        lock = self._lock()
        try:
            fcntl.flock(lock, fcntl.LOCK_SH)
            self._append(b"?%s\n" % name.encode())
            try:
                yield
            finally:
                size = self._append(b"+%s\n" % name.encode())
        finally:
            os.close(lock)
        if size > COMPACT_AT:
            self.replace(lambda fd: os.fstat(fd).st_size > COMPACT_AT)

    def open(self) -> int | None:
        """A read descriptor on the journal, created when missing; None when it cannot be created (a store
        this process may only read: its reader then lists nodes/ at every refresh)."""
        for _ in range(3):  # it can be replaced or removed between the create and the open
            try:
                return os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                try:
                    self._create()
                except StoreError:
                    return None
            except OSError as exc:
                raise StoreError("nodes", f"cannot open the journal: {exc.strerror}") from exc
        raise StoreError("nodes", "the journal keeps disappearing")

    def replace(self, needed: Callable[[int], bool]) -> bool:
        """Start a new generation if `needed(fd of the current journal)` still holds once no write is in
        flight (exclusive flock, without waiting). Best effort: False when skipped or impossible (a write
        that triggers it has succeeded; a reader that asks lists nodes/ anyway)."""
        try:
            lock = self._lock()
        except StoreError:
            return False
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fd = self.open()
            if fd is None:
                return False
            try:
                if not needed(fd):
                    return False
            finally:
                os.close(fd)
            write_atomic(self.path, _header(), durable=False)
            return True
        except (OSError, StoreError):  # BlockingIOError: a write is in flight
            return False
        finally:
            os.close(lock)

    def _lock(self) -> int:
        try:
            return os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreError("nodes", f"cannot open the journal lock: {exc.strerror}") from exc

    def _append(self, line: bytes) -> int:
        """Append one line in one write; returns the journal's length after it."""
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
            except FileNotFoundError:
                self._create()
                continue
            except OSError as exc:
                raise StoreError("nodes", f"cannot open the journal: {exc.strerror}") from exc
            try:
                if os.write(fd, line) != len(line):
                    raise StoreError("nodes", "short write to the journal")
                return os.lseek(fd, 0, os.SEEK_CUR)
            except OSError as exc:
                raise StoreError("nodes", f"cannot write the journal: {exc.strerror}") from exc
            finally:
                os.close(fd)
        raise StoreError("nodes", "the journal keeps disappearing")

    def _new_file(self) -> str:
        """A complete new journal (header only) under a temporary name, for `_create` to link(2) in: unlike
        fleet/atomic.py's rename, a link never replaces a journal another writer created meanwhile."""
        try:
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f"{JOURNAL}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                fh.write(_header())
            os.chmod(tmp, 0o644)
        except OSError as exc:
            raise StoreError("nodes", f"cannot create the journal: {exc.strerror}") from exc
        return tmp

    def _create(self) -> None:
        """A new journal if there is none: link(2) never replaces an existing one."""
        tmp = self._new_file()
        try:
            os.link(tmp, self.path)
        except FileExistsError:
            pass
        except OSError as exc:
            raise StoreError("nodes", f"cannot create the journal: {exc.strerror}") from exc
        finally:
            os.unlink(tmp)


def read_header(fd: int) -> bytes | None:
    """The journal's generation; None when the header is not one."""
    head = os.pread(fd, HEADER_LEN, 0)
    token = head[len(MAGIC):-1]
    if len(head) != HEADER_LEN or not head.startswith(MAGIC) or head[-1:] != b"\n" or \
            token.strip(b"0123456789abcdef") != b"":
        return None
    return token


def read_lines(fd: int, start: int, end: int) -> tuple[list[bytes], int]:
    """The complete lines between byte offsets `start` and `end`, and the offset after the last of them."""
    chunks, at = [], start
    while at < end:
        chunk = os.pread(fd, end - at, at)
        if not chunk:
            break
        chunks.append(chunk)
        at += len(chunk)
    data = b"".join(chunks)
    cut = data.rfind(b"\n") + 1
    return data[:cut].split(b"\n")[:-1], start + cut


class NodeIndex:
    """Every node's last report, kept current from the journal (the rules are in the module docstring).

    Not thread-safe: the store calls `refresh` under its lock.
    """

    def __init__(self, root: Path) -> None:
        self.journal = Journal(root)
        self.nodes = root / "nodes"
        self.statuses = NodeStatuses()
        self.listings = 0  # full listings of nodes/ so far (tests check when they happen)
        self._keys: dict[str, Key] = {}
        self._generation: bytes | None = None
        self._offset = 0
        self._pending: dict[str, int] = {}

    def refresh(self) -> NodeStatuses:
        """Apply every change since the last refresh; returns the statuses (the same object each time)."""
        fd = self.journal.open()
        if fd is None:
            self._list(None, None, 0)
            return self.statuses
        try:
            generation, size = read_header(fd), os.fstat(fd).st_size
            if generation is None or size > MAX_READ:  # not one to follow: a new generation, if nothing writes
                self.journal.replace(lambda f: read_header(f) is None or os.fstat(f).st_size > MAX_READ)
                generation = None  # listed now; the next refresh lists once more and follows the new one
            if generation is None or generation != self._generation or size < self._offset \
                    or not self._follow(*read_lines(fd, self._offset, size)):
                self._list(fd, generation, size)
        except OSError as exc:
            raise StoreError("nodes", f"cannot read the journal: {exc.strerror}") from exc
        finally:
            os.close(fd)
        return self.statuses

    def _follow(self, lines: list[bytes], end: int) -> bool:
        """Re-check the nodes the new lines name (and those still pending); False at a line that is not one."""
        pending, named = dict(self._pending), set()
        for line in lines:
            entry = parse_line(line)
            if entry is None:
                return False
            count_pending(pending, *entry)
            named.add(entry[1])
        for name in named | pending.keys():
            self._load(name)
        self._pending, self._offset = pending, end
        return True

    def _list(self, fd: int | None, generation: bytes | None, size: int) -> None:
        """Every record; the journal's length `size` was taken before, so later writes are followed next."""
        pending: dict[str, int] = {}
        end = 0
        if fd is not None and generation is not None:
            lines, end = read_lines(fd, HEADER_LEN, size)
            for line in lines:
                if (entry := parse_line(line)) is not None:
                    count_pending(pending, *entry)
        try:
            with os.scandir(self.nodes) as found:
                names = {e.name[:-5] for e in found if e.name.endswith(".json") and not e.name.startswith(".")}
        except OSError as exc:
            raise StoreError("nodes", f"cannot list: {exc.strerror}") from exc  # never the store's path
        for name in set(self._keys) - names:
            self._forget(name)
        for name in names:
            if valid_name(name):  # a file named against the rules was not written by a store
                self._load(name)
        self._generation, self._offset, self._pending = generation, end, pending
        self.listings += 1

    def _load(self, name: str) -> None:
        found = load_record(self.nodes, name, self._keys.get(name))
        if found is None:
            self._forget(name)
        elif found[1] is not None:
            self.statuses.put(found[1])
            self._keys[name] = found[0]

    def _forget(self, name: str) -> None:
        self.statuses.remove(name)
        self._keys.pop(name, None)


def _header() -> bytes:
    """A new generation's first line: the magic and a random generation ID."""
    return MAGIC + secrets.token_hex(16).encode() + b"\n"
