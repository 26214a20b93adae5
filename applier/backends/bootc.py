"""The `bootc` backend: `bootc switch` to the digest given, confirmed with `bootc status --format=json`.

(bootc-dev/bootc docs) Staging: `bootc switch --transport registry <image>` (the reference without a
`docker://` / transport prefix); the staged entry's image (and digest, when the reference is pinned
`@sha256:`) must then match. bootc has no per-machine kargs CLI, so kernel arguments go through
`rpm-ostree kargs --delete=.. --append=..` as on rpm-ostree hosts. Kernel type and extensions
are baked into bootc images and refused here. Before the drain (and before the node's slot,
applier/prestage.py) `prefetch` runs `bootc switch --download-only` when this bootc has it; the update then
applies that staged deployment with `bootc switch --from-downloaded` instead of pulling. After the reboot `status.booted` must be the staged image.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from applier.backends.base import Deployment, image_mismatch, kargs_command, missing_kargs, strip_transport
from applier.errors import PermanentError
from applier.runner import CommandRunner, check
from fleet.diff import ConfigDiff
from fleet.rendered import MachineConfigSpec


def _entry(entry: Any, *, booted: bool = False, staged: bool = False) -> Deployment | None:
    if not isinstance(entry, dict):
        return None
    image_status = entry.get("image") or {}
    ref = (image_status.get("image") or {}) if isinstance(image_status, dict) else {}
    ostree = entry.get("ostree") or {}
    checksum = str(ostree.get("checksum") or "")
    serial = ostree.get("deploySerial", ostree.get("deploy_serial", 0))
    return Deployment(id=f"{checksum}.{serial}" if checksum else str(image_status.get("imageDigest") or ""),
                      image=str(ref.get("image") or ""), booted=booted, staged=staged, checksum=checksum,
                      digest=str(image_status.get("imageDigest") or ""),
                      extra={"transport": ref.get("transport", ""), "incompatible": bool(entry.get("incompatible"))})


def parse_status(text: str) -> dict[str, Deployment | None]:
    """`bootc status` (JSON or YAML) -> {"booted": .., "staged": .., "rollback": ..}; unknown keys ignored."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PermanentError("bootc status", f"cannot parse: {exc}") from exc
    status = (data or {}).get("status") or {} if isinstance(data, dict) else {}
    return {"booted": _entry(status.get("booted"), booted=True),
            "staged": _entry(status.get("staged"), staged=True),
            "rollback": _entry(status.get("rollback"))}


def repository(ref: str) -> str:
    """`quay.io/a/b:tag` or `quay.io/a/b@sha256:..` -> `quay.io/a/b`."""
    ref = ref.split("@", 1)[0]
    head, _, last = ref.rpartition("/")
    return f"{head}/{last.split(':', 1)[0]}" if head else last.split(":", 1)[0]


def image_matches(expected: str, deployment: Deployment) -> bool:
    """True when the deployment is the expected reference (same repository and digest, for a pinned one)."""
    ref = strip_transport(expected)
    if "@sha256:" in ref:
        return deployment.digest == ref.split("@", 1)[1] and repository(deployment.image) == repository(ref)
    return deployment.image == ref


