"""Image references as the CLI takes them: `oci:DIR[:TAG]` layouts and `docker://HOST/REPO[:TAG|@sha256:...]`.

A reference without a transport is a registry reference (`quay.io/org/os:tag`), as in a Containerfile FROM.
Registry names follow the distribution rules: the first component is a host when it has a `.` or `:` or is
`localhost`; otherwise the image is on docker.io (`library/` added for one-component names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from imagebuild.errors import ImageRefError

_REPO_RE = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$")
_TAG_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DIGEST_RE = re.compile(r"^sha256:[0-9a-f]{64}$")
_OTHER_TRANSPORTS = ("containers-storage:", "docker-archive:", "oci-archive:", "dir:", "docker-daemon:")


@dataclass(frozen=True)
class LayoutRef:
    """`oci:DIR:TAG`."""

    path: str
    tag: str | None

    def __str__(self) -> str:
        return f"oci:{self.path}:{self.tag}" if self.tag else f"oci:{self.path}"


@dataclass(frozen=True)
class RegistryRef:
    """`HOST/REPO:TAG` or `HOST/REPO@sha256:...`."""

    host: str
    repo: str
    tag: str | None = None
    digest: str | None = None

    @property
    def name(self) -> str:
        """`host/repo`, the part before the tag or digest."""
        return f"{self.host}/{self.repo}"

    @property
    def reference(self) -> str:
        """What goes after `/manifests/`: the digest if pinned, else the tag (default `latest`)."""
        return self.digest or self.tag or "latest"

    def with_digest(self, digest: str) -> str:
        """The digested pull spec `host/repo@sha256:...` (tag dropped, as MCO does)."""
        return f"{self.name}@{digest}"

    def __str__(self) -> str:
        return f"{self.name}@{self.digest}" if self.digest else f"{self.name}:{self.tag or 'latest'}"


def parse_registry_ref(text: str, where: str = "reference") -> RegistryRef:
    """Parse `[docker://]HOST/REPO[:TAG][@DIGEST]`."""
    ref = text.removeprefix("docker://")
    digest = None
    if "@" in ref:
        ref, digest = ref.split("@", 1)
        if not _DIGEST_RE.match(digest):
            raise ImageRefError(where, f"invalid digest in {text!r}")
    tag = None
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        ref, tag = ref.rsplit(":", 1)
        if not _TAG_RE.match(tag):
            raise ImageRefError(where, f"invalid tag {tag!r} in {text!r}")
    first, sep, rest = ref.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        host, repo = first, rest
    else:
        host, repo = "docker.io", ref if sep else f"library/{ref}"
    if not repo or not _REPO_RE.match(repo):
        raise ImageRefError(where, f"invalid repository name in {text!r}")
    return RegistryRef(host, repo, tag, digest)


def parse_layout_ref(text: str, where: str = "reference") -> LayoutRef:
    """Parse `oci:DIR[:TAG]` (the tag is what follows the last colon)."""
    body = text.removeprefix("oci:")
    if not body:
        raise ImageRefError(where, f"missing directory in {text!r}")
    path, sep, tag = body.rpartition(":")
    if not sep:
        return LayoutRef(body, None)
    if not path or not _TAG_RE.match(tag):
        raise ImageRefError(where, f"invalid tag {tag!r} in {text!r}")
    return LayoutRef(path, tag)


def parse_ref(text: str, where: str = "reference") -> LayoutRef | RegistryRef:
    """A layout reference when it starts with `oci:`, a registry reference otherwise."""
    if text.startswith("oci:"):
        return parse_layout_ref(text, where)
    if ("://" in text and not text.startswith("docker://")) or text.startswith(_OTHER_TRANSPORTS):
        raise ImageRefError(where, f"unsupported transport in {text!r} (use oci:DIR:TAG or docker://HOST/REPO:TAG)")
    return parse_registry_ref(text, where)
