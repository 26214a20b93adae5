"""Atomic writes, modes and owners, backups taken once and restored when a file leaves the config."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from applier.errors import PermanentError
from applier.files import FileWriter, host_path, owner_of
from applier.state import StateDir
from tests.applier.helpers import file_entry, make_root


@pytest.fixture
def writer(tmp_path: Path) -> FileWriter:
    root = make_root(tmp_path / "root")
    return FileWriter(root, StateDir(root / "etc/machine-config-daemon"))


def test_write_mode_owner_contents(writer: FileWriter) -> None:
    writer.write(file_entry("/etc/app/a.conf", "x=1\n", 0o600, user={"name": "core"}, group={"id": 1000}))
    target = writer.root / "etc/app/a.conf"
    st = target.stat()
    assert (target.read_text(), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == ("x=1\n", 0o600, 1000, 1000)
    assert not [p for p in target.parent.iterdir() if "mco-tmp" in p.name]


def test_gzip_and_base64(writer: FileWriter) -> None:
    import base64
    import gzip

    data = base64.b64encode(gzip.compress(b"zipped\n")).decode()
    writer.write({"path": "/etc/z", "contents": {"source": f"data:;base64,{data}", "compression": "gzip"}})
    assert (writer.root / "etc/z").read_bytes() == b"zipped\n"
    assert stat.S_IMODE((writer.root / "etc/z").stat().st_mode) == 0o644


BAD = [
    ("unknown-user", file_entry("/etc/a", "x", user={"name": "nobody-here"}), "/etc/a.user.name",
     "failed to retrieve UserID for username: nobody-here"),
    ("remote-source", {"path": "/etc/a", "contents": {"source": "https://example.com/x"}}, "/etc/a",
     "unsupported contents source scheme 'https' (only data: URLs are applied)"),
    # the scheme Go's url.Parse finds (Ignition reads every source with it): none in a relative reference, and an
    # error where a scheme cannot start with a digit and the first segment then holds a colon
    ("relative-source", {"path": "/etc/a", "contents": {"source": "dir/x:y"}}, "/etc/a",
     "unsupported contents source scheme '' (only data: URLs are applied)"),
    ("unparsable-source", {"path": "/etc/a", "contents": {"source": "1http://example.com/x"}}, "/etc/a",
     "unable to parse url"),
    ("bad-data-url", {"path": "/etc/a", "contents": {"source": "data:,a b"}}, "/etc/a",
     "invalid data URL: invalid data character"),
    ("not-gzip", {"path": "/etc/a", "contents": {"source": "data:,x", "compression": "gzip"}}, "/etc/a",
     "invalid gzip contents: Not a gzipped file (b'x')"),
    ("append", {**file_entry("/etc/a", "x"), "append": [{"source": "data:,y"}]}, "/etc/a",
     "found an append section when writing files. Append is not supported"),
    ("dotdot", file_entry("/etc/../x", "x"), "/etc/../x", "path must be absolute and must not contain '..'"),
]


@pytest.mark.parametrize("entry,path,message", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_entries_name_the_path(writer: FileWriter, entry: dict, path: str, message: str) -> None:
    with pytest.raises(PermanentError) as err:
        writer.write(entry)
    assert (err.value.path, err.value.message) == (path, message)


def test_directory_in_the_way(writer: FileWriter) -> None:
    (writer.root / "etc/blocked").mkdir()
    with pytest.raises(PermanentError) as err:
        writer.write(file_entry("/etc/blocked", "x"))
    assert err.value.path == "/etc/blocked"


def test_original_backed_up_once_and_restored(writer: FileWriter) -> None:
    target = writer.root / "etc/chrony.conf"
    target.write_text("os default\n")
    os.chmod(target, 0o640)
    writer.write(file_entry("/etc/chrony.conf", "v1\n"))
    writer.write(file_entry("/etc/chrony.conf", "v2\n"), managed_before=True)
    backup = writer.state.orig("/etc/chrony.conf")
    assert backup.read_text() == "os default\n"  # never overwritten by v1
    assert writer.remove("/etc/chrony.conf") == "restored"
    assert target.read_text() == "os default\n" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert backup.read_text() == "os default\n"  # kept until the state records the path's end
    assert writer.drop_markers(["/etc/chrony.conf"]) == 1 and not backup.exists()


def test_new_file_stamped_and_deleted(writer: FileWriter) -> None:
    writer.write(file_entry("/etc/new.conf", "n\n"))
    assert writer.state.noorig("/etc/new.conf").exists()
    assert writer.remove("/etc/new.conf") == "deleted"
    assert not (writer.root / "etc/new.conf").exists() and writer.state.noorig("/etc/new.conf").exists()
    assert writer.drop_markers(["/etc/new.conf"]) == 1 and not writer.state.noorig("/etc/new.conf").exists()


def test_drop_markers_keeps_the_paths_still_managed(writer: FileWriter) -> None:
    (writer.root / "etc/kept.conf").write_text("original\n")
    for path in ("/etc/kept.conf", "/etc/d/new.conf", "/etc/d/gone.conf"):
        writer.write(file_entry(path, "x\n"))
    writer.remove("/etc/d/gone.conf")
    assert writer.drop_markers(["/etc/kept.conf", "/etc/d/gone.conf"], keep=["/etc/kept.conf"]) == 1
    assert writer.state.orig("/etc/kept.conf").read_text() == "original\n"
    assert writer.state.noorig("/etc/d/new.conf").exists() and not writer.state.noorig("/etc/d/gone.conf").exists()
    writer.remove("/etc/d/new.conf")
    assert writer.drop_markers(["/etc/d/new.conf"]) == 1
    assert not writer.state.noorig("/etc/d/new.conf").parent.exists()  # the emptied directory went too


def test_unmanaged_file_left_alone(writer: FileWriter) -> None:
    (writer.root / "etc/theirs").write_text("keep")
    assert writer.remove("/etc/theirs") == "left"
    assert (writer.root / "etc/theirs").read_text() == "keep"


def test_owner_of_defaults_root(writer: FileWriter) -> None:
    assert owner_of(writer.root, {"path": "/x"}) == (0, 0)


def test_host_path_stays_in_root(tmp_path: Path) -> None:
    assert host_path(tmp_path, "/etc/a") == tmp_path / "etc/a"
