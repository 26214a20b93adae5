"""OCI image layouts and image JSON: read a base, append one layer, write a layout (the OCI image spec (`image-layout.md`, `layer.md`)).

A layout is `DIR/oci-layout`, `DIR/index.json` (tags are `org.opencontainers.image.ref.name` annotations)
and `DIR/blobs/sha256/<hex>`. The derived image keeps the base's config (Env, Cmd, Labels such as
`containers.bootc` and `ostree.final-diffid`), its layers and history, and appends: one diff_id, one
history entry, our labels. Docker schema-2 bases are re-described with the OCI media types (same blobs,
same digests). JSON is written with sorted keys and no spaces, and `created` is fixed, so the manifest
digest depends only on the base and the plan.
"""

from __future__ import annotations

import copy
import errno
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from fleet.atomic import atomic_writer, write_atomic
from fleet.clock import timestamp
from ignition.canonical import canonical_json
from imagebuild.errors import OCIError
from imagebuild.layer import LayerInfo

MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_INDEX = "application/vnd.oci.image.index.v1+json"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
REF_NAME = "org.opencontainers.image.ref.name"
INDEX_TYPES = (MEDIA_INDEX, DOCKER_LIST)
MANIFEST_TYPES = (MEDIA_MANIFEST, DOCKER_MANIFEST)

_DOCKER_TO_OCI = {
    DOCKER_CONFIG: MEDIA_CONFIG,
    "application/vnd.docker.image.rootfs.diff.tar.gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
    "application/vnd.docker.image.rootfs.diff.tar": "application/vnd.oci.image.layer.v1.tar",
    "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip":
        "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
}



def sha256_digest(data: bytes) -> str:
    """`sha256:<hex>` of bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _hex(digest: str, where: str) -> str:
    algo, _, hexpart = digest.partition(":")
    if algo != "sha256" or len(hexpart) != 64 or any(c not in "0123456789abcdef" for c in hexpart):
        raise OCIError(where, f"unsupported or malformed digest {digest!r}")
    return hexpart


@dataclass(frozen=True)
class Descriptor:
    """An OCI content descriptor."""

    media_type: str
    digest: str
    size: int
    annotations: Mapping[str, str] = field(default_factory=dict)
    platform: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (annotations and platform only when set)."""
        out: dict[str, Any] = {"mediaType": self.media_type, "digest": self.digest, "size": self.size}
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        if self.platform:
            out["platform"] = dict(self.platform)
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Descriptor:
        """Read a descriptor, checking its fields."""
        if not isinstance(data, Mapping) or not isinstance(data.get("digest"), str) \
                or not isinstance(data.get("size"), int):
            raise OCIError(where, "not a valid descriptor (needs digest and size)")
        _hex(data["digest"], where)
        return cls(str(data.get("mediaType") or ""), data["digest"], data["size"],
                   dict(data.get("annotations") or {}), data.get("platform"))


#: Opens a blob of the base image for reading (from a layout or a registry).
BlobOpener = Callable[[Descriptor], IO[bytes]]


@dataclass(frozen=True)
class BaseImage:
    """A resolved base image: its manifest and config, and a way to read its blobs."""

    reference: str
    manifest: Mapping[str, Any]
    manifest_digest: str
    config: Mapping[str, Any]
    config_descriptor: Descriptor
    layers: tuple[Descriptor, ...]
    open_blob: BlobOpener
    registry_name: str = ""   # `host/repo` when the base came from a registry (kept as base.name annotation)


