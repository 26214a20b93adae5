"""The `ostree` backend: real deployments in an ostree sysroot (ostree-admin(1)).

Staging is `ostree admin deploy --sysroot=S --os=OS --origin-file=F --karg-none --karg-append=...  REF`:
a new default deployment whose kernel command line is the booted one with the old config's arguments
removed (once each) and the new config's appended (MCO's delete/append strategy; an old argument no longer there is skipped where rpm-ostree's `--delete` would fail), and whose
origin records the osImageURL in an `[mco] image=` key. A pending deployment left by an earlier attempt is
undeployed first (like `rpm-ostree cleanup -p`), so re-staging after a kill converges.

On a booted ostree system the deployment is prepared before the drain (`prefetch`, before the node's slot):
`ostree admin deploy --stage` checks it out and sets its kernel arguments, with `/run/ostree/staged-deployment-
locked` present, so ostree-finalize-staged.service finalises nothing at a shutdown before the slot (the old
deployment boots again; ostreedev/ostree PR 1841). In the drained window `stage` removes the lock; the reboot then
finalises it: the `/etc` the window wrote merged in (ostree's three-way merge), the boot loader written. ostree
stages only on a booted system, so a directory sysroot deploys in the drained window.

osImageURL forms: `ostree:<refspec>`, a refspec present in the sysroot's repo, or a container image
(`oci:DIR:TAG`, `docker://…`, or a bare registry reference such as `quay.io/org/os@sha256:…`), which is
pulled with skopeo, unpacked with umoci and committed to the repo (`import_image`).

The booted deployment: on a booted ostree system (`/run/ostree-booted`, sysroot `/`) the one marked `*`
by `ostree admin status`; in a directory sysroot nothing is booted, so the booted deployment is recorded
in `<sysroot>/.mco-booted` (`<checksum>.<serial>`). `simulate_reboot(sysroot)` writes the next boot's
deployment there: that is what a reboot does to this backend (`python -m applier.backends.ostree
simulate-reboot SYSROOT ROOT` as a `--reboot-command`; ROOT gets a new boot ID).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from applier.backends.base import Deployment, image_mismatch, kargs_after, missing_kargs
from applier.boot import BOOT_ID
from applier.errors import PermanentError
from applier.live import CMDLINE
from applier.runner import CommandRunner, SubprocessRunner, check
from fleet.atomic import write_atomic
from fleet.diff import ConfigDiff
from fleet.rendered import MachineConfigSpec

BOOTED_MARK = ".mco-booted"
OSTREE_BOOTED = Path("/run/ostree-booted")  # present on a booted ostree system (ostree-prepare-root)
STAGED_LOCK = Path("/run/ostree/staged-deployment-locked")  # while present, shutdown finalises no staged deployment
_STATUS_RE = re.compile(r"^(?P<mark>[* ]) (?P<os>\S+) (?P<id>[0-9a-f]{64}\.\d+)(?P<rest>.*)$")
_TITLE_RE = re.compile(r"\(ostree:(\d+)\)")


def _read_origin(path: Path) -> dict[str, dict[str, str]]:
    groups: dict[str, dict[str, str]] = {}
    current = ""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return groups
    for line in lines:
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            groups.setdefault(current, {})
        elif "=" in line and current:
            key, _, value = line.partition("=")
            groups[current][key.strip()] = value.strip()
    return groups


def image_ref(url: str) -> str:
    """The ref a container image is imported under: named after its URL, so an import is done once."""
    return "mco/image/" + hashlib.sha256(url.encode()).hexdigest()[:32]


class OstreeBackend:
    """Deployments in the sysroot `sysroot` for stateroot `osname` (the only one when empty)."""

    name = "ostree"

    def __init__(self, *, runner: CommandRunner, sysroot: Path, osname: str = "",
                 insecure_registries: tuple[str, ...] = ()) -> None:
        self.runner = runner
        self.sysroot = Path(sysroot)
        self._osname = osname
        self.insecure_registries = insecure_registries

    @property
    def osname(self) -> str:
        """The stateroot."""
        if self._osname:
            return self._osname
        try:
            names = sorted(p.name for p in (self.sysroot / "ostree" / "deploy").iterdir() if p.is_dir())
        except OSError:
            names = []
        if len(names) != 1:
            raise PermanentError(str(self.sysroot), f"cannot pick a stateroot (found {names or 'none'}); pass --osname")
        return names[0]

    def _admin(self, *args: str) -> list[str]:
        return ["ostree", "admin", *args, f"--sysroot={self.sysroot}"]

    def deployments(self) -> list[Deployment]:
        """Every deployment, next boot first (as `ostree admin status` lists them)."""
        result = check(self.runner.run(self._admin("status"), timeout=60), "ostree admin status")
        rows: list[tuple[str, str, str, bool]] = []
        for line in result.stdout.splitlines():
            m = _STATUS_RE.match(line)
            if m:
                rows.append((m.group("os"), m.group("id"), m.group("rest"), m.group("mark") == "*"))
        kargs = self._entry_kargs()
        marked = self._marked()
        out = []
        entry = 0  # a staged deployment has no boot entry until it is finalised: the entries number the others
        for index, (osname, dep_id, rest, star) in enumerate(rows):
            origin = _read_origin(self.sysroot / "ostree" / "deploy" / osname / "deploy" / f"{dep_id}.origin")
            refspec = origin.get("origin", {}).get("refspec", "")
            image = origin.get("mco", {}).get("image", "") or (f"ostree:{refspec}" if refspec else "")
            booted = star or (marked == dep_id if marked else (len(rows) == 1))
            if "(staged)" in rest:  # its kernel arguments: those it was staged with (`_deploy` records them)
                own = tuple(origin.get("mco", {}).get("kargs", "").split())
            else:
                own, entry = kargs.get(entry, ()), entry + 1
            out.append(Deployment(id=dep_id, image=image, kargs=own, booted=booted,
                                  staged="pending" in rest, checksum=dep_id.split(".")[0],
                                  extra={"osname": osname, "refspec": refspec, "index": index,
                                         "live": star, "staging": "(staged)" in rest}))
        return out

    def _entry_kargs(self) -> dict[int, tuple[str, ...]]:
        entries = self.sysroot / "boot" / "loader" / "entries"
        found: dict[int, tuple[str, ...]] = {}
        try:
            files = sorted(entries.glob("*.conf"))
        except OSError:
            return found
        for file in files:
            index, options = None, ""
            for line in file.read_text(errors="replace").splitlines():
                if line.startswith("title "):
                    m = _TITLE_RE.search(line)
                    index = int(m.group(1)) if m else None
                elif line.startswith("options "):
                    options = line[len("options "):]
            if index is not None:
                found[index] = tuple(a for a in options.split() if not a.startswith("ostree="))
        return found

    def _marked(self) -> str:
        try:
            return (self.sysroot / BOOTED_MARK).read_text().strip()
        except OSError:
            return ""

    def booted(self) -> Deployment | None:
        """The booted deployment (rules in the module docstring)."""
        return next((d for d in self.deployments() if d.booted), None)

    def _has_ref(self, ref: str) -> bool:
        return self.runner.run(["ostree", f"--repo={self.sysroot / 'ostree' / 'repo'}", "rev-parse", ref],
                               timeout=60).ok

    def resolve(self, url: str) -> str:
        """The refspec an osImageURL names in this sysroot's repo, importing a container image first."""
        if url.startswith("ostree:"):
            ref = url[len("ostree:"):]
            if not self._has_ref(ref):
                raise PermanentError("spec.osImageURL", f"cannot resolve {url!r}: no such ref in "
                                     f"{self.sysroot / 'ostree' / 'repo'}")
            return ref
        if self._has_ref(url):
            return url
        return self.import_image(url)

    def import_image(self, url: str) -> str:
        """Container image -> ostree commit (skopeo-copy(1), umoci-raw-unpack(1), ostree-commit(1)): skopeo copy to an OCI layout, `umoci raw
        unpack`, /etc moved to /usr/etc, `ostree commit`; the ref is named after the URL, so a second
        import of the same URL is a no-op."""
        ref = image_ref(url)
        if self._has_ref(ref):
            return ref
        source = url if "://" in url or url.split(":", 1)[0] in ("oci", "oci-archive", "docker-archive") \
            else f"docker://{url}"
        host = source.split("://", 1)[1].split("/", 1)[0] if source.startswith("docker://") else ""
        tls = ["--src-tls-verify=false"] if host in self.insecure_registries else []
        with tempfile.TemporaryDirectory(prefix="mco-image-") as tmp:
            layout, rootfs = Path(tmp) / "layout", Path(tmp) / "rootfs"
            check(self.runner.run(["skopeo", "copy", *tls, source, f"oci:{layout}:image"], timeout=1800),
                  "spec.osImageURL")
            check(self.runner.run(["umoci", "raw", "unpack", "--image", f"{layout}:image", str(rootfs)],
                                  timeout=1800), "spec.osImageURL")
            etc, usr_etc = rootfs / "etc", rootfs / "usr" / "etc"
            if etc.is_dir() and not etc.is_symlink():
                if usr_etc.exists():
                    shutil.copytree(etc, usr_etc, symlinks=True, dirs_exist_ok=True)
                    shutil.rmtree(etc)
                else:  # a move inside the scratch unpack nothing reads yet: no file is replaced
                    etc.rename(usr_etc)
            if not any((rootfs / "usr" / "lib" / "modules").glob("*/vmlinuz")):
                raise PermanentError("spec.osImageURL", f"{url}: not a bootable image (no "
                                     "/usr/lib/modules/<kver>/vmlinuz)")
            check(self.runner.run(["ostree", f"--repo={self.sysroot / 'ostree' / 'repo'}", "commit", "-b", ref,
                                   "--subject", url, f"--add-metadata-string=mco.image={url}",
                                   f"--tree=dir={rootfs}"], timeout=1800), "spec.osImageURL")
        return ref

    def _cleanup_pending(self, deployments: list[Deployment]) -> list[Deployment]:
        """Undeploy deployments queued ahead of the booted one (an earlier, unfinished stage)."""
        booted_index = next((i for i, d in enumerate(deployments) if d.booted), None)
        if booted_index:
            for index in range(booted_index - 1, -1, -1):
                check(self.runner.run(self._admin("undeploy", str(index)), timeout=300), "ostree admin undeploy")
            deployments = self.deployments()
        return deployments

    def stages(self) -> bool:
        """Whether a deployment can be staged here: ostree stages only on a booted ostree system (its sysroot `/`)."""
        return self.sysroot == Path("/") and OSTREE_BOOTED.exists()

    def prefetch(self, new: MachineConfigSpec, old: MachineConfigSpec | None = None) -> str:
        """Import a container image into the repo (`resolve`); on a booted system, with the config the node runs
        (`old`), also stage the new deployment, locked (`_stage`): checked out and ready, booted by no reboot
        until `stage` unlocks it in the drained window. Elsewhere the deploy after the drain finds the image."""
        url = new.os_image_url
        pulled = ""
        if url and not url.startswith("ostree:") and not (self._has_ref(url) or self._has_ref(image_ref(url))):
            self.resolve(url)
            pulled = f"pulled into the ostree repo before the drain: {url}"
        if not url or old is None or not self.stages():
            return f"the deployment is made while drained; {pulled}" if pulled else ""
        staged, now = self._stage(old, new, locked=True)
        if not now:
            return pulled  # staged before the slot already (applier/prestage.py)
        return f"deployment {staged} staged before the drain, locked until the slot" + (f"; {pulled}" if pulled else "")

    def _target(self, booted: Deployment, old: MachineConfigSpec, new: MachineConfigSpec) -> tuple[str, str, list[str]]:
        """(image, refspec, kernel arguments) of the deployment `new` needs from `booted`."""
        image = new.os_image_url or booted.image
        refspec = self.resolve(image) if new.os_image_url else str(booted.extra.get("refspec") or "")
        if not refspec:
            raise PermanentError("spec.osImageURL", "the booted deployment has no refspec and none is configured")
        return image, refspec, kargs_after(booted.kargs, old.kernel_arguments, new.kernel_arguments)

    def _deploy(self, booted: Deployment, image: str, refspec: str, kargs: list[str], *options: str) -> None:
        """`ostree admin deploy` of `refspec` with `kargs`; the origin names the image and the kargs (`_staged`)."""
        # A scratch file handed to `ostree admin deploy --origin-file`, not a replaced file: no atomic write.
        with tempfile.NamedTemporaryFile("w", suffix=".origin", delete=False) as fh:
            fh.write(f"[origin]\nrefspec={refspec}\n\n[mco]\nimage={image}\nkargs={' '.join(kargs)}\n")
            origin = fh.name
        try:
            args = self._admin("deploy", *options, f"--os={booted.extra['osname']}", f"--origin-file={origin}",
                               "--karg-none", *[f"--karg-append={a}" for a in kargs], refspec)
            check(self.runner.run(args, timeout=600), "ostree admin deploy")
        finally:
            Path(origin).unlink(missing_ok=True)

    def _staged(self, image: str, refspec: str, kargs: list[str]) -> Deployment | None:
        """The staged deployment, if it is the one these call for (its origin says so)."""
        for d in self.deployments():
            if d.extra.get("staging"):
                origin = _read_origin(self.sysroot / "ostree" / "deploy" / d.extra["osname"] / "deploy" /
                                      f"{d.id}.origin")
                mco = origin.get("mco", {})
                if (d.extra.get("refspec"), mco.get("image"), mco.get("kargs")) == (refspec, image, " ".join(kargs)):
                    return d
        return None

    def _stage(self, old: MachineConfigSpec, new: MachineConfigSpec, *, locked: bool) -> tuple[str, bool]:
        """Stage the deployment `new` needs (`deploy --stage`): finalised (its /etc merged with the booted one's,
        the boot loader written) at shutdown by ostree-finalize-staged.service, unless `locked`: then no shutdown
        finalises it while STAGED_LOCK exists (ostreedev/ostree PR 1841). Staged already: kept. Returns its id and
        whether it was staged now."""
        booted = next((d for d in self.deployments() if d.booted), None)
        if booted is None:
            raise PermanentError(str(self.sysroot), "no booted deployment to stage from")
        image, refspec, kargs = self._target(booted, old, new)
        if locked:
            STAGED_LOCK.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(STAGED_LOCK, b"")
        staged = self._staged(image, refspec, kargs)
        made = staged is None
        if staged is None:
            self._deploy(booted, image, refspec, kargs, "--stage")
            staged = self._staged(image, refspec, kargs)
            if staged is None:
                raise PermanentError(str(self.sysroot), "ostree admin deploy --stage left no staged deployment")
        if not locked:  # only once the staged deployment is the one `new` needs: a failed deploy leaves any other
            STAGED_LOCK.unlink(missing_ok=True)  # (staged for an earlier target) locked, never finalised
        return staged.id, made

    def stage(self, diff: ConfigDiff, old: MachineConfigSpec, new: MachineConfigSpec) -> dict[str, Any]:
        """Deploy the new tree / kernel arguments as the next boot's default."""
        if diff.kernel_type:
            raise PermanentError("spec.kernelType", "kernel type changes are not supported by the ostree backend")
        if diff.extensions:
            raise PermanentError("spec.extensions", "extensions are not supported by the ostree backend")
        if not (diff.os_image or diff.kernel_arguments):
            return {}
        deployments = self.deployments()
        booted = next((d for d in deployments if d.booted), None)
        if booted is None:
            raise PermanentError(str(self.sysroot), "no booted deployment to stage from")
        if self.stages():  # the one staged before the slot, unlocked: the reboot finalises it (and /etc written now)
            image, _, kargs = self._target(booted, old, new)
            return {"id": self._stage(old, new, locked=False)[0], "image": image, "kargs": list(kargs),
                    "previous": booted.id}
        if not self._marked() and not booted.extra.get("live"):
            write_atomic(self.sysroot / BOOTED_MARK, f"{booted.id}\n".encode())
        deployments = self._cleanup_pending(deployments)
        image, refspec, kargs = self._target(booted, old, new)
        self._deploy(booted, image, refspec, kargs)
        new_default = self.deployments()[0]
        return {"id": new_default.id, "image": image, "kargs": list(kargs), "previous": booted.id}

    def verify(self, spec: MachineConfigSpec, staged: dict[str, Any]) -> list[str]:
        """The booted deployment is the staged one, with every expected karg and the expected image."""
        booted = self.booted()
        if booted is None:
            return ["no booted deployment"]
        problems = []
        if staged.get("id") and booted.id != staged["id"]:
            problems.append(f"booted deployment {booted.id} is not the staged deployment {staged['id']}")
        for problem in (image_mismatch(spec.os_image_url, booted.image), missing_kargs(spec.kernel_arguments,
                                                                                       booted.kargs)):
            if problem:
                problems.append(problem)
        return problems

    def rollback(self) -> None:
        """Drop the default deployment when it is the booted, failed one, so the previous one boots next."""
        deployments = self.deployments()
        if len(deployments) < 2:
            raise PermanentError(str(self.sysroot), "no previous deployment to roll back to")
        check(self.runner.run(self._admin("undeploy", "0"), timeout=300), "ostree admin undeploy")

    def next_boot(self) -> Deployment | None:
        """The default deployment (the first `ostree admin status` lists), kernel arguments from its boot entry."""
        deployments = self.deployments()
        return deployments[0] if deployments else None

    def boot_watch(self) -> tuple[Path, list[Path]]:
        """The boot loader entries, watched up to `boot/` (a new deployment swaps `boot/loader` to a new directory
        of them)."""
        boot = self.sysroot / "boot"
        try:
            return boot, sorted((boot / "loader" / "entries").glob("*.conf"))
        except OSError:
            return boot, []


