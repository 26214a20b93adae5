"""The image plan's data (Entry, Problem, PlanSettings, ImagePlan) and the builder the planning steps share:
where a path may live in an image, one entry per path, every problem listed (plan.py states the rules)."""

from __future__ import annotations

import fnmatch
import hashlib
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.rendered import RenderedConfig
from ignition.canonical import canonical_json

FIRST_BOOT = "first-boot"
REFUSED = "refused"

NODE_SPECIFIC_ANNOTATION = "imagebuild.machine-config.io/node-specific"


_NOT_IN_IMAGE = ("/boot", "/run", "/tmp", "/usr/etc", "/sysroot", "/ostree", "/proc", "/sys", "/dev")
_VAR_ALIASES = ("/var", "/home", "/root", "/opt", "/srv", "/mnt", "/media", "/usr/local")
NODE_SPECIFIC_PATHS = ("/etc/hostname", "/etc/machine-id", "/etc/ssh/ssh_host_*")


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
    """Where things go. `engine` is True when a container engine runs the build (Containerfile mode); `arch`
    is the platform built for (`--arch`, Go names), which decides whether a kernelType exists there."""

    unit_dir: str = "/etc/systemd/system"
    preset_file: str = "/etc/systemd/system-preset/20-ignition.preset"
    kargs_file: str = "/usr/lib/bootc/kargs.d/50-machine-config.toml"
    kargs_architectures: tuple[str, ...] = ()
    engine: bool = False
    arch: str = "amd64"


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
class PlanBuilder:
    """The plan being built: its entries by path and the problems found, checked as they are added."""

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


def section_of(b: PlanBuilder, container: Mapping[str, Any], key: str, origin: str) -> Mapping[str, Any]:
    """An object-valued field (empty when absent); a non-object is reported."""
    value = container.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        b.problem(f"{origin}.{key}", "json-type", REFUSED, "must be an object")
        return {}
    return value


def items_of(b: PlanBuilder, container: Any, key: str, origin: str) -> list[tuple[int, Mapping[str, Any]]]:
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