def parse_image_json(raw: bytes, where: str) -> dict[str, Any]:
    """Parse a manifest, index or config blob."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise OCIError(where, f"not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise OCIError(where, "not a JSON object")
    return data


def oci_media_type(media_type: str) -> str:
    """The OCI name of a Docker schema-2 media type (OCI names pass through)."""
    return _DOCKER_TO_OCI.get(media_type, media_type)


def pick_platform(index: Mapping[str, Any], where: str, *, os_: str = "linux", arch: str = "amd64") -> Descriptor:
    """From a multi-platform index, the manifest for os/arch (the only one, if there is just one)."""
    manifests = [Descriptor.from_dict(m, f"{where}.manifests.{i}") for i, m in enumerate(index.get("manifests") or [])]
    if len(manifests) == 1:
        return manifests[0]
    for m in manifests:
        p = m.platform or {}
        if p.get("os") == os_ and p.get("architecture") == arch:
            return m
    raise OCIError(where, f"no manifest for {os_}/{arch} in the image index")


def describe_manifest(manifest: Mapping[str, Any], where: str) -> tuple[Descriptor, tuple[Descriptor, ...]]:
    """The config and layer descriptors of an image manifest."""
    if manifest.get("schemaVersion") != 2:
        raise OCIError(where, "only schemaVersion 2 image manifests are supported")
    config = Descriptor.from_dict(manifest.get("config"), f"{where}.config")
    layers = tuple(Descriptor.from_dict(d, f"{where}.layers.{i}") for i, d in enumerate(manifest.get("layers") or []))
    return config, layers


class Layout:
    """An OCI image layout directory: read images by tag, add blobs, tag manifests."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def blob_path(self, digest: str) -> Path:
        """Where a blob lives (whether or not it exists)."""
        return self.root / "blobs" / "sha256" / _hex(digest, str(self.root))

    def read_blob(self, digest: str) -> bytes:
        """The bytes of a blob, checked against its digest."""
        path = self.blob_path(digest)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise OCIError(str(path), f"cannot read blob: {exc.strerror or exc}") from exc
        if sha256_digest(data) != digest:
            raise OCIError(str(path), "blob content does not match its digest")
        return data

    def index(self) -> dict[str, Any]:
        """index.json (an empty index when the layout is new)."""
        path = self.root / "index.json"
        if not path.exists():
            return {"schemaVersion": 2, "mediaType": MEDIA_INDEX, "manifests": []}
        try:
            return parse_image_json(path.read_bytes(), str(path))
        except OSError as exc:
            raise OCIError(str(path), f"cannot read: {exc.strerror or exc}") from exc

    def resolve(self, tag: str | None) -> Descriptor:
        """The manifest descriptor tagged `tag` (or the only one when `tag` is None)."""
        where = str(self.root / "index.json")
        if not (self.root / "oci-layout").exists():
            raise OCIError(str(self.root), "not an OCI image layout (no oci-layout file)")
        entries = [Descriptor.from_dict(m, f"{where}.manifests.{i}")
                   for i, m in enumerate(self.index().get("manifests") or [])]
        if tag is None:
            if len(entries) != 1:
                raise OCIError(where, f"layout holds {len(entries)} images; name one with :TAG")
            return entries[0]
        for entry in entries:
            if entry.annotations.get(REF_NAME) == tag:
                return entry
        raise OCIError(where, f"no image tagged {tag!r}")

    def image(self, tag: str | None, *, arch: str = "amd64") -> BaseImage:
        """Load the image tagged `tag` as a base."""
        desc = self.resolve(tag)
        raw = self.read_blob(desc.digest)
        where = f"{self.root}:{tag or ''}"
        data = parse_image_json(raw, where)
        if desc.media_type in INDEX_TYPES or data.get("mediaType") in INDEX_TYPES or "manifests" in data:
            desc = pick_platform(data, where, arch=arch)
            raw = self.read_blob(desc.digest)
            data = parse_image_json(raw, where)
        config_desc, layers = describe_manifest(data, where)
        config = parse_image_json(self.read_blob(config_desc.digest), f"{where} config")
        return BaseImage(f"oci:{self.root}:{tag or ''}", data, desc.digest, config, config_desc, layers,
                         lambda d: open(self.blob_path(d.digest), "rb"))

    def has_blob(self, digest: str) -> bool:
        """Whether the blob is present (by name; content was checked when it was written)."""
        return self.blob_path(digest).exists()

    def put_blob_stream(self, desc: Descriptor, stream: IO[bytes]) -> None:
        """Copy a blob in, verifying digest and size; a partial copy never appears under the blob name."""
        target = self.blob_path(desc.digest)
        if target.exists():
            return
        digest = hashlib.sha256()
        size = 0
        with atomic_writer(target) as out:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
            if "sha256:" + digest.hexdigest() != desc.digest or size != desc.size:
                raise OCIError(desc.digest, f"blob copy does not match its descriptor (size {size})")

    def put_blob(self, data: bytes) -> Descriptor:
        """Store bytes as a blob."""
        desc = Descriptor("", sha256_digest(data), len(data))
        target = self.blob_path(desc.digest)
        if not target.exists():
            write_atomic(target, data)
        return desc

    def put_file(self, path: Path, digest: str) -> None:
        """Move an already-hashed file in as a blob: renamed when on the layout's file system (a rename, not a
        copy, of a possibly large layer), else copied through fleet/atomic.py; never half there."""
        target = self.blob_path(digest)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            path.unlink()
            return
        try:
            os.rename(path, target)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            with open(path, "rb") as src, atomic_writer(target) as out:
                shutil.copyfileobj(src, out, 1 << 20)
            path.unlink()

    def tag(self, desc: Descriptor, tag: str) -> None:
        """Point `tag` at a manifest in index.json (replacing the tag's old manifest); writes oci-layout too."""
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(self.root / "oci-layout", canonical_json({"imageLayoutVersion": "1.0.0"}))
        index = self.index()
        manifests = [m for m in index.get("manifests") or []
                     if (m.get("annotations") or {}).get(REF_NAME) != tag]
        manifests.append(Descriptor(desc.media_type, desc.digest, desc.size, {REF_NAME: tag}).to_dict())
        index.update({"schemaVersion": 2, "mediaType": MEDIA_INDEX, "manifests": manifests})
        write_atomic(self.root / "index.json", canonical_json(index))


