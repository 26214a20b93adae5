"""Local files under the files directory, and Butane's choice of data URL for embedded contents.

Sugar step used by resources (`inline`/`local`), trees, `contents_local` and `ssh_authorized_keys_local`.
`make_data_url` is Butane's encoder (coreos/butane `config/util`): the shortest of `data:,<url-escaped>` and
`data:;base64,<b64>`, and, when the resource is not already compressed and compression is allowed, the
base64 of the gzipped bytes when that plus the four characters of `gzip` is shorter still. Without
compression the result carries `compression: ""` so a merge child cannot inherit a parent's `gzip`.
"""

from __future__ import annotations

import base64
import errno
import os

from butane.errors import ButaneError
from butane.goflate import gzip_best
from butane.messages import ERR_FILES_DIR_ESCAPE, ERR_NO_FILES_DIR
from ignition.dataurl import escape

_GO_ERRNO = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "not a directory",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ENAMETOOLONG: "file name too long",
}


class LocalFileError(ButaneError):
    """A local file could not be used; the message is Butane's (or Go's `open <path>: <reason>`)."""


def make_data_url(data: bytes, compression: str | None, allow_compression: bool) -> tuple[str, str | None]:
    """(data URL, compression to set or None to leave the resource's own) for `data`, as Butane picks them."""
    out_compression: str | None = "" if not compression else None
    opaque = "," + escape(data)
    b64 = ";base64," + base64.b64encode(data).decode("ascii")
    if len(b64) < len(opaque):
        opaque = b64
    # Go's smallest gzip stream is 23 bytes (";base64," + 32 characters): it cannot beat 44 characters or fewer.
    if not compression and allow_compression and len(opaque) > 44:
        gz = ";base64," + base64.b64encode(gzip_best(data)).decode("ascii")
        if len(gz) + len("gzip") < len(opaque):
            opaque = gz
            out_compression = "gzip"
    return "data:" + opaque, out_compression


def go_error(op: str, path: str, exc: OSError) -> str:
    """Go's `*PathError` text for an OS error (`open x: no such file or directory`)."""
    reason = _GO_ERRNO.get(exc.errno or 0, exc.strerror or str(exc))
    return f"{op} {path}: {reason}"


def join(files_dir: str, local: str) -> str:
    """Go's filepath.Join(filesDir, local): joined then cleaned (an absolute `local` stays inside)."""
    joined = os.path.normpath(files_dir + "/" + local)
    return joined


def ensure_within(path: str, files_dir: str) -> None:
    """Refuse a path that leaves the files directory (after cleaning, as Butane checks it)."""
    base = os.path.abspath(files_dir)
    target = os.path.abspath(path)
    if target != base and not target.startswith(base + os.sep):
        raise LocalFileError(ERR_FILES_DIR_ESCAPE)


def read_local(local: str, files_dir: str | None) -> bytes:
    """Contents of `local` under the files directory; LocalFileError with Butane's text otherwise."""
    if not files_dir:
        raise LocalFileError(ERR_NO_FILES_DIR)
    path = join(files_dir, local)
    ensure_within(path, files_dir)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise LocalFileError(go_error("open", path, exc)) from exc
    try:
        with os.fdopen(fd, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise LocalFileError(go_error("read", path, exc)) from exc
