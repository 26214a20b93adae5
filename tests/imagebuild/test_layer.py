"""The layer tarball: deterministic bytes, tar structure, gzip header, digests."""

from __future__ import annotations

import gzip
import hashlib
import io
import random
import tarfile

import pytest

from imagebuild.layer import MEDIA_TAR, MEDIA_TAR_GZIP, write_layer
from imagebuild.plan_builder import Entry

ENTRIES = [
    Entry("/etc", "dir", 0o755),
    Entry("/etc/app", "dir", 0o700),
    Entry("/etc/app/a.conf", "file", 0o600, b"a" * 700),
    Entry("/etc/app/hard", "hardlink", 0o600, target="/etc/app/a.conf"),
    Entry("/etc/app/link", "symlink", 0o777, target="a.conf"),
    Entry("/etc/owned", "file", 0o640, b"x", uid=1000, gid=1001),
    Entry("/etc/caf\u00e9-" + "long" * 40, "file", 0o644, b"unicode and long name"),
    Entry("/etc/zz-hard-first", "hardlink", 0o600, target="/etc/app/a.conf"),
]


def layer(entries: list[Entry], compression: str = "gzip") -> tuple[bytes, object]:
    buf = io.BytesIO()
    info = write_layer(entries, buf, compression=compression)
    return buf.getvalue(), info


@pytest.mark.parametrize("compression", ["gzip", "none"])
def test_same_entries_in_any_order_give_the_same_bytes(compression: str) -> None:
    first, _ = layer(ENTRIES, compression)
    shuffled = ENTRIES[:]
    random.Random(7).shuffle(shuffled)
    second, _ = layer(shuffled, compression)
    assert first == second


def test_digests_sizes_and_media_types() -> None:
    blob, info = layer(ENTRIES)
    raw, plain = layer(ENTRIES, "none")
    assert info.media_type == MEDIA_TAR_GZIP and plain.media_type == MEDIA_TAR
    assert info.digest == "sha256:" + hashlib.sha256(blob).hexdigest() and info.size == len(blob)
    assert info.diff_id == plain.diff_id == plain.digest == "sha256:" + hashlib.sha256(raw).hexdigest()
    assert gzip.decompress(blob) == raw
    assert blob[4:8] == b"\0\0\0\0"  # gzip MTIME field
    assert not blob[3] & 0x08        # no FNAME


def test_tar_members() -> None:
    blob, _ = layer(ENTRIES)
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        assert names[-2:] == ["etc/app/hard", "etc/zz-hard-first"]   # hard links after their targets
        assert names[:-2] == sorted(names[:-2])
        for m in members:
            assert (m.mtime, m.uname, m.gname) == (0, "", "")
        by_name = {m.name: m for m in members}
        assert by_name["etc/app"].isdir() and by_name["etc/app"].mode == 0o700
        assert by_name["etc/app/link"].issym() and by_name["etc/app/link"].linkname == "a.conf"
        assert by_name["etc/app/hard"].islnk() and by_name["etc/app/hard"].linkname == "etc/app/a.conf"
        assert (by_name["etc/owned"].uid, by_name["etc/owned"].gid) == (1000, 1001)
        extracted = tar.extractfile("etc/caf\u00e9-" + "long" * 40)
        assert extracted is not None and extracted.read() == b"unicode and long name"


def test_unknown_compression() -> None:
    with pytest.raises(ValueError, match="unknown layer compression"):
        layer(ENTRIES, "zstd")


HEADERS = {
    "dir": Entry("/etc", "dir", 0o755),
    "file-setuid-owned": Entry("/etc/a", "file", 0o4750, b"x" * 1000, uid=1000, gid=5),
    "symlink": Entry("/etc/l", "symlink", 0o777, target="../x"),
    "hardlink": Entry("/etc/h", "hardlink", 0o600, target="/etc/a"),
    "name-100": Entry("/" + "n" * 100, "file", 0o644, b""),
}


@pytest.mark.parametrize("entry", HEADERS.values(), ids=HEADERS.keys())
def test_fast_headers_equal_tarfile_pax_headers(entry: Entry) -> None:
    from imagebuild.layer import _fast_header, _tarfile_header
    assert _fast_header(entry) == _tarfile_header(entry)


@pytest.mark.parametrize("entry", [Entry("/" + "n" * 101, "file"), Entry("/caf\u00e9", "file"),
                                   Entry("/l", "symlink", target="t" * 101), Entry("/big", "file", uid=1 << 22)],
                         ids=["long-name", "non-ascii", "long-link", "big-uid"])
def test_fast_header_declines_what_needs_pax(entry: Entry) -> None:
    from imagebuild.layer import _fast_header
    assert _fast_header(entry) is None
