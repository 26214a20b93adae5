"""A booted ostree system for what ostree does only there (`ostree admin deploy --stage`, finalised at shutdown by
`ostree admin finalize-staged`): a real sysroot whose deployment is chrooted into as `/` in a mount and PID namespace
of its own (unshare(1), chroot(8)), with `/run/ostree-booted`, `/proc`, `/sysroot`, the host's `/usr` (ostree's and
the other tools' binaries) and this repository and the Python running the tests bound in. Needs root."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.applier.sysroot import make_sysroot
from tests.tools import ROOT, real_tool

_MOUNTED = ("proc", "run", "sysroot", "dev", "tmp", "var")  # mounted over in the namespace
_LINKS = (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"), ("lib64", "usr/lib64"),
          ("ostree", "sysroot/ostree"), ("boot", "sysroot/boot"))


def _tops() -> tuple[str, ...]:
    """The top directories of the repository and of the Python running it (bound in as they are)."""
    paths = (ROOT, Path(os.path.realpath(sys.executable)), Path(sys.base_prefix), Path(sys.prefix))
    return tuple(sorted({p.parts[1] for p in paths if len(p.parts) > 1} - {"usr", *_MOUNTED}))


def _under_mounted() -> tuple[Path, ...]:
    """The repository and the Python's prefix when they live under a directory the lab mounts over (a clone in
    /tmp, say): bound in again at their own paths once the namespace's mounts are made."""
    paths = {ROOT, Path(sys.prefix), Path(os.path.realpath(sys.executable)).parent}
    return tuple(sorted(p for p in paths if len(p.parts) > 1 and p.parts[1] in _MOUNTED))


def make_booted_sysroot(base: Path) -> Path:
    """`make_sysroot` whose trees have the directories and links the lab mounts and binds (skips without root)."""
    if os.geteuid() != 0:
        pytest.skip("the booted ostree lab needs root (mount namespaces, chroot)")
    real_tool("unshare")
    return make_sysroot(base, root_dirs=(*_MOUNTED, *_tops()), root_links=_LINKS)


def run_booted(sysroot: Path, script: str, *, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the Python `script` (given on its stdin, the repository importable) as `/` of the sysroot's booted
    deployment (the first one deployed), in namespaces that end with it."""
    deployments = sorted((sysroot / "ostree" / "deploy").glob("*/deploy/*.0"), key=lambda p: p.stat().st_ctime)
    dep = deployments[0]
    osname = dep.parent.parent.name
    q = shlex.quote
    binds = [(sysroot, "sysroot"), (Path("/usr"), "usr"), (Path("/dev"), "dev"),
             (sysroot / "ostree" / "deploy" / osname / "var", "var"), *((Path("/") / t, t) for t in _tops())]
    lines = ["set -e", *(f"mount --bind {q(str(src))} {q(str(dep / to))}" for src, to in binds),
             f"mount -t proc proc {q(str(dep / 'proc'))}", f"mount -t tmpfs tmpfs {q(str(dep / 'run'))}",
             f"mount -t tmpfs tmpfs {q(str(dep / 'tmp'))}", f"touch {q(str(dep / 'run/ostree-booted'))}",
             *(f"mkdir -p {q(str(dep / p.relative_to('/')))} && mount --bind {q(str(p))} "
               f"{q(str(dep / p.relative_to('/')))}" for p in _under_mounted()),
             f"exec chroot {q(str(dep))} /usr/bin/env PYTHONPATH={q(str(ROOT))} HOME=/tmp {q(sys.executable)} -"]
    return subprocess.run(["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c",
                           "\n".join(lines)], input=script, capture_output=True, text=True, timeout=timeout,
                          check=False)
