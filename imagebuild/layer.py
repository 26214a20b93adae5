"""Image plan -> one reproducible layer tarball: same plan, same bytes, on every run and machine.

Recipe (the OCI image spec (`image-layout.md`, `layer.md`)): PAX tar built from `TarInfo`s we fill in ourselves (never from the host's
files), entries sorted by path with hard links last (their targets must precede them), every parent
directory present, mtime 0 (an int), uid/gid from the plan (root by default) with empty user/group names,
explicit modes. Compression is gzip through zlib with a fixed level and a header without name or time
(`wbits=31`: mtime 0), or none at all (`application/vnd.oci.image.layer.v1.tar`, where digest == diff_id:
the choice for byte-identical layers across machines whose zlib builds differ).
"""

from __future__ import annotations

import hashlib
import queue
import tarfile
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import BinaryIO

from imagebuild.plan_builder import Entry

MEDIA_TAR = "application/vnd.oci.image.layer.v1.tar"
MEDIA_TAR_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
COMPRESSIONS = ("gzip", "none")
GZIP_LEVEL = 6
_BLOCK = tarfile.BLOCKSIZE

_TYPES = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE}


@dataclass(frozen=True)
class LayerInfo:
    """What the config and the manifest say about a written layer."""

    media_type: str
    digest: str      # sha256 of the blob as stored (compressed)
    diff_id: str     # sha256 of the uncompressed tar
    size: int        # bytes of the blob as stored
    entries: int


_TYPE_BYTES = {"file": b"0", "dir": b"5", "symlink": b"2", "hardlink": b"1"}
_NUL32 = b"\0" * 32
_FIXED_TAIL = b"ustar\x0000" + _NUL32 + _NUL32 + b"\0" * 16 + b"\0" * 155 + b"\0" * 12  # no device fields


def _fast_header(entry: Entry) -> bytes | None:
    """The ustar header tarfile's PAX format writes for a short ASCII entry, built directly (it is 4x faster);
    None when a PAX extended header is needed (long or non-ASCII names, large numbers)."""
    try:
        name = entry.path.lstrip("/").encode("ascii")
        link = (entry.target.lstrip("/") if entry.kind == "hardlink" else entry.target).encode("ascii") \
            if entry.kind in ("symlink", "hardlink") else b""
    except UnicodeEncodeError:
        return None
    if entry.kind == "dir":
        name += b"/"
    size = len(entry.data) if entry.kind == "file" else 0
    if len(name) > 100 or len(link) > 100 or entry.uid >= 0o7777777 or entry.gid >= 0o7777777 \
            or size >= 0o77777777777:
        return None
    head = b"".join((
        name.ljust(100, b"\0"), b"%07o\0" % (entry.mode & 0o7777), b"%07o\0" % entry.uid, b"%07o\0" % entry.gid,
        b"%011o\0" % size, b"00000000000\0", b"        ", _TYPE_BYTES[entry.kind], link.ljust(100, b"\0"),
        _FIXED_TAIL))
    chksum = sum(head)
    return head[:148] + b"%06o\0 " % chksum + head[156:]


def _header(entry: Entry) -> bytes:
    fast = _fast_header(entry)
    if fast is not None:
        return fast
    return _tarfile_header(entry)


def _tarfile_header(entry: Entry) -> bytes:
    info = tarfile.TarInfo(entry.path.lstrip("/"))
    info.type = _TYPES[entry.kind]
    info.mode = entry.mode
    info.uid, info.gid = entry.uid, entry.gid
    info.uname = info.gname = ""
    info.mtime = 0
    if entry.kind == "file":
        info.size = len(entry.data)
    elif entry.kind == "symlink":
        info.linkname = entry.target
    elif entry.kind == "hardlink":
        info.linkname = entry.target.lstrip("/")
    if entry.kind == "dir":
        info.name += "/"
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")


def tar_order(entries: Iterable[Entry]) -> list[Entry]:
    """Sorted by path, hard links after everything else so their targets exist when they are unpacked."""
    return sorted(entries, key=lambda e: (e.kind == "hardlink", e.path))


class _Sink:
    """Hashes the raw tar, compresses it and writes the blob; with gzip this runs on a second thread (zlib and
    hashlib release the GIL), so building headers and compressing overlap as `tar | gzip` does."""

    def __init__(self, out: BinaryIO, compression: str) -> None:
        self.out = out
        self.raw_hash = hashlib.sha256()
        self.blob_hash = hashlib.sha256()
        self.size = 0
        self.compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31) if compression == "gzip" else None
        self.queue: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._drain, daemon=True) if self.compressor else None
        if self.thread:
            self.thread.start()

    def _emit(self, data: bytes) -> None:
        if data:
            self.blob_hash.update(data)
            self.out.write(data)
            self.size += len(data)

    def _consume(self, chunk: bytes) -> None:
        self.raw_hash.update(chunk)
        self._emit(self.compressor.compress(chunk) if self.compressor else chunk)

    def _drain(self) -> None:
        try:
            while (chunk := self.queue.get()) is not None:
                self._consume(chunk)
            assert self.compressor is not None
            self._emit(self.compressor.flush())
        except BaseException as exc:  # handed to the producer in close()
            self.error = exc
            while self.queue.get() is not None:
                pass

    def put(self, chunk: bytes) -> None:
        if self.thread:
            if self.error is not None:
                raise self.error
            self.queue.put(chunk)
        else:
            self._consume(chunk)

    def close(self) -> None:
        if self.thread:
            self.queue.put(None)
            self.thread.join()
            if self.error is not None:
                raise self.error


def write_layer(entries: Iterable[Entry], out: BinaryIO, *, compression: str = "gzip") -> LayerInfo:
    """Stream the layer for `entries` into `out`; returns its digests, size and media type."""
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown layer compression {compression!r} (choose {', '.join(COMPRESSIONS)})")
    sink = _Sink(out, compression)
    pending: list[bytes] = []
    pending_len = 0
    count = 0
    try:
        for entry in tar_order(entries):
            count += 1
            header = _header(entry)
            pending.append(header)
            pending_len += len(header)
            if entry.kind == "file" and entry.data:
                pending.append(entry.data)
                pad = -len(entry.data) % _BLOCK
                if pad:
                    pending.append(b"\0" * pad)
                pending_len += len(entry.data) + pad
            if pending_len >= 1 << 20:
                sink.put(b"".join(pending))
                pending, pending_len = [], 0
        pending.append(b"\0" * (2 * _BLOCK))
        sink.put(b"".join(pending))
    finally:
        sink.close()
    media = MEDIA_TAR_GZIP if compression == "gzip" else MEDIA_TAR
    return LayerInfo(media, "sha256:" + sink.blob_hash.hexdigest(), "sha256:" + sink.raw_hash.hexdigest(),
                     sink.size, count)
