"""Opening a store from where it lives: the one opener behind every `--store DIR|etcd://...`.

Where it sits: `mco render`, `mco diff`, `mco rollout`, `mco serve` (directory, or a replica of etcd) and
`mco controller` open their store here. Nothing given: a `MemoryStore`. A path: the `DirectoryStore` there.
An `etcd://HOST:PORT[,...][/PREFIX]` URL, or `EtcdSettings` already parsed with TLS client files
(fleet/etcd_url.py): an `EtcdStore` on a connection of its own; `follow=True` adds the mirror a replica
serves from (one consistent range read, then a watch: fleet/etcd_mirror.py). `open_following`, awaited by a
replica's server, opens that store on the server's own loop: its handlers then await the node writes there
(fleet/store.py `LoopWrites`). `close_store` undoes either.
"""

from __future__ import annotations

from pathlib import Path

from fleet.etcd_url import EtcdSettings, is_etcd_url, parse_url
from fleet.store import MemoryStore, Store

__all__ = ["close_store", "open_following", "open_store"]


def open_store(where: str | Path | EtcdSettings | None, *, follow: bool = False) -> Store:
    """The store at `where`. ValueError: a malformed etcd URL; StoreError/OSError: it cannot be opened."""
    settings = _etcd_settings(where)
    if settings is None:
        return _local_store(where)
    from fleet.etcd_client import Connection
    from fleet.etcd_mirror import Mirror
    from fleet.etcd_store import EtcdStore

    conn = Connection(settings)
    if not follow:
        return EtcdStore(conn)
    mirror = Mirror(conn)
    try:
        mirror.start()
    except BaseException:
        conn.close()
        raise
    return EtcdStore(conn, mirror=mirror)


async def open_following(where: str | Path | EtcdSettings | None) -> Store:
    """`open_store(where, follow=True)` for a server about to serve on the running loop: an etcd store's
    connection, watch and group commits run on that loop (`Connection.on_loop`)."""
    settings = _etcd_settings(where)
    if settings is None:
        return _local_store(where)
    from fleet.etcd_client import Connection
    from fleet.etcd_mirror import Mirror
    from fleet.etcd_store import EtcdStore

    conn = Connection.on_loop(settings)
    mirror = Mirror(conn)
    try:
        await mirror.start_async()
    except BaseException:
        conn.close()
        raise
    return EtcdStore(conn, mirror=mirror)


def _etcd_settings(where: str | Path | EtcdSettings | None) -> EtcdSettings | None:
    """Where etcd is, or None when `where` is not an etcd store (ValueError: a malformed etcd URL)."""
    if isinstance(where, EtcdSettings):
        return where
    return parse_url(where) if isinstance(where, str) and is_etcd_url(where) else None


def _local_store(where: str | Path | EtcdSettings | None) -> Store:
    """A `MemoryStore` (nothing given) or the `DirectoryStore` at a path (`where` is not etcd: `_etcd_settings`)."""
    assert not isinstance(where, EtcdSettings)
    if where is None:
        return MemoryStore()
    from fleet.directory_store import DirectoryStore  # (the etcd client is imported only for etcd)

    return DirectoryStore(Path(where))


def close_store(store: Store) -> None:
    """Stop following etcd and close the connection of an etcd store; nothing to do for the others."""
    mirror = getattr(store, "mirror", None)
    if mirror is not None:
        mirror.stop()
    conn = getattr(store, "conn", None)
    if conn is not None:
        conn.close()
