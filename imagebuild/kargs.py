"""Kernel arguments -> bootc's `/usr/lib/bootc/kargs.d/*.toml`, the form bootc applies on install and upgrade.

Format (bootc_kargs.rs): `kargs = ["a", "b=c"]` and optional `match-architectures = ["x86_64"]`; unknown keys
are an error there, so only these two are written. Architectures use Rust names (x86_64, aarch64, powerpc64,
s390x); Go/Debian names (amd64, arm64, ppc64le) are mapped.
"""

from __future__ import annotations

from collections.abc import Sequence

from fleet.diff import split_kernel_args
from fleet.toml_text import toml_string

#: Go / OCI architecture names -> the Rust names bootc matches against.
RUST_ARCH = {"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "powerpc64", "s390x": "s390x",
             "x86_64": "x86_64", "aarch64": "aarch64", "powerpc64": "powerpc64"}


def split_kargs(entry: str) -> list[str]:
    """One `kernelArguments` entry split as the agent splits it (fleet/diff.py); an unbalanced quote, which
    the machine would take as written, is refused for the image."""
    if entry.count('"') % 2:
        raise ValueError(f"unbalanced quote in kernel argument {entry!r}")
    return list(split_kernel_args((entry,)))


def to_toml(kargs: Sequence[str], architectures: Sequence[str] = ()) -> str:
    """The kargs.d file for these arguments (order kept), optionally limited to some architectures."""
    lines = ["# Written by mco image build from the rendered config's kernelArguments.",
             "kargs = [" + ", ".join(toml_string(a) for a in kargs) + "]"]
    if architectures:
        rust = []
        for arch in architectures:
            if arch not in RUST_ARCH:
                raise ValueError(f"unknown architecture {arch!r}")
            if RUST_ARCH[arch] not in rust:
                rust.append(RUST_ARCH[arch])
        lines.append("match-architectures = [" + ", ".join(toml_string(a) for a in rust) + "]")
    return "\n".join(lines) + "\n"
