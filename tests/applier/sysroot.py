"""A real ostree sysroot in a directory (ostree-admin(1)), for the ostree backend tests and the lifecycle test."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from tests.tools import real_tool


def _run(*args: str) -> str:
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


def commit_tree(sysroot: Path, tree: Path, ref: str, version: str, *, root_dirs: tuple[str, ...] = (),
                root_links: tuple[tuple[str, str], ...] = ()) -> str:
    """Commit a small OS tree (with a fake kernel, and `root_dirs` and `root_links` (name, target) at its top, as
    an OS tree has them) to `ref`; returns the commit checksum."""
    for rel in ("usr/bin", "usr/etc", "usr/lib/modules/6.1.0", *root_dirs):
        (tree / rel).mkdir(parents=True, exist_ok=True)
    for name, target in root_links:
        if not (tree / name).is_symlink():
            (tree / name).symlink_to(target)
    (tree / "usr/lib/os-release").write_text(f"ID=myos\nVERSION_ID={version}\n")
    (tree / "usr/lib/modules/6.1.0/vmlinuz").write_text(f"kernel {version}\n")
    (tree / "usr/lib/modules/6.1.0/initramfs.img").write_text(f"initramfs {version}\n")
    (tree / "usr/etc/os-version").write_text(f"{version}\n")
    ostree = str(real_tool("ostree"))
    _run(ostree, f"--repo={sysroot}/ostree/repo", "commit", "-b", ref, "--subject", version,
         f"--add-metadata-string=version={version}", f"--tree=dir={tree}")
    return _run(ostree, f"--repo={sysroot}/ostree/repo", "rev-parse", ref).strip()


def make_sysroot(base: Path, *, kargs: tuple[str, ...] = ("root=LABEL=root", "console=ttyS0"),
                 image: str = "", root_dirs: tuple[str, ...] = (),
                 root_links: tuple[tuple[str, str], ...] = ()) -> Path:
    """init-fs, os-init `myos`, commit v1 as myos/stable and v2 as myos/v2 (each with `root_dirs` and `root_links`
    at its top), deploy v1 with `kargs`."""
    ostree = str(real_tool("ostree"))
    sysroot = base / "sysroot"
    sysroot.mkdir(parents=True)
    _run(ostree, "admin", "init-fs", "--modern", str(sysroot))
    _run(ostree, "admin", "os-init", f"--sysroot={sysroot}", "myos")
    commit_tree(sysroot, base / "tree1", "myos/stable", "1", root_dirs=root_dirs, root_links=root_links)
    commit_tree(sysroot, base / "tree2", "myos/v2", "2", root_dirs=root_dirs, root_links=root_links)
    args = [ostree, "admin", "deploy", f"--sysroot={sysroot}", "--os=myos", *[f"--karg={k}" for k in kargs]]
    if image:
        origin = base / "origin"
        origin.write_text(f"[origin]\nrefspec=myos/stable\n\n[mco]\nimage={image}\n")
        args.append(f"--origin-file={origin}")
    _run(*args, "myos/stable")
    return sysroot


def unlock(sysroot: Path) -> None:
    """Deployments are `chattr +i`; clear it so the temp dir can be removed."""
    for d in (sysroot / "ostree" / "deploy").glob("*/deploy/*"):
        if d.is_dir():
            subprocess.run(["chattr", "-i", str(d)], capture_output=True, check=False)


def _entries(sysroot: Path) -> list[tuple[Path, str]]:
    """Each BLS entry file and its text, read from one listing. ostree swaps `boot/loader` for a new directory
    when it writes a deployment (an agent re-staging meanwhile), so a listing read mid-swap is read again."""
    for _ in range(100):
        try:
            return [(f, f.read_text()) for f in (sysroot / "boot" / "loader" / "entries").glob("*.conf")]
        except FileNotFoundError:
            time.sleep(0.05)
    raise AssertionError("the boot entries kept changing for 5 s")


def boot_entries(sysroot: Path) -> list[str]:
    """The `options` lines of the BLS entries, next boot first."""
    entries = []
    for _, text in _entries(sysroot):
        title = next(line for line in text.splitlines() if line.startswith("title "))
        options = next(line for line in text.splitlines() if line.startswith("options "))
        entries.append((title, options))
    return [o for _, o in sorted(entries, key=lambda e: e[0].rsplit("(ostree:", 1)[1])]


def make_oci_image(base: Path, tag: str, files: dict[str, str]) -> Path:
    """A tiny bootable OCI image (fake kernel, os-release, `files`) built with umoci; returns the layout dir."""
    umoci = str(real_tool("umoci"))
    layout, bundle = base / "oci", base / f"bundle-{tag}"
    if not layout.exists():
        _run(umoci, "init", "--layout", str(layout))
    _run(umoci, "new", "--image", f"{layout}:{tag}")
    _run(umoci, "unpack", "--image", f"{layout}:{tag}", str(bundle))
    rootfs = bundle / "rootfs"
    content = {"usr/lib/modules/6.1.0/vmlinuz": f"kernel {tag}\n",
               "usr/lib/modules/6.1.0/initramfs.img": f"initramfs {tag}\n",
               "usr/lib/os-release": f"ID=myos\nVERSION_ID={tag}\n", **files}
    for rel, text in content.items():
        (rootfs / rel).parent.mkdir(parents=True, exist_ok=True)
        (rootfs / rel).write_text(text)
    _run(umoci, "repack", "--image", f"{layout}:{tag}", str(bundle))
    return layout


def stage_by_hand_without_fips(sysroot: Path) -> None:
    """What `rpm-ostree kargs --delete fips=1` does: a new default deployment without the argument (the node
    booted `myos/stable` with fips=1 audit=1). `--retain`: a directory sysroot has no booted deployment ostree
    knows of, and rpm-ostree never removes the booted one."""
    subprocess.run(["ostree", "admin", "deploy", f"--sysroot={sysroot}", "--os=myos", "--retain", "--karg-none",
                    "--karg=root=LABEL=root", "--karg=console=ttyS0", "--karg=audit=1", "myos/stable"],
                   check=True, capture_output=True)
    assert "fips=1" not in boot_entries(sysroot)[0]


def edit_next_boot_kargs(sysroot: Path, drop: str) -> None:
    """An edit by hand of the next boot's entry: its `options` line loses `drop` (what an edit of the staged
    deployment's kernel arguments in the boot loader config does)."""
    for entry, text in _entries(sysroot):
        if "(ostree:0)" in next(line for line in text.splitlines() if line.startswith("title ")):
            entry.write_text("\n".join(" ".join(a for a in line.split(" ") if a != drop)
                                       if line.startswith("options ") else line for line in text.splitlines()) + "\n")
            assert drop not in boot_entries(sysroot)[0].split()
            return
    raise AssertionError("no next-boot entry")
