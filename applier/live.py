"""Live state the config declares beyond its files: the kernel command line, FIPS mode, and the units it enables
running. Read-only checks; applier/live_repair.py puts right what it can.

Kernel arguments: every argument of the config must be on the booted command line (`/proc/cmdline`) and in the
boot entry of the deployment the next boot starts (the backend's `next_boot()`, e.g. a deployment staged by
hand with `rpm-ostree kargs --delete fips=1`; MCO pkg/daemon/update.go checks the kernel arguments only in its
post-reboot validation). FIPS (`fips: true`): `/proc/sys/crypto/fips_enabled` must read 1 and the system crypto
policy (`/etc/crypto-policies/config`, update-crypto-policies(8)) must be FIPS. Under a directory root (tests,
demos) the kernel's files are the root's own copies: `<root>/proc/cmdline` (written by a simulated reboot,
applier/backends/ostree.py) and `<root>/proc/sys/crypto/fips_enabled`, checked only when they exist, as the boot
ID is (applier/boot.py). Units: on a live system, a unit the config enables that is `failed`, or `inactive`
while it is not a oneshot without RemainAfterExit (those end by design), is not running; a directory root has no
running units, so it is not checked there.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from applier.backends.base import Deployment, missing_kargs
from applier.files import host_path
from applier.units import Systemctl
from fleet.diff import units_of
from fleet.rendered import MachineConfigSpec

CMDLINE = "proc/cmdline"
FIPS_ENABLED = "proc/sys/crypto/fips_enabled"
CRYPTO_POLICY = "/etc/crypto-policies/config"


def kernel_file(root: Path, rel: str) -> str | None:
    """A kernel file's text: `/rel` on a live root, `<root>/rel` under a directory root; None when it is absent."""
    path = Path("/") / rel if str(Path(root).resolve()) == "/" else Path(root) / rel
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def booted_kargs(root: Path, spec: MachineConfigSpec) -> str | None:
    """The booted command line's mismatch with the config's kernel arguments (None: it matches, or is unknown)."""
    cmdline = kernel_file(root, CMDLINE)
    if cmdline is None or not spec.kernel_arguments:
        return None
    missing = missing_kargs(spec.kernel_arguments, cmdline.split())
    return f"booted kernel command line (/{CMDLINE}): {missing}" if missing else None


def next_boot_kargs(deployment: Deployment | None, spec: MachineConfigSpec) -> str | None:
    """The next boot's deployment's mismatch with the config's kernel arguments (None: it matches, or is unknown)."""
    if deployment is None or not spec.kernel_arguments:
        return None
    missing = missing_kargs(spec.kernel_arguments, deployment.kargs)
    return f"next boot's deployment {deployment.id}: {missing}" if missing else None


def fips_problems(root: Path, spec: MachineConfigSpec) -> list[str]:
    """What says the node is not in FIPS mode when the config asks for it."""
    if not spec.fips:
        return []
    problems = []
    enabled = kernel_file(root, FIPS_ENABLED)
    if enabled is not None and enabled.strip() != "1":
        problems.append(f"FIPS mode: /{FIPS_ENABLED} reads {enabled.strip() or 'nothing'}, expected 1")
    try:
        policy = host_path(Path(root), CRYPTO_POLICY).read_text(errors="replace").split()
    except OSError:
        policy = []
    if not policy or not policy[0].startswith("FIPS"):
        problems.append(f"FIPS mode: {CRYPTO_POLICY} names {policy[0] if policy else 'no policy'}, expected FIPS")
    return problems


GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
            "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}  # strconv.ParseBool


def fips_refusal(root: Path, spec: MachineConfigSpec) -> str | None:
    """Why an update to `spec` is refused for the node's FIPS mode (MCO pkg/daemon/update.go checkFIPS: the
    desired `fips` must be what fips_enabled says, whatever the old config said); None without the file."""
    text = kernel_file(root, FIPS_ENABLED)
    if text is None:
        return None
    node = GO_BOOLS.get(text.removesuffix("\n"))
    if node is None:
        return f"error parsing FIPS file at /{FIPS_ENABLED}: {text.strip()!r} is not a boolean"
    if node != bool(spec.fips):
        return "detected change to FIPS flag; refusing to modify FIPS on a running cluster"
    return None


def fips_watch(spec: MachineConfigSpec) -> dict[str, tuple[str, str]]:
    """The paths that say whether the node is in FIPS mode, for the drift watch (applier/watching.py), when the
    config asks for it: a change of the crypto policy (or of the root's own fips_enabled) is checked at once.
    procfs sends no inotify events, so on `/` fips_enabled is read at the periodic check only."""
    return {CRYPTO_POLICY: ("fips", "FIPS"), f"/{FIPS_ENABLED}": ("fips", "FIPS")} if spec.fips else {}


def stopped_units(systemctl: Systemctl, config: Mapping[str, Any]) -> dict[str, str]:
    """The units the config enables that are not running on a live system: name -> ActiveState."""
    if not systemctl.live:
        return {}
    stopped = {}
    for name, unit in units_of(config).items():
        if unit.get("enabled") is not True or unit.get("mask"):
            continue
        props = systemctl.show(name, ("ActiveState", "Type", "RemainAfterExit"))
        state = props.get("ActiveState", "")
        ends_by_design = props.get("Type") == "oneshot" and props.get("RemainAfterExit") != "yes"
        if state == "failed" or (state == "inactive" and not ends_by_design):
            stopped[name] = state
    return stopped
