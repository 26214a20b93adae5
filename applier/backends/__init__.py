"""OS backends: how kernel arguments, kernel type, extensions and the OS image are staged and checked.

`make_backend(name, ...)` is the one place that picks one: `ostree` (real deployments in a sysroot,
`ostree admin deploy`), `rpm-ostree` and `bootc` (the documented commands of each tool, status parsed
from `status --json`), `none` (the OS is not managed; only files, units and SSH keys are).
"""

from __future__ import annotations

from pathlib import Path

from applier.backends.base import Backend, Deployment
from applier.errors import PermanentError
from applier.runner import CommandRunner

BACKENDS = ("ostree", "rpm-ostree", "bootc", "none")


def make_backend(name: str, *, runner: CommandRunner, sysroot: Path = Path("/"), osname: str = "",
                 insecure_registries: tuple[str, ...] = ()) -> Backend:
    """Build the named backend."""
    if name == "none":
        from applier.backends.none import NoBackend

        return NoBackend()
    if name == "ostree":
        from applier.backends.ostree import OstreeBackend

        return OstreeBackend(runner=runner, sysroot=sysroot, osname=osname, insecure_registries=insecure_registries)
    if name == "rpm-ostree":
        from applier.backends.rpmostree import RpmOstreeBackend

        return RpmOstreeBackend(runner=runner)
    if name == "bootc":
        from applier.backends.bootc import BootcBackend

        return BootcBackend(runner=runner)
    raise PermanentError("--backend", f"unknown backend {name!r} (one of {', '.join(BACKENDS)})")


__all__ = ["BACKENDS", "Backend", "Deployment", "make_backend"]