def simulate_reboot(sysroot: Path, runner: CommandRunner | None = None, root: Path | None = None) -> str:
    """What a reboot does to a directory sysroot: the next boot's default deployment becomes the booted one,
    and the node root (when given) gets a new boot ID (applier/boot.py) and the kernel command line that
    deployment boots with (applier/live.py reads `<root>/proc/cmdline`)."""
    backend = OstreeBackend(runner=runner or SubprocessRunner(), sysroot=sysroot)
    first = backend.deployments()[0]
    write_atomic(Path(sysroot) / BOOTED_MARK, f"{first.id}\n".encode())
    if root is not None:
        (Path(root) / CMDLINE).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(Path(root) / CMDLINE, (" ".join((f"ostree={first.id}", *first.kargs)) + "\n").encode())
        write_atomic(Path(root) / BOOT_ID, f"{uuid.uuid4()}\n".encode())
    return first.id


if __name__ == "__main__":  # `python -m applier.backends.ostree simulate-reboot SYSROOT [ROOT]`
    if len(sys.argv) not in (3, 4) or sys.argv[1] != "simulate-reboot":
        print("usage: python -m applier.backends.ostree simulate-reboot SYSROOT [ROOT]", file=sys.stderr)
        sys.exit(2)
    print(simulate_reboot(Path(sys.argv[2]), root=Path(sys.argv[3]) if len(sys.argv) == 4 else None))
