"""Rendered config -> image plan: the entries one image layer holds, and what cannot live in an image.

This is the first step of the image builder; `containerfile.py` and `layer.py` both consume the plan, so the
two modes of `mco image build` ship the same tree. What goes where (Ignition's own placement, so that a node
moved from Ignition to image mode sees the same paths):

- `storage.files`        -> the file at its path, its mode (default 0644), numeric owner (default root)
- `storage.directories`  -> the directory with its mode (default 0755); other parents are 0755 root
- `storage.links`        -> a symlink with its numeric owner (default root); a hard link when its target is a
                            file of the same plan (sharing that file's inode and owner)
- `systemd.units`        -> `<unit_dir>/<name>` and `<unit_dir>/<name>.d/<dropin>`; `mask` -> `-> /dev/null`;
                            `enabled` -> a line in Ignition's preset file *and* the symlinks `systemctl enable`
                            would create (see units.py), because presets only apply at first boot
- `kernelArguments` (spec, and Ignition's `kernelArguments.shouldExist`) -> `/usr/lib/bootc/kargs.d/*.toml`
- `extensions`, `kernelType` -> package steps, only with a container engine (Containerfile mode)

The plan does not know the base image; `basetree.py` fits it to the base's tree afterwards (paths through
symlinked directories, parent directory metadata).

What cannot live in an image is a `Problem` with a disposition (`FIRST_BOOT` items are reported and left to
Ignition on the machine's first boot; `REFUSED` items stop the build, all of them listed at once):

| code               | what                                                               | disposition |
|--------------------|--------------------------------------------------------------------|-------------|
| passwd             | `passwd.users`, `passwd.groups` (users, passwords, SSH keys)       | first-boot  |
| storage-device     | `storage.disks`, `raid`, `filesystems`, `luks`                     | first-boot  |
| remote-config      | `ignition.config.merge` / `replace`                                | first-boot  |
| var-path           | paths under /var and its aliases (/home, /root, /opt, /srv, ...):  | first-boot  |
|                    | image content there is unpacked only at install                    |             |
| node-specific      | /etc/hostname, /etc/machine-id, SSH host keys, and the globs in the | first-boot  |
|                    | rendered config's `imagebuild.machine-config.io/node-specific` annotation (comma separated) | |
| karg-remove        | Ignition `kernelArguments.shouldNotExist`                          | first-boot  |
| fips               | `fips: true` (decided at install time)                             | first-boot  |
| unit-base          | enabling/disabling a unit the config does not define (oci mode)    | first-boot  |
| path-not-in-image  | /boot, /run, /tmp, /usr/etc, /sysroot, /ostree, /proc, /sys, /dev  | refused     |
| remote-source      | file contents from http(s)/tftp/s3/gs/arn (not reproducible)       | refused     |
| file-append        | `append[]` (needs the base file's content)                         | refused     |
| owner-by-name      | a user/group given by a name other than root (layers hold ids)     | refused     |
| hard-link          | a hard link whose target is not a file of this plan                | refused     |
| path-conflict      | two entries at one path, or an entry below a file or symlink       | refused     |
| needs-engine       | extensions or a non-default kernelType in oci mode                 | refused     |
| kernel-type        | an unknown kernelType, or 64k-pages when not building for aarch64  | refused     |
| extension-unknown  | an extension not in the allow-list                                 | refused     |
| data-url, gzip, hash, hash-mismatch | contents that do not decode or verify            | refused     |
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from fleet.rendered import SUPPORTED_EXTENSIONS as EXTENSION_PACKAGES
from fleet.rendered import RenderedConfig
from imagebuild.kargs import RUST_ARCH, split_kargs
from imagebuild.kargs import to_toml as kargs_toml
from imagebuild.plan_builder import (
    FIRST_BOOT,
    NODE_SPECIFIC_ANNOTATION,
    NODE_SPECIFIC_PATHS,
    REFUSED,
    Entry,
    ImagePlan,
    PlanBuilder,
    PlanSettings,
    Problem,
    config_digest,
    items_of,
    section_of,
)
from imagebuild.plan_storage import plan_files
from imagebuild.plan_units import plan_units


def _check_tree(b: PlanBuilder) -> None:
    """Every ancestor of an entry must be a directory; a file or symlink there is a conflict."""
    for path, entry in sorted(b.entries.items()):
        parent = posixpath.dirname(path)
        while parent != "/":
            above = b.entries.get(parent)
            if above is not None and above.kind != "dir":
                b.problem(entry.origin, "path-conflict", REFUSED,
                          f"{path} lies below {parent}, which {above.origin} makes a {above.kind}")
                break
            parent = posixpath.dirname(parent)


def add_parents(entries: dict[str, Entry]) -> None:
    """Parent directories not named by the config: 0755 root, as Ignition creates them (`origin` empty)."""
    for path in list(entries):
        parent = posixpath.dirname(path)
        while parent != "/" and parent not in entries:
            entries[parent] = Entry(parent, "dir", 0o755)
            parent = posixpath.dirname(parent)


_KEY_FIELDS = {"files": "path", "directories": "path", "links": "path", "units": "name"}


def source_of(rendered: RenderedConfig, path: str) -> str:
    """Which manifest set the config entry a problem path points into (`mco render --explain`'s answer)."""
    parts = path.removeprefix("$.spec.").split(".")
    lists = {"extensions": rendered.spec.extensions, "kernelArguments": rendered.spec.kernel_arguments}
    if parts[0] in lists:
        values = lists[parts[0]]
        picked = values[int(parts[1])] if len(parts) > 1 and parts[1].isdigit() else values
        names = [picked] if isinstance(picked, str) else list(picked)
        return "; ".join(dict.fromkeys(rendered.provenance[f"{parts[0]}[{n}]"] for n in names
                                       if f"{parts[0]}[{n}]" in rendered.provenance))
    if parts[0] != "config":
        return rendered.provenance.get(parts[0], "")
    if len(parts) < 4 or parts[1] not in ("storage", "systemd") or not parts[3].isdigit():
        return ""
    section, index = parts[2], int(parts[3])
    entries = (rendered.ignition.get(parts[1]) or {}).get(section) or []
    field_name = _KEY_FIELDS.get(section)
    if field_name is None or index >= len(entries) or not isinstance(entries[index], Mapping):
        return ""
    return rendered.provenance.get(f"{parts[1]}.{section}[{entries[index].get(field_name)}]", "")


def plan_image(rendered: RenderedConfig, settings: PlanSettings | None = None) -> ImagePlan:
    """Turn a rendered config into an image plan; problems are collected, never raised."""
    settings = settings or PlanSettings()
    globs = NODE_SPECIFIC_PATHS + tuple(g.strip() for g in
                                   rendered.annotations.get(NODE_SPECIFIC_ANNOTATION, "").split(",") if g.strip())
    b = PlanBuilder(settings, globs)
    cfg = rendered.ignition
    base = "$.spec.config"
    ign = section_of(b, cfg, "ignition", base)
    for key in ("merge", "replace"):
        if section_of(b, ign, "config", f"{base}.ignition").get(key):
            b.problem(f"{base}.ignition.config.{key}", "remote-config", FIRST_BOOT,
                      "referenced configs are fetched by Ignition at first boot; render them into the config "
                      "to ship them in the image")
    passwd = section_of(b, cfg, "passwd", base)
    for key in ("users", "groups"):
        for i, _ in items_of(b, passwd, key, f"{base}.passwd"):
            b.problem(f"{base}.passwd.{key}.{i}", "passwd", FIRST_BOOT,
                      f"{key} and their passwords/SSH keys are created by Ignition at first boot "
                      "(ship sysusers.d files to define them in the image)")
    storage = section_of(b, cfg, "storage", base)
    for key in ("disks", "raid", "filesystems", "luks"):
        for i, _ in items_of(b, storage, key, f"{base}.storage"):
            b.problem(f"{base}.storage.{key}.{i}", "storage-device", FIRST_BOOT,
                      f"{key} are per-machine devices that Ignition sets up at first boot")
    plan_files(b, storage, f"{base}.storage")
    plan_units(b, section_of(b, cfg, "systemd", base), f"{base}.systemd")
    kargs = _plan_kargs(b, rendered, cfg)
    packages, kernel_type = _plan_packages(b, rendered)
    if rendered.spec.fips:
        b.problem("$.spec.fips", "fips", FIRST_BOOT, "FIPS mode is chosen when the machine is installed")
    _check_tree(b)
    entries = dict(b.entries)
    if not any(p.disposition == REFUSED for p in b.problems):
        add_parents(entries)
    return ImagePlan(
        name=rendered.name,
        pool=rendered.pool,
        config_digest=config_digest(rendered),
        entries=tuple(entries[p] for p in sorted(entries)),
        problems=tuple(Problem(p.path, p.code, p.disposition, p.message, source_of(rendered, p.path))
                       for p in b.problems),
        kernel_arguments=kargs,
        packages=packages,
        kernel_type=kernel_type,
        extensions_image=rendered.spec.base_os_extensions_container_image,
        enable_in_build=tuple(b.enable_base) if settings.engine else (),
        disable_in_build=tuple(b.disable_base) if settings.engine else (),
    )


def _plan_kargs(b: PlanBuilder, rendered: RenderedConfig, cfg: Mapping[str, Any]) -> tuple[str, ...]:
    kargs: list[str] = []
    for i, entry in enumerate(rendered.spec.kernel_arguments):
        try:
            kargs.extend(split_kargs(entry))
        except ValueError as exc:
            b.problem(f"$.spec.kernelArguments.{i}", "karg", REFUSED, str(exc))
    ign_kargs = section_of(b, cfg, "kernelArguments", "$.spec.config")
    for entry in ign_kargs.get("shouldExist") or ():
        try:
            args = split_kargs(str(entry))
        except ValueError as exc:
            b.problem("$.spec.config.kernelArguments.shouldExist", "karg", REFUSED, str(exc))
            continue
        for arg in args:
            if arg not in kargs:
                kargs.append(arg)
    for i, _ in enumerate(ign_kargs.get("shouldNotExist") or ()):
        b.problem(f"$.spec.config.kernelArguments.shouldNotExist.{i}", "karg-remove", FIRST_BOOT,
                  "an image can add kernel arguments (kargs.d) but not remove the machine's")
    if kargs:
        b.add(Entry(b.settings.kargs_file, "file", 0o644,
                    kargs_toml(kargs, b.settings.kargs_architectures).encode(), origin="$.spec.kernelArguments"))
    return tuple(kargs)


def _plan_packages(b: PlanBuilder, rendered: RenderedConfig) -> tuple[tuple[str, ...], str]:
    packages: list[str] = []
    for i, ext in enumerate(rendered.spec.extensions):
        pkgs = EXTENSION_PACKAGES.get(ext)
        if pkgs is None:
            b.problem(f"$.spec.extensions.{i}", "extension-unknown", REFUSED,
                      f"invalid extension {ext!r}; supported: {', '.join(sorted(EXTENSION_PACKAGES))}")
            continue
        packages.extend(p for p in pkgs if p not in packages)
    kernel_type = rendered.spec.kernel_type or "default"
    if kernel_type not in ("default", "realtime", "64k-pages"):
        b.problem("$.spec.kernelType", "kernel-type", REFUSED, f"kernelType={kernel_type} is invalid")
    elif kernel_type == "64k-pages" and RUST_ARCH.get(b.settings.arch) != "aarch64":
        # MCO's buildrequestopts.go getKernelPackages refuses it too: the kernel-64k packages are aarch64 only
        b.problem("$.spec.kernelType", "kernel-type", REFUSED,
                  f"kernelType 64k-pages is only supported for aarch64 (building for {b.settings.arch})")
    if not b.settings.engine:
        if packages:
            b.problem("$.spec.extensions", "needs-engine", REFUSED,
                      "extensions install packages, which needs a container engine: use --mode containerfile")
        if kernel_type != "default":
            b.problem("$.spec.kernelType", "needs-engine", REFUSED,
                      f"kernelType {kernel_type} swaps kernel packages: use --mode containerfile")
    return tuple(packages), kernel_type