class BootcBackend:
    """bootc on the live host."""

    name = "bootc"

    def __init__(self, *, runner: CommandRunner) -> None:
        self.runner = runner
        self._download_only: bool | None = None
        self._downloaded = ""  # the image `prefetch` staged locked, which `stage` applies with --from-downloaded

    def status(self) -> dict[str, Deployment | None]:
        """`bootc status --format=json`, parsed."""
        return parse_status(check(self.runner.run(["bootc", "status", "--format=json"], timeout=120),
                                  "bootc status").stdout)

    def booted(self) -> Deployment | None:
        """The booted entry, with the kernel arguments rpm-ostree reports."""
        booted = self.status()["booted"]
        if booted is None:
            return None
        result = self.runner.run(["rpm-ostree", "kargs"], timeout=120)
        kargs = tuple(result.stdout.split()) if result.ok else ()
        return Deployment(id=booted.id, image=booted.image, kargs=kargs, booted=True, checksum=booted.checksum,
                          digest=booted.digest, extra=booted.extra)

    def commands(self, diff: ConfigDiff, old: MachineConfigSpec, new: MachineConfigSpec) -> list[list[str]]:
        """The commands that stage `diff`."""
        if diff.kernel_type:
            raise PermanentError("spec.kernelType", "kernel type is part of the image with the bootc backend")
        if diff.extensions:
            raise PermanentError("spec.extensions", "extensions are part of the image with the bootc backend")
        cmds = []
        if diff.os_image and new.os_image_url and self._downloaded == new.os_image_url:
            cmds.append(["bootc", "switch", "--from-downloaded"])  # the locked deployment `prefetch` staged
        elif diff.os_image and new.os_image_url:
            cmds.append(["bootc", "switch", "--transport", "registry", strip_transport(new.os_image_url)])
        kargs = kargs_command(old.kernel_arguments, new.kernel_arguments) if diff.kernel_arguments else None
        if kargs:
            cmds.append(kargs)
        return cmds

    def download_only(self) -> bool:
        """Whether this bootc has `switch --download-only` (bootc-switch(8): "Download and stage the update without
        applying it"), read from its `switch --help` once."""
        if self._download_only is None:
            result = self.runner.run(["bootc", "switch", "--help"], timeout=60)
            self._download_only = result.ok and "--download-only" in result.stdout
        return self._download_only

    def prefetch(self, new: MachineConfigSpec, old: MachineConfigSpec | None = None) -> str:
        """`bootc switch --download-only --transport registry <image>` before the drain: the image pulled and its
        deployment staged but locked (not booted by a reboot) until `stage` applies it with `--from-downloaded`.
        A version without the option says so (the image is then pulled while drained)."""
        url = new.os_image_url
        if not url:
            return ""
        booted = self.status()["booted"]
        if booted is not None and image_matches(url, booted):
            return ""
        if not self.download_only():
            return "bootc has no `switch --download-only` here: the OS image is pulled while drained"
        check(self.runner.run(["bootc", "switch", "--download-only", "--transport", "registry", strip_transport(url)],
                              timeout=1800), "bootc switch --download-only")
        staged = self.status()["staged"]
        if staged is None or not image_matches(url, staged):
            raise PermanentError("spec.osImageURL", f"bootc switch --download-only staged "
                                 f"{f'{staged.image}@{staged.digest}' if staged else 'nothing'}, expected {url}")
        self._downloaded = url
        return f"downloaded {url} and staged it, locked (bootc switch --download-only), before the drain"

    def stage(self, diff: ConfigDiff, old: MachineConfigSpec, new: MachineConfigSpec) -> dict[str, Any]:
        """Switch (stage) and confirm the staged entry."""
        cmds = self.commands(diff, old, new)
        if not cmds:
            return {}
        before = self.status()["booted"]
        for cmd in cmds:
            check(self.runner.run(cmd, timeout=1800), " ".join(cmd[:2]))
        staged = self.status()["staged"]
        if diff.os_image and new.os_image_url:
            if staged is None or not image_matches(new.os_image_url, staged):
                have = f"{staged.image}@{staged.digest}" if staged else "nothing"
                raise PermanentError("spec.osImageURL", f"bootc staged {have}, expected {new.os_image_url}")
        return {"id": staged.id if staged else "", "image": new.os_image_url, "digest": staged.digest if staged else "",
                "previous": before.id if before else ""}

    def verify(self, spec: MachineConfigSpec, staged: dict[str, Any]) -> list[str]:
        """Booted entry is the expected image; kargs present."""
        booted = self.booted()
        if booted is None:
            return ["bootc reports no booted deployment (not a bootc host?)"]
        problems = []
        if spec.os_image_url and not image_matches(spec.os_image_url, booted):
            problems.append(image_mismatch(spec.os_image_url, f"{booted.image}@{booted.digest}") or "")
        problem = missing_kargs(spec.kernel_arguments, booted.kargs)
        if problem:
            problems.append(problem)
        return problems

    def rollback(self) -> None:
        """`bootc rollback`."""
        check(self.runner.run(["bootc", "rollback"], timeout=600), "bootc rollback")

    def next_boot(self) -> Deployment | None:
        """`bootc status` gives no kernel arguments per deployment: only the booted command line is
        checked."""
        return None

    def boot_watch(self) -> tuple[Path, list[Path]]:
        """Nothing to watch."""
        return Path("/"), []
