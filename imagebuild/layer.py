"""Image plan -> one reproducible layer tarball: same plan, same bytes, on every run and machine.

Recipe (notes/imaging.md A6): PAX tar built from `TarInfo`s we fill in ourselves (never from the host's
files), entries sorted by path with hard links last (their targets must precede them), every parent
directory present, mtime 0 (an int), uid/gid from the plan (root by default) with empty user/group names,
explicit modes. Compression is gzip through zlib with a fixed level and a header without name or time
(`wbits=31`: mtime 0), or none at all (`application/vnd.oci.image.layer.v1.tar`, where digest == diff_id:
the choice for byte-identical layers across machines whose zlib builds differ).
"""

from __future__ import annotations

import hashlib
import tarfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import BinaryIO

from imagebuild.plan import Entry

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


def _header(entry: Entry) -> bytes:
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


def write_layer(entries: Iterable[Entry], out: BinaryIO, *, compression: str = "gzip") -> LayerInfo:
    """Stream the layer for `entries` into `out`; returns its digests, size and media type."""
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown layer compression {compression!r} (choose {', '.join(COMPRESSIONS)})")
    raw_hash = hashlib.sha256()
    blob_hash = hashlib.sha256()
    size = 0
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31) if compression == "gzip" else None
    pending: list[bytes] = []
    pending_len = 0

    def flush(final: bool = False) -> None:
        nonlocal size, pending_len
        chunk = b"".join(pending)
        pending.clear()
        pending_len = 0
        raw_hash.update(chunk)
        data = compressor.compress(chunk) if compressor else chunk
        if final and compressor:
            data += compressor.flush()
        if data:
            blob_hash.update(data)
            out.write(data)
            size += len(data)

    count = 0
    for entry in tar_order(entries):
        count += 1
        pending.append(_header(entry))
        pending_len += len(pending[-1])
        if entry.kind == "file" and entry.data:
            pending.append(entry.data)
            pad = -len(entry.data) % _BLOCK
            if pad:
                pending.append(b"\0" * pad)
            pending_len += len(entry.data) + pad
        if pending_len >= 1 << 20:
            flush()
    pending.append(b"\0" * (2 * _BLOCK))
    flush(final=True)
    media = MEDIA_TAR_GZIP if compressor else MEDIA_TAR
    return LayerInfo(media, "sha256:" + blob_hash.hexdigest(), "sha256:" + raw_hash.hexdigest(), size, count)
