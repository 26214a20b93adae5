"""Rendered config -> image plan: the entries one image layer holds, and what cannot live in an image.

This is the first step of the image builder; `containerfile.py` and `layer.py` both consume the plan, so the
two modes of `mco image build` ship the same tree. What goes where (Ignition's own placement, so that a node
moved from Ignition to image mode sees the same paths):

- `storage.files`        -> the file at its path, its mode (default 0644), numeric owner (default root)
- `storage.directories`  -> the directory with its mode (default 0755); other parents are 0755 root
- `storage.links`        -> a symlink; a hard link when its target is a file of the same plan
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
| extension-unknown  | an extension not in the allow-list                                 | refused     |
| data-url, gzip, hash, hash-mismatch | contents that do not decode or verify            | refused     |
"""

from __future__ import annotations

import fnmatch
import hashlib
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.rendered import SUPPORTED_EXTENSIONS as EXTENSION_PACKAGES
from fleet.rendered import RenderedConfig
from ignition.canonical import canonical_json
from imagebuild.kargs import split_kargs
from imagebuild.kargs import to_toml as kargs_toml
from imagebuild.sources import SourceProblem, read_resource
from imagebuild.units import InstallSection, enablement_links, parse_install, split_instance

FIRST_BOOT = "first-boot"
REFUSED = "refused"

NODE_SPECIFIC_ANNOTATION = "imagebuild.machine-config.io/node-specific"


_NOT_IN_IMAGE = ("/boot", "/run", "/tmp", "/usr/etc", "/sysroot", "/ostree", "/proc", "/sys", "/dev")
_VAR_ALIASES = ("/var", "/home", "/root", "/opt", "/srv", "/mnt", "/media", "/usr/local")
_NODE_SPECIFIC = ("/etc/hostname", "/etc/machine-id", "/etc/ssh/ssh_host_*")


@dataclass(frozen=True)
class Entry:
    """One tree entry of the layer. `kind` is file, dir, symlink or hardlink; `origin` is the JSON path."""

    path: str
    kind: str
    mode: int = 0o644
    data: bytes = b""
    target: str = ""
    uid: int = 0
    gid: int = 0
    origin: str = ""


