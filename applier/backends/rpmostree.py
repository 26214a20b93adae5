"""The `rpm-ostree` backend (FCOS/RHCOS): the MCD's exact commands (MCO `pkg/daemon/update.go`, `pkg/daemon/rpm-ostree.go`).

Staging, in the MCD's order: `rpm-ostree cleanup -p` (drop a pending deployment), then
  OS image:    `rpm-ostree rebase --experimental ostree-unverified-registry:<osImageURL>` (skipped when booted)
  kargs:       `rpm-ostree kargs --delete=<each old arg> ... --append=<each new arg> ...`
  kernel type: realtime / 64k-pages `rpm-ostree override remove kernel kernel-core kernel-modules
               kernel-modules-core kernel-modules-extra --install ...`; back to default `rpm-ostree override
               reset ... --uninstall ...`
  extensions:  `rpm-ostree update --install <required - installed> --uninstall <installed ext - required>`
Before the drain (and before the node's slot, applier/prestage.py), `prefetch` downloads the image with
`rpm-ostree rebase --download-only` when this rpm-ostree has it.
The staged deployment is read back from `rpm-ostree status --json` (`deployments[].staged`); after the
reboot the booted one must be it, carry the image, and `rpm-ostree kargs` must list every expected arg.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from applier.backends.base import (
    Deployment,
    go_list,
    image_mismatch,
    kargs_command,
    missing_kargs,
    strip_transport,
)
from applier.errors import PermanentError
from applier.runner import CommandRunner, check
from fleet.diff import ConfigDiff, canonical_kernel_type
from fleet.rendered import SUPPORTED_EXTENSIONS, MachineConfigSpec

RT_PACKAGES = ("kernel-rt-core", "kernel-rt-modules", "kernel-rt-modules-extra")
K64_PACKAGES = ("kernel-64k-core", "kernel-64k-modules", "kernel-64k-modules-core", "kernel-64k-modules-extra")
BASE_KERNEL = ("kernel", "kernel-core", "kernel-modules", "kernel-modules-core", "kernel-modules-extra")


def parse_status(text: str) -> list[Deployment]:
    """Deployments from `rpm-ostree status --json` (kebab-case keys; unknown keys ignored)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise PermanentError("rpm-ostree status --json", f"not JSON: {exc}") from exc
    out = []
    for d in data.get("deployments") or ():
        ref = d.get("container-image-reference") or ""
        custom = d.get("custom-origin") or []
        image = strip_transport(ref) if ref else (custom[0] if custom else "")
        out.append(Deployment(
            id=str(d.get("id") or d.get("checksum") or ""), image=image, booted=bool(d.get("booted")),
            staged=bool(d.get("staged")), checksum=str(d.get("checksum") or ""),
            digest=str(d.get("container-image-reference-digest") or ""),
            packages=tuple(d.get("requested-packages") or ()),
            extra={"base-removals": list(d.get("base-removals") or ()), "packages": list(d.get("packages") or ()),
                   "version": d.get("version") or ""}))
    return out


def extension_packages(extensions: tuple[str, ...]) -> list[str]:
    """Packages for a list of extensions (unknown names are the package name)."""
    packages: list[str] = []
    for ext in extensions:
        packages += SUPPORTED_EXTENSIONS.get(ext, (ext,))
    return packages


