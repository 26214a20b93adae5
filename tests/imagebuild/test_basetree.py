"""Fitting the plan to the base tree: symlinked directories, parent metadata, whiteouts (synthetic bases)."""

from __future__ import annotations

import io
import tarfile

from imagebuild.basetree import fit_to_base
from imagebuild.oci import BaseImage, Descriptor
from imagebuild.plan import add_parents
from imagebuild.plan_builder import Entry


def tar_layer(members: list[tuple[str, str, int, str]]) -> bytes:
    """(name, kind, mode, linkname) -> tar bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, kind, mode, link in members:
            info = tarfile.TarInfo(name)
            info.type = {"dir": tarfile.DIRTYPE, "file": tarfile.REGTYPE, "symlink": tarfile.SYMTYPE}[kind]
            info.mode, info.linkname = mode, link
            tar.addfile(info, io.BytesIO(b"") if kind == "file" else None)
    return buf.getvalue()


def base_of(*layers: bytes) -> BaseImage:
    blobs = {f"sha256:{i:064x}": data for i, data in enumerate(layers)}
    descs = tuple(Descriptor("application/vnd.oci.image.layer.v1.tar", d, len(b)) for d, b in blobs.items())
    return BaseImage("test", {}, "sha256:" + "0" * 64, {}, Descriptor("", "sha256:" + "1" * 64, 0), descs,
                     lambda d: io.BytesIO(blobs[d.digest]))


def planned(*entries: Entry) -> list[Entry]:
    out = {e.path: e for e in entries}
    add_parents(out)
    return list(out.values())


def test_symlinked_directories_are_followed_and_parents_take_base_metadata() -> None:
    base = base_of(tar_layer([("usr", "dir", 0o755, ""), ("usr/lib", "dir", 0o755, ""), ("lib", "symlink", 0, "usr/lib"),
                              ("etc", "dir", 0o755, ""), ("etc/sudoers.d", "dir", 0o750, "")]))
    entries, problems = fit_to_base(planned(Entry("/lib/udev/x.rules", "file", origin="$.f.0"),
                                            Entry("/etc/sudoers.d/ops", "file", 0o440, origin="$.f.1")), base)
    got = {e.path: (e.kind, e.mode) for e in entries}
    assert problems == ()
    assert got == {"/usr": ("dir", 0o755), "/usr/lib": ("dir", 0o755), "/usr/lib/udev": ("dir", 0o755),
                   "/usr/lib/udev/x.rules": ("file", 0o644), "/etc": ("dir", 0o755),
                   "/etc/sudoers.d": ("dir", 0o750), "/etc/sudoers.d/ops": ("file", 0o440)}


def test_explicit_directories_keep_the_configs_mode() -> None:
    base = base_of(tar_layer([("etc", "dir", 0o755, ""), ("etc/d", "dir", 0o700, "")]))
    entries, _ = fit_to_base(planned(Entry("/etc/d", "dir", 0o755, origin="$.d.0")), base)
    assert {e.path: e.mode for e in entries}["/etc/d"] == 0o755


def test_later_layers_and_whiteouts_win() -> None:
    lower = tar_layer([("etc", "dir", 0o755, ""), ("etc/a", "dir", 0o700, ""), ("etc/b", "symlink", 0, "/usr/b")])
    upper = tar_layer([("etc/.wh.a", "file", 0o644, ""), ("etc/.wh.b", "file", 0o644, "")])
    entries, _ = fit_to_base(planned(Entry("/etc/a/x", "file", origin="$.f.0"), Entry("/etc/b/y", "file", origin="$.f.1")),
                             base_of(lower, upper))
    got = {e.path: e.mode for e in entries}
    assert got["/etc/a"] == 0o755 and "/etc/b/y" in got   # the whited-out dir and link are gone


def test_link_into_var_is_left_for_first_boot_and_loops_are_refused() -> None:
    base = base_of(tar_layer([("srvdata", "symlink", 0, "var/srv"), ("loop", "symlink", 0, "loop2"),
                              ("loop2", "symlink", 0, "loop")]))
    entries, problems = fit_to_base(planned(Entry("/srvdata/x", "file", origin="$.f.0"),
                                            Entry("/loop/y", "file", origin="$.f.1"),
                                            Entry("/etc/ok", "file", origin="$.f.2")), base)
    assert [(p.path, p.code, p.disposition) for p in problems] == [("$.f.0", "var-path", "first-boot"),
                                                                    ("$.f.1", "path-conflict", "refused")]
    assert {e.path for e in entries} == {"/etc", "/etc/ok"}


def test_a_base_link_that_leads_below_a_planned_symlink_is_refused() -> None:
    base = base_of(tar_layer([("y", "symlink", 0, "etc/x")]))
    _entries, problems = fit_to_base(planned(Entry("/etc/x", "symlink", 0o777, target="/tmp/elsewhere", origin="$.l.0"),
                                             Entry("/y/z", "file", origin="$.f.0")), base)
    assert [(p.path, p.code) for p in problems] == [("$.f.0", "path-conflict")]
