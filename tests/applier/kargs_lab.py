"""The drift lab on the ostree backend: a real ostree sysroot, a node root in FIPS mode, and the real agent
(`mco apply --server ... --interval 60 --backend ostree`) against a real `mco serve` of tests/applier/cluster_kargs
(FIPS, kernel arguments fips=1 audit=1, maxUnavailable 1), booted into its config (two `--once` runs: the update and its simulated
reboot) before the service-mode agent starts. For the kernel-argument drift tests and bench/drift_bench.py."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from applier.agent import reboot_command_for_ostree
from tests.applier.drift_lab import DriftLab, drift_lab
from tests.applier.helpers import fips_root
from tests.applier.sysroot import boot_entries, make_sysroot, unlock

CLUSTER = Path(__file__).parent / "cluster_kargs"
KARG = "fips=1"


def next_boot_has_karg(sysroot: Path) -> bool:
    """The next boot's entry has fips=1."""
    return KARG in boot_entries(sysroot)[0].split()


@contextmanager
def kargs_lab(tmp_path: Path, *, extra: tuple[str, ...] = (), interval: float = 60.0
              ) -> Iterator[tuple[DriftLab, Path]]:
    """(the lab, its sysroot), the node Done at its config with the next boot and the booted command line
    carrying fips=1."""
    sysroot = make_sysroot(tmp_path / "os")
    root = fips_root(tmp_path / "root")
    backend = ("--backend", "ostree", "--sysroot", str(sysroot),
               "--reboot-command", reboot_command_for_ostree(sysroot, sys.executable, root), *extra)
    try:
        with drift_lab(tmp_path, cluster=CLUSTER, root=root, once=2, extra=backend, interval=interval,
                       ready=lambda _: next_boot_has_karg(sysroot)) as lab:
            yield lab, sysroot
    finally:
        unlock(sysroot)
