"""Failure kinds of the image builder; each carries the path of the object it is about.

`path` is a JSON path into the rendered config (`$.spec.config.storage.files.3.contents.source`), an image
reference (`docker://host/repo:tag`) or a file system path, whichever names the thing that went wrong.
The CLI maps `PlanRefused` and `ImageInputError` to exit 1 and the I/O kinds to exit 2.
"""

from __future__ import annotations

from typing import Any


class ImageBuildError(Exception):
    """Base class: something about `path` stopped the build."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


class ImageInputError(ImageBuildError):
    """The rendered config or an argument was read and found unusable for an image (exit 1)."""


class PlanRefused(ImageInputError):
    """The config holds things an image cannot carry and that are not left for first boot."""

    def __init__(self, problems: tuple[Any, ...]) -> None:
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__("", f"the rendered config cannot become an image:\n{lines}")
        self.problems = problems


class ImageRefError(ImageInputError):
    """An image reference could not be parsed."""


class OCIError(ImageBuildError):
    """An OCI layout or image is missing, corrupt or of an unsupported kind (I/O: exit 2)."""


class RegistryError(ImageBuildError):
    """A registry request failed (network, HTTP status, digest mismatch)."""


class BuildToolError(ImageBuildError):
    """An external builder (buildah) failed; `message` carries the tail of its output."""