def epoch_timestamp(epoch: int) -> str:
    """RFC 3339 UTC time for a SOURCE_DATE_EPOCH-style integer."""
    return timestamp(datetime.fromtimestamp(epoch, UTC))


@dataclass(frozen=True)
class DerivedImage:
    """The new image's config and manifest bytes, and the blobs it is made of."""

    config_bytes: bytes
    manifest_bytes: bytes
    layers: tuple[Descriptor, ...]
    config_descriptor: Descriptor

    @property
    def digest(self) -> str:
        """The manifest digest: the image's identity (`repo@sha256:...`)."""
        return sha256_digest(self.manifest_bytes)

    @property
    def manifest_descriptor(self) -> Descriptor:
        """Descriptor of the manifest (for index.json)."""
        return Descriptor(MEDIA_MANIFEST, self.digest, len(self.manifest_bytes))


def derive_image(base: BaseImage, layer: LayerInfo, *, labels: Mapping[str, str], created_by: str,
                 comment: str = "", epoch: int = 0) -> DerivedImage:
    """The base image plus one layer: base config/labels/history kept, ours appended."""
    config: dict[str, Any] = copy.deepcopy(dict(base.config))
    created = epoch_timestamp(epoch)
    inner = dict(config.get("config") or {})
    inner["Labels"] = {**(inner.get("Labels") or {}), **labels}
    config["config"] = inner
    rootfs = dict(config.get("rootfs") or {"type": "layers"})
    diff_ids = list(rootfs.get("diff_ids") or [])
    if len(diff_ids) != len(base.layers):
        raise OCIError(base.reference, f"config lists {len(diff_ids)} diff_ids for {len(base.layers)} layers")
    rootfs["type"] = "layers"
    rootfs["diff_ids"] = [*diff_ids, layer.diff_id]
    config["rootfs"] = rootfs
    history = list(config.get("history") or [])
    entry = {"created": created, "created_by": created_by}
    if comment:
        entry["comment"] = comment
    history.append(entry)
    config["history"] = history
    config["created"] = created
    config.setdefault("os", "linux")
    config.setdefault("architecture", "amd64")
    config_bytes = canonical_json(config)
    config_desc = Descriptor(MEDIA_CONFIG, sha256_digest(config_bytes), len(config_bytes))
    layers = tuple(Descriptor(oci_media_type(d.media_type), d.digest, d.size, d.annotations) for d in base.layers)
    layers += (Descriptor(layer.media_type, layer.digest, layer.size),)
    annotations = {"org.opencontainers.image.base.digest": base.manifest_digest}
    if base.registry_name:
        annotations["org.opencontainers.image.base.name"] = base.registry_name
    manifest = {
        "schemaVersion": 2,
        "mediaType": MEDIA_MANIFEST,
        "config": config_desc.to_dict(),
        "layers": [d.to_dict() for d in layers],
        "annotations": annotations,
    }
    return DerivedImage(config_bytes, canonical_json(manifest), layers, config_desc)


def write_layout(layout: Layout, tag: str, image: DerivedImage, base: BaseImage, layer_file: Path,
                 *, progress: Callable[[str], None] = lambda _m: None) -> None:
    """Write the derived image into a layout: base blobs copied, new layer moved in, config, manifest, tag."""
    for desc in base.layers:
        if not layout.has_blob(desc.digest):
            progress(f"copying base layer {desc.digest[:19]} ({desc.size} bytes)")
            with base.open_blob(desc) as stream:
                layout.put_blob_stream(desc, stream)
    layout.put_file(layer_file, image.layers[-1].digest)
    layout.put_blob(image.config_bytes)
    layout.put_blob(image.manifest_bytes)
    layout.tag(image.manifest_descriptor, tag)