class RpmOstreeBackend:
    """rpm-ostree on the live host."""

    name = "rpm-ostree"

    def __init__(self, *, runner: CommandRunner) -> None:
        self.runner = runner
        self._download_only: bool | None = None

    def deployments(self) -> list[Deployment]:
        """`rpm-ostree status --json`, parsed."""
        return parse_status(check(self.runner.run(["rpm-ostree", "status", "--json"], timeout=120),
                                  "rpm-ostree status").stdout)

    def booted(self) -> Deployment | None:
        """The booted deployment, with its kernel arguments from `rpm-ostree kargs`."""
        booted = next((d for d in self.deployments() if d.booted), None)
        if booted is None:
            return None
        kargs = tuple(check(self.runner.run(["rpm-ostree", "kargs"], timeout=120), "rpm-ostree kargs").stdout.split())
        return Deployment(id=booted.id, image=booted.image, kargs=kargs, booted=True, checksum=booted.checksum,
                          digest=booted.digest, packages=booted.packages, extra=booted.extra)

    def commands(self, diff: ConfigDiff, old: MachineConfigSpec, new: MachineConfigSpec,
                 booted: Deployment | None) -> list[list[str]]:
        """The commands that stage `diff`, in the MCD's order."""
        cmds: list[list[str]] = [["rpm-ostree", "cleanup", "-p"]]
        if diff.os_image and new.os_image_url and (booted is None or booted.image != new.os_image_url):
            cmds.append(["rpm-ostree", "rebase", "--experimental", f"ostree-unverified-registry:{new.os_image_url}"])
        kargs = kargs_command(old.kernel_arguments, new.kernel_arguments) if diff.kernel_arguments else None
        if kargs:
            cmds.append(kargs)
        if diff.kernel_type:
            target = canonical_kernel_type(new.kernel_type)
            previous = canonical_kernel_type(old.kernel_type)
            if previous != "default":
                swapped = RT_PACKAGES if previous == "realtime" else K64_PACKAGES
                cmds.append(["rpm-ostree", "override", "reset", *BASE_KERNEL,
                             *[f"--uninstall={p}" for p in swapped]])
            if target != "default":
                packages = RT_PACKAGES if target == "realtime" else K64_PACKAGES
                cmds.append(["rpm-ostree", "override", "remove", *BASE_KERNEL,
                             *[f"--install={p}" for p in packages]])
        if diff.extensions:
            required = set(extension_packages(new.extensions))
            installed = set(booted.packages) if booted else set()
            known = {p for pkgs in SUPPORTED_EXTENSIONS.values() for p in pkgs} | set(extension_packages(old.extensions))
            install = sorted(required - installed)
            uninstall = sorted((installed & known) - required)
            if install or uninstall:
                cmds.append(["rpm-ostree", "update", *[f"--install={p}" for p in install],
                             *[f"--uninstall={p}" for p in uninstall]])
        return cmds

    def download_only(self) -> bool:
        """Whether this rpm-ostree has `rebase --download-only` (rpm-ostree(1): "only download the target ostree
        and layered RPMs without actually performing the deployment"), read from its `rebase --help` once."""
        if self._download_only is None:
            result = self.runner.run(["rpm-ostree", "rebase", "--help"], timeout=60)
            self._download_only = result.ok and "--download-only" in result.stdout
        return self._download_only

    def prefetch(self, new: MachineConfigSpec, old: MachineConfigSpec | None = None) -> str:
        """`rpm-ostree rebase --experimental --download-only <the MCD's reference>` before the drain: the rebase
        that `stage` runs after it finds the image's objects in the repo. A version without the option says so
        (the image is then pulled while drained)."""
        url = new.os_image_url
        if not url:
            return ""
        booted = next((d for d in self.deployments() if d.booted), None)
        if booted is not None and booted.image == url:
            return ""
        if not self.download_only():
            return "rpm-ostree has no `rebase --download-only` here: the OS image is pulled while drained"
        check(self.runner.run(["rpm-ostree", "rebase", "--experimental", "--download-only",
                               f"ostree-unverified-registry:{url}"], timeout=1800), "rpm-ostree rebase --download-only")
        return f"downloaded {url} (rpm-ostree rebase --download-only) before the drain"

    def stage(self, diff: ConfigDiff, old: MachineConfigSpec, new: MachineConfigSpec) -> dict[str, Any]:
        """Run the staging commands and read back the staged deployment."""
        if not diff.os_changes:
            return {}
        booted = self.booted()
        for cmd in self.commands(diff, old, new, booted):
            check(self.runner.run(cmd, timeout=1800), " ".join(cmd[:2]))
        staged = next((d for d in self.deployments() if d.staged), None)
        if staged is None:
            staged = next((d for d in self.deployments() if not d.booted), None)
        if staged is None:
            raise PermanentError("rpm-ostree status", "no staged deployment after staging")
        return {"id": staged.id, "checksum": staged.checksum, "image": new.os_image_url,
                "previous": booted.id if booted else ""}

    def verify(self, spec: MachineConfigSpec, staged: dict[str, Any]) -> list[str]:
        """Booted deployment is the staged one; image and kargs as expected."""
        booted = self.booted()
        if booted is None:
            return ["rpm-ostree reports no booted deployment"]
        problems = []
        if staged.get("checksum") and booted.checksum != staged["checksum"]:
            problems.append(f"booted deployment {booted.id} is not the staged deployment {staged.get('id')}")
        for problem in (image_mismatch(spec.os_image_url, booted.image),
                        missing_kargs(spec.kernel_arguments, booted.kargs)):
            if problem:
                problems.append(problem)
        missing = [p for p in extension_packages(spec.extensions) if p not in booted.packages]
        if missing:
            problems.append(f"missing extension packages in the booted deployment: {go_list(missing)}")
        return problems

    def rollback(self) -> None:
        """`rpm-ostree rollback`."""
        check(self.runner.run(["rpm-ostree", "rollback"], timeout=600), "rpm-ostree rollback")

    def next_boot(self) -> Deployment | None:
        """`rpm-ostree status --json` gives no kernel arguments per deployment: only the booted
        command line is checked."""
        return None

    def boot_watch(self) -> tuple[Path, list[Path]]:
        """Nothing to watch."""
        return Path("/"), []
