"""What every OS backend offers, and the rules they share (kernel argument deltas, verification texts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fleet.diff import ConfigDiff, split_kernel_args
from fleet.rendered import MachineConfigSpec


@dataclass(frozen=True)
class Deployment:
    """A bootable OS tree: `id` identifies it, `image` is what it tracks, `kargs` its kernel command line."""

    id: str
    image: str = ""
    kargs: tuple[str, ...] = ()
    booted: bool = False
    staged: bool = False
    checksum: str = ""
    digest: str = ""
    packages: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    """Stages OS-level changes for the next boot and checks them after it."""

    name: str

    def booted(self) -> Deployment | None:
        """The deployment the node runs now (None when the backend has no notion of one)."""
        ...

    def prefetch(self, new: MachineConfigSpec, old: MachineConfigSpec | None = None) -> str:
        """Pull the OS image `stage` will deploy, and prepare what the backend can without booting it (from `old`,
        the config the node runs, when given), before the node drains, so the drained window holds only the writes
        and the reboot; returns a note for the node's report ("" : nothing to pull)."""
        ...

    def stage(self, diff: ConfigDiff, old: MachineConfigSpec, new: MachineConfigSpec) -> dict[str, Any]:
        """Stage the OS changes of `diff` for the next boot; returns what to verify after it (JSON-able)."""
        ...

    def verify(self, spec: MachineConfigSpec, staged: dict[str, Any]) -> list[str]:
        """Mismatches between the booted OS and `spec` (and the staged deployment); [] when all is well."""
        ...

    def rollback(self) -> None:
        """Make the previous deployment the default for the next boot."""
        ...

    def next_boot(self) -> Deployment | None:
        """The deployment the next boot starts, with its kernel arguments (None when the backend cannot say)."""
        ...

    def boot_watch(self) -> tuple[Path, list[Path]]:
        """(the directory a watch of them stops at, the files whose change changes what the next boot starts);
        no files when none are known."""
        ...


def go_list(items: Sequence[str]) -> str:
    """A Go `%v` of a []string: `[a b c]` (how the MCD prints lists in its messages)."""
    return "[" + " ".join(items) + "]"


def kargs_after(current: Sequence[str], old: Sequence[str], new: Sequence[str]) -> list[str]:
    """MCO's kargs strategy on a command line: delete each old arg (once; one not there is skipped), then append each new one."""
    result = list(current)
    for arg in split_kernel_args(old):
        if arg in result:
            result.remove(arg)
    return result + list(split_kernel_args(new))


def kargs_command(old: Sequence[str], new: Sequence[str]) -> list[str] | None:
    """`rpm-ostree kargs --delete=<each old arg> ... --append=<each new arg> ...`, as MCO generateKargs
    (pkg/daemon/update.go) builds it: all old ones deleted, then all new ones appended, duplicates kept, so an old
    argument missing from the command line fails the update there as here; None when both split to nothing."""
    args = [*(f"--delete={a}" for a in split_kernel_args(old)), *(f"--append={a}" for a in split_kernel_args(new))]
    return ["rpm-ostree", "kargs", *args] if args else None


def missing_kargs(expected: Sequence[str], have: Sequence[str]) -> str | None:
    """`missing expected kernel arguments: [..]` when an expected arg is not on the command line."""
    missing = [a for a in split_kernel_args(expected) if a not in set(have)]
    return f"missing expected kernel arguments: {go_list(missing)}" if missing else None


def image_mismatch(expected: str, have: str) -> str | None:
    """The MCD's text when the booted image is not the expected one."""
    if expected and expected != have:
        return f'expected target osImageURL "{expected}", have "{have}"'
    return None


def strip_transport(ref: str) -> str:
    """`ostree-unverified-registry:quay.io/x@sha256:..` -> `quay.io/x@sha256:..` (also docker:// and registry:)."""
    for prefix in ("ostree-unverified-registry:", "ostree-unverified-image:registry:", "ostree-image-signed:registry:",
                   "ostree-unverified-image:docker://", "docker://", "registry:"):
        if ref.startswith(prefix):
            return ref[len(prefix):]
    if ref.startswith("ostree-remote-image:"):
        parts = ref.split(":", 3)
        if len(parts) == 4 and parts[2] == "registry":
            return parts[3]
    return ref