@dataclass(frozen=True)
class Problem:
    """Something of the config the image does not carry: where, a stable code, and what happens to it."""

    path: str
    code: str
    disposition: str
    message: str
    source: str = ""   # the manifest that set it (from the rendered config's provenance), when known

    def __str__(self) -> str:
        where = f" ({self.source})" if self.source else ""
        return f"{self.disposition}[{self.code}] at {self.path}{where}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        """JSON form for `--format json`."""
        return {"path": self.path, "code": self.code, "disposition": self.disposition, "message": self.message,
                "source": self.source}


@dataclass(frozen=True)
class PlanSettings:
    """Where things go. `engine` is True when a container engine runs the build (Containerfile mode)."""

    unit_dir: str = "/etc/systemd/system"
    preset_file: str = "/etc/systemd/system-preset/20-ignition.preset"
    kargs_file: str = "/usr/lib/bootc/kargs.d/50-machine-config.toml"
    kargs_architectures: tuple[str, ...] = ()
    engine: bool = False


@dataclass(frozen=True)
class ImagePlan:
    """Everything one rendered config puts into an image, in path order, plus the problems found."""

    name: str
    pool: str
    config_digest: str
    entries: tuple[Entry, ...]
    problems: tuple[Problem, ...] = ()
    kernel_arguments: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    kernel_type: str = "default"
    extensions_image: str = ""
    enable_in_build: tuple[str, ...] = ()
    disable_in_build: tuple[str, ...] = ()

    @property
    def refused(self) -> tuple[Problem, ...]:
        """Problems that stop the build."""
        return tuple(p for p in self.problems if p.disposition == REFUSED)

    @property
    def first_boot(self) -> tuple[Problem, ...]:
        """Problems left for Ignition at first boot."""
        return tuple(p for p in self.problems if p.disposition == FIRST_BOOT)

    def labels(self) -> dict[str, str]:
        """Image labels naming the rendered config (MCO's names) and its content digest."""
        return {
            "machineconfig": self.name,
            "machineconfigpool": self.pool,
            "io.machine-config.config-digest": self.config_digest,
        }


def config_digest(rendered: RenderedConfig) -> str:
    """sha256 of the canonical spec JSON: provenance and source file positions do not change it."""
    return "sha256:" + hashlib.sha256(canonical_json(rendered.spec.to_dict())).hexdigest()


@dataclass
class _Builder:
    settings: PlanSettings
    node_specific: tuple[str, ...]
    entries: dict[str, Entry] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    enable_base: list[str] = field(default_factory=list)
    disable_base: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.node_specific_re = re.compile("|".join(fnmatch.translate(g) for g in self.node_specific))

    def problem(self, path: str, code: str, disposition: str, message: str) -> None:
        self.problems.append(Problem(path, code, disposition, message))

    def place(self, origin: str, path: Any) -> str | None:
        """Check that a config path may live in an image; report and return None when it may not."""
        if not isinstance(path, str) or not path.startswith("/"):
            self.problem(origin, "path-relative", REFUSED, "path not absolute")
            return None
        clean = posixpath.normpath(path)
        if clean.startswith("//"):
            clean = "/" + clean.lstrip("/")
        if clean == "/":
            self.problem(origin, "path-conflict", REFUSED, "cannot replace /")
            return None
        found = image_path_problem(clean)
        if found is not None:
            self.problem(origin, *found)
            return None
        if self.node_specific_re.match(clean):
            self.problem(origin, "node-specific", FIRST_BOOT, f"{clean} is node-specific; left for Ignition")
            return None
        return clean

    def add(self, entry: Entry) -> None:
        old = self.entries.get(entry.path)
        if old is not None and old != entry:
            self.problem(entry.origin, "path-conflict", REFUSED,
                         f"{entry.path} is also set by {old.origin or 'the image builder'}")
            return
        self.entries[entry.path] = entry


def image_path_problem(path: str) -> tuple[str, str, str] | None:
    """(code, disposition, message) when a normalised absolute path may not live in an image."""
    if _under(path, _NOT_IN_IMAGE):
        return ("path-not-in-image", REFUSED,
                f"{path} is not image content (/boot, /run, /tmp, /usr/etc, ... are not shipped)")
    if _under(path, _VAR_ALIASES):
        return ("var-path", FIRST_BOOT,
                f"{path} is machine state (/var); image content there is unpacked only at install, "
                "so Ignition writes it at first boot (or ship a tmpfiles.d entry)")
    return None


def _under(path: str, prefixes: Sequence[str]) -> bool:
    return path in prefixes or path.startswith(tuple(p + "/" for p in prefixes))


def _owner(b: _Builder, origin: str, node: Mapping[str, Any], key: str) -> int | None:
    """Numeric id of `user`/`group`; root by name is 0; other names cannot be resolved without the image."""
    value = node.get(key)
    if not value:
        return 0
    if not isinstance(value, Mapping):
        b.problem(f"{origin}.{key}", "json-type", REFUSED, "must be an object")
        return None
    if value.get("id") is not None:
        uid = value["id"]
        if isinstance(uid, bool) or not isinstance(uid, int) or uid < 0:
            b.problem(f"{origin}.{key}.id", "json-type", REFUSED, f"invalid id {uid!r}")
            return None
        return uid
    name = value.get("name")
    if name in (None, "", "root"):
        return 0
    b.problem(f"{origin}.{key}.name", "owner-by-name", REFUSED,
              f"owner {name!r} by name cannot be resolved in an image layer; give the numeric id")
    return None


def _mode(b: _Builder, origin: str, node: Mapping[str, Any], default: int) -> int | None:
    mode = node.get("mode")
    if mode is None:
        return default
    if isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode <= 0o7777:
        b.problem(f"{origin}.mode", "mode", REFUSED, f"invalid mode {mode!r}")
        return None
    return mode


def _section(b: _Builder, container: Mapping[str, Any], key: str, origin: str) -> Mapping[str, Any]:
    """An object-valued field (empty when absent); a non-object is reported."""
    value = container.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        b.problem(f"{origin}.{key}", "json-type", REFUSED, "must be an object")
        return {}
    return value


def _items(b: _Builder, container: Any, key: str, origin: str) -> list[tuple[int, Mapping[str, Any]]]:
    """The object entries of a list field; anything else is reported (the renderer validates, but the plan
    is also a library entry point and must not crash on a hand-made config)."""
    if not isinstance(container, Mapping):
        if container is not None:
            b.problem(origin, "json-type", REFUSED, "must be an object")
        return []
    value = container.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        b.problem(f"{origin}.{key}", "json-type", REFUSED, "must be a list")
        return []
    out = []
    for i, item in enumerate(value):
        if isinstance(item, Mapping):
            out.append((i, item))
        else:
            b.problem(f"{origin}.{key}.{i}", "json-type", REFUSED, "must be an object")
    return out


def _plan_files(b: _Builder, storage: Mapping[str, Any], base: str) -> None:
    for i, f in _items(b, storage, "files", base):
        origin = f"{base}.files.{i}"
        path = b.place(f"{origin}.path", f.get("path"))
        if path is None:
            continue
        if f.get("append"):
            b.problem(f"{origin}.append", "file-append", REFUSED,
                      "appending needs the base image's file; write the whole file instead")
            continue
        try:
            data = read_resource(f.get("contents")) or b""
        except SourceProblem as exc:
            field_path = f"{origin}.contents" + (f".{exc.field}" if exc.field else "")
            b.problem(field_path, exc.code, REFUSED, exc.message)
            continue
        uid, gid, mode = _owner(b, origin, f, "user"), _owner(b, origin, f, "group"), _mode(b, origin, f, 0o644)
        if uid is None or gid is None or mode is None:
            continue
        b.add(Entry(path, "file", mode, data, uid=uid, gid=gid, origin=origin))
    for i, d in _items(b, storage, "directories", base):
        origin = f"{base}.directories.{i}"
        path = b.place(f"{origin}.path", d.get("path"))
        if path is None:
            continue
        uid, gid, mode = _owner(b, origin, d, "user"), _owner(b, origin, d, "group"), _mode(b, origin, d, 0o755)
        if uid is None or gid is None or mode is None:
            continue
        b.add(Entry(path, "dir", mode, uid=uid, gid=gid, origin=origin))
    hard: list[tuple[str, str, str]] = []
    for i, link in _items(b, storage, "links", base):
        origin = f"{base}.links.{i}"
        path = b.place(f"{origin}.path", link.get("path"))
        if path is None:
            continue
        target = link.get("target")
        if not isinstance(target, str) or not target:
            b.problem(f"{origin}.target", "link-target", REFUSED, "link target is required")
            continue
        if link.get("hard"):
            hard.append((origin, path, posixpath.normpath(posixpath.join(posixpath.dirname(path), target))))
            continue
        b.add(Entry(path, "symlink", 0o777, target=target, origin=origin))
    for origin, path, target in hard:
        found = b.entries.get(target)
        if found is None or found.kind != "file":
            b.problem(f"{origin}.target", "hard-link", REFUSED,
                      f"hard link target {target} is not a file of this config")
            continue
        b.add(Entry(path, "hardlink", found.mode, target=target, uid=found.uid, gid=found.gid, origin=origin))


def _plan_units(b: _Builder, systemd: Mapping[str, Any], base: str) -> None:
    unit_dir = b.settings.unit_dir
    units = _items(b, systemd, "units", base)
    contents: dict[str, str] = {u["name"]: u["contents"] for _, u in units
                                if isinstance(u.get("name"), str) and isinstance(u.get("contents"), str)
                                and not u.get("mask")}
    presets: dict[tuple[str, bool], list[str]] = {}
    to_enable: list[tuple[str, str, str]] = []   # (unit, its file, the config entry that enabled it)
    for i, unit in units:
        origin = f"{base}.units.{i}"
        name = unit.get("name")
        if not isinstance(name, str) or not name or "/" in name:
            b.problem(f"{origin}.name", "unit-name", REFUSED, "invalid unit name")
            continue
        path = posixpath.join(unit_dir, name)
        if unit.get("mask"):
            b.add(Entry(path, "symlink", 0o777, target="/dev/null", origin=origin))
        elif isinstance(unit.get("contents"), str):
            b.add(Entry(path, "file", 0o644, unit["contents"].encode(), origin=origin))
        for j, dropin in _items(b, unit, "dropins", origin):
            if not isinstance(dropin.get("name"), str) or not dropin["name"] or "/" in dropin["name"]:
                b.problem(f"{origin}.dropins.{j}.name", "unit-name", REFUSED, "invalid dropin name")
            elif isinstance(dropin.get("contents"), str):
                b.add(Entry(posixpath.join(f"{path}.d", dropin["name"]), "file", 0o644,
                            dropin["contents"].encode(), origin=f"{origin}.dropins.{j}"))
        enabled = unit.get("enabled")
        if enabled is None:
            continue
        template, instance = split_instance(name)
        key = (template if instance is not None else name, bool(enabled))
        presets.setdefault(key, [])
        if instance:
            presets[key].append(instance)
        file_name = name if name in contents else template if template in contents else ""
        if not file_name:
            (b.enable_base if enabled else b.disable_base).append(name)
            if not b.settings.engine:
                b.problem(f"{origin}.enabled", "unit-base", FIRST_BOOT,
                          f"{name} is not defined by this config; its {'en' if enabled else 'dis'}ablement is "
                          "left to the preset file, which systemd applies at first boot")
        elif enabled:
            to_enable.append((name, file_name, f"{origin}.enabled"))
    seen: set[str] = set()
    while to_enable:
        name, file_name, why = to_enable.pop(0)
        if name in seen:
            continue
        seen.add(name)
        install: InstallSection = parse_install(contents[file_name])
        for link in enablement_links(name, install, unit_dir, file_name=file_name):
            b.add(Entry(link.path, "symlink", 0o777, target=link.target, origin=why))
        to_enable.extend((also, also, why) for also in install.also if also in contents)
    if presets:
        lines = []
        for (unit_name, enabled), instances in sorted(presets.items()):
            lines.append(" ".join(["enable" if enabled else "disable", unit_name, *sorted(set(instances))]))
        b.add(Entry(b.settings.preset_file, "file", 0o644, ("\n".join(lines) + "\n").encode(),
                    origin=f"{base}.units"))


def _check_tree(b: _Builder) -> None:
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
    globs = _NODE_SPECIFIC + tuple(g.strip() for g in
                                   rendered.annotations.get(NODE_SPECIFIC_ANNOTATION, "").split(",") if g.strip())
    b = _Builder(settings, globs)
    cfg = rendered.ignition
    base = "$.spec.config"
    ign = _section(b, cfg, "ignition", base)
    for key in ("merge", "replace"):
        if _section(b, ign, "config", f"{base}.ignition").get(key):
            b.problem(f"{base}.ignition.config.{key}", "remote-config", FIRST_BOOT,
                      "referenced configs are fetched by Ignition at first boot; render them into the config "
                      "to ship them in the image")
    passwd = _section(b, cfg, "passwd", base)
    for key in ("users", "groups"):
        for i, _ in _items(b, passwd, key, f"{base}.passwd"):
            b.problem(f"{base}.passwd.{key}.{i}", "passwd", FIRST_BOOT,
                      f"{key} and their passwords/SSH keys are created by Ignition at first boot "
                      "(ship sysusers.d files to define them in the image)")
    storage = _section(b, cfg, "storage", base)
    for key in ("disks", "raid", "filesystems", "luks"):
        for i, _ in _items(b, storage, key, f"{base}.storage"):
            b.problem(f"{base}.storage.{key}.{i}", "storage-device", FIRST_BOOT,
                      f"{key} are per-machine devices that Ignition sets up at first boot")
    _plan_files(b, storage, f"{base}.storage")
    _plan_units(b, _section(b, cfg, "systemd", base), f"{base}.systemd")
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


def _plan_kargs(b: _Builder, rendered: RenderedConfig, cfg: Mapping[str, Any]) -> tuple[str, ...]:
    kargs: list[str] = []
    for i, entry in enumerate(rendered.spec.kernel_arguments):
        try:
            kargs.extend(split_kargs(entry))
        except ValueError as exc:
            b.problem(f"$.spec.kernelArguments.{i}", "karg", REFUSED, str(exc))
    ign_kargs = _section(b, cfg, "kernelArguments", "$.spec.config")
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


def _plan_packages(b: _Builder, rendered: RenderedConfig) -> tuple[tuple[str, ...], str]:
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
    if not b.settings.engine:
        if packages:
            b.problem("$.spec.extensions", "needs-engine", REFUSED,
                      "extensions install packages, which needs a container engine: use --mode containerfile")
        if kernel_type != "default":
            b.problem("$.spec.kernelType", "needs-engine", REFUSED,
                      f"kernelType {kernel_type} swaps kernel packages: use --mode containerfile")
    return tuple(packages), kernel_type
