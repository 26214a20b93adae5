"""Run buildah on a generated build context (`mco image build --build`) and push the result.

The command runner is a seam (a Protocol with the real subprocess implementation next to it). Settings are
the ones that work on this machine (buildah-build(1)): `--storage-driver vfs --isolation chroot`, and
`--timestamp 0` so an unchanged context gives an unchanged image. The digest comes from `--digestfile`.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from imagebuild.errors import BuildToolError

Progress = Callable[[str], None]


class CommandRunner(Protocol):
    """Runs a command, feeding each output line to `progress`; returns (exit code, output tail)."""

    def run(self, argv: Sequence[str], *, progress: Progress) -> tuple[int, str]:
        """Run argv to completion."""
        ...


class SubprocessRunner:
    """The real runner: stdout and stderr merged and streamed line by line."""

    def run(self, argv: Sequence[str], *, progress: Progress) -> tuple[int, str]:
        tail: list[str] = []
        try:
            proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace")
        except OSError as exc:
            raise BuildToolError(argv[0], f"cannot run: {exc.strerror or exc}") from exc
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            progress(line)
            tail = (tail + [line])[-20:]
        return proc.wait(), "\n".join(tail)


@dataclass(frozen=True)
class BuildahSettings:
    """How buildah is invoked."""

    buildah: str = "buildah"
    storage_driver: str = "vfs"
    isolation: str = "chroot"
    tls_verify: bool = True


class Buildah:
    """`buildah bud` and `buildah push` with fixed, reproducible settings."""

    def __init__(self, settings: BuildahSettings | None = None, *, runner: CommandRunner | None = None) -> None:
        self.settings = settings or BuildahSettings()
        self.runner = runner or SubprocessRunner()

    def _global(self) -> list[str]:
        return [self.settings.buildah, "--storage-driver", self.settings.storage_driver]

    def _tls(self) -> list[str]:
        return [] if self.settings.tls_verify else ["--tls-verify=false"]

    def _run(self, argv: list[str], progress: Progress) -> None:
        code, tail = self.runner.run(argv, progress=progress)
        if code != 0:
            raise BuildToolError(" ".join(argv[:4]), f"exit {code}:\n{tail}")

    def build(self, context: Path, image: str, *, progress: Progress) -> None:
        """Build `context/Containerfile` into local storage as `image`."""
        self._run([*self._global(), "bud", "--isolation", self.settings.isolation, "--timestamp", "0",
                   "--identity-label=false", *self._tls(), "-t", image,
                   "-f", str(context / "Containerfile"), str(context)], progress)

    def push(self, image: str, destination: str, *, progress: Progress) -> str:
        """Push to `docker://...` or `oci:DIR:TAG`; returns the manifest digest buildah reports."""
        with tempfile.TemporaryDirectory() as tmp:
            digestfile = Path(tmp) / "digest"
            self._run([*self._global(), "push", *self._tls(), "--digestfile", str(digestfile),
                       image, destination], progress)
            digest = digestfile.read_text().strip()
        if not digest.startswith("sha256:"):
            raise BuildToolError("buildah push", f"unexpected digest file content {digest!r}")
        return digest

    def remove(self, image: str) -> None:
        """Drop the local image (best effort; vfs storage is large)."""
        self.runner.run([*self._global(), "rmi", "-f", image], progress=lambda _l: None)
