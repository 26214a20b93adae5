"""`mco image build` as a library call: rendered config -> plan -> (Containerfile | OCI image) -> outputs.

One composition point for the image builder; the CLI only parses flags, renders the cluster and prints.
Order of work, so that nothing half-made is published: plan (refusals stop here, all listed) ->
layer and image JSON in a scratch directory -> copy into the `--output` layout (index.json written last)
-> push blobs, then the manifest. The digest printed is the manifest digest (what `repo@sha256:` pins).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from fleet.rendered import RenderedConfig
from imagebuild.basetree import fit_to_base
from imagebuild.build import Buildah, BuildahSettings, CommandRunner
from imagebuild.containerfile import write_context
from imagebuild.errors import ImageInputError, OCIError, PlanRefused
from imagebuild.layer import LayerInfo, write_layer
from imagebuild.oci import BaseImage, DerivedImage, Descriptor, Layout, derive_image, write_layout
from imagebuild.plan import plan_image, source_of
from imagebuild.plan_builder import ImagePlan, PlanSettings
from imagebuild.refs import LayoutRef, RegistryRef, parse_ref
from imagebuild.registry import RegistryClient, RegistrySettings, push_image

Progress = Callable[[str], None]
MODES = ("containerfile", "oci")


@dataclass(frozen=True)
class BuildRequest:
    """What to build and where to put it (the CLI flags, parsed)."""

    rendered: RenderedConfig
    base: str
    mode: str = "containerfile"
    context: Path | None = None
    output: LayoutRef | None = None
    push: RegistryRef | None = None
    build: bool = False
    lint: bool = False
    compression: str = "gzip"
    arch: str = "amd64"
    epoch: int = 0
    kargs_architectures: tuple[str, ...] = ()
    registry: RegistrySettings = field(default_factory=RegistrySettings)


@dataclass(frozen=True)
class BuildResult:
    """What was made: the plan, the digest and the digested references."""

    plan: ImagePlan
    mode: str
    base: str
    digest: str | None = None
    references: tuple[str, ...] = ()
    context: Path | None = None
    layer: LayerInfo | None = None

    @property
    def reference(self) -> str | None:
        """The final digested reference (the pushed one when there is a push)."""
        return self.references[-1] if self.references else None

    def to_dict(self) -> dict[str, Any]:
        """JSON for `-o json`."""
        return {
            "renderedConfig": self.plan.name,
            "pool": self.plan.pool,
            "mode": self.mode,
            "base": self.base,
            "digest": self.digest,
            "reference": self.reference,
            "references": list(self.references),
            "context": str(self.context) if self.context else None,
            "layer": None if self.layer is None else {
                "mediaType": self.layer.media_type, "digest": self.layer.digest,
                "diffID": self.layer.diff_id, "size": self.layer.size, "entries": self.layer.entries},
            "labels": self.plan.labels(),
            "kernelArguments": list(self.plan.kernel_arguments),
            "firstBoot": [p.to_dict() for p in self.plan.first_boot],
            "refused": [p.to_dict() for p in self.plan.refused],
        }


def make_plan(request: BuildRequest) -> ImagePlan:
    """Plan the image; raise PlanRefused listing every refusal."""
    settings = PlanSettings(engine=request.mode == "containerfile", arch=request.arch,
                            kargs_architectures=request.kargs_architectures)
    plan = plan_image(request.rendered, settings)
    if plan.refused:
        raise PlanRefused(plan.refused)
    return plan


def open_base(ref_text: str, *, arch: str, registry: RegistrySettings) -> BaseImage:
    """Resolve `--base` (an OCI layout or a registry image)."""
    ref = parse_ref(ref_text, "--base")
    if isinstance(ref, LayoutRef):
        return Layout(ref.path).image(ref.tag, arch=arch)
    return RegistryClient(ref.host, settings=registry).image(ref, arch=arch)


def base_label(base: BaseImage) -> str:
    """`baseOSContainerImage`: the base pinned by digest; a layout base's local path is left out so that the
    digest does not depend on where the layout happens to sit."""
    return f"{base.registry_name}@{base.manifest_digest}" if base.registry_name else base.manifest_digest


def build_image(request: BuildRequest, *, progress: Progress = lambda _m: None,
                runner: CommandRunner | None = None) -> BuildResult:
    """Run the whole build for one rendered config; see the module docstring for the order of work."""
    if request.mode not in MODES:
        raise ImageInputError("--mode", f"unknown mode {request.mode!r} (choose {', '.join(MODES)})")
    if request.output is not None:
        if not request.output.tag:
            raise ImageInputError("--output-layout", "name the tag: oci:DIR:TAG")
        out_dir = Path(request.output.path)
        if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / "oci-layout").exists():
            raise ImageInputError("--output-layout", f"{out_dir} exists and is not an OCI layout")
    plan = make_plan(request)
    for problem in plan.first_boot:
        progress(f"left for first boot: {problem}")
    if request.mode == "oci":
        return _build_oci(request, plan, progress)
    return _build_containerfile(request, plan, progress, runner)


def _build_oci(request: BuildRequest, plan: ImagePlan, progress: Progress) -> BuildResult:
    if request.output is None and request.push is None:
        raise ImageInputError("--output-layout",
                              "oci mode needs --output-layout oci:DIR:TAG and/or --push docker://HOST/REPO:TAG")
    progress(f"resolving base {request.base}")
    base = open_base(request.base, arch=request.arch, registry=request.registry)
    plan = _fit(request, plan, base, progress)
    scratch_parent = Path(request.output.path).parent if request.output else None
    if scratch_parent is not None:
        scratch_parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".mco-image-", dir=scratch_parent))
    try:
        layer_file = scratch / "layer"
        progress(f"writing layer: {len(plan.entries)} entries ({request.compression})")
        with open(layer_file, "wb") as out:
            layer = write_layer(plan.entries, out, compression=request.compression)
        progress(f"layer {layer.digest} ({layer.size} bytes)")
        image = derive_image(base, layer, labels={**plan.labels(), "baseOSContainerImage": base_label(base)},
                             created_by=f"mco image build {plan.name}",
                             comment=f"rendered config {plan.name} of pool {plan.pool}", epoch=request.epoch)
        references: list[str] = []
        if request.output is not None:   # local first: a failed push still leaves the image to retry from
            assert request.output.tag
            progress(f"writing {request.output}")
            layout = Layout(request.output.path)
            write_layout(layout, request.output.tag, image, base, layer_file, progress=progress)
            layer_file = layout.blob_path(layer.digest)
            references.append(f"oci:{request.output.path}@{image.digest}")
        if request.push is not None:
            references.append(_push(request, base, image, layer_file, progress))
        return BuildResult(plan, "oci", request.base, image.digest, tuple(references), layer=layer)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _fit(request: BuildRequest, plan: ImagePlan, base: BaseImage, progress: Progress) -> ImagePlan:
    """The plan fitted to the base tree (basetree.py); refusals found there stop the build."""
    entries, found = fit_to_base(plan.entries, base, progress=progress)
    problems = tuple(dataclasses.replace(p, source=source_of(request.rendered, p.path)) for p in found)
    plan = dataclasses.replace(plan, entries=entries, problems=plan.problems + problems)
    if plan.refused:
        raise PlanRefused(plan.refused)
    for problem in problems:
        progress(f"left for first boot: {problem}")
    return plan


def _push(request: BuildRequest, base: BaseImage, image: DerivedImage, layer_file: Path,
          progress: Progress) -> str:
    dest = request.push
    assert dest is not None
    new_layer = image.layers[-1].digest

    def open_local(desc: Descriptor) -> IO[bytes] | None:
        if desc.digest == new_layer:
            return open(layer_file, "rb")
        return base.open_blob(desc)

    client = RegistryClient(dest.host, settings=request.registry)
    digest = push_image(client, dest, image, open_local=open_local, base=base, progress=progress)
    if digest != image.digest:
        raise OCIError(str(dest), f"pushed digest {digest} differs from the built {image.digest}")
    return dest.with_digest(digest)


def _buildable_base(base: str) -> str:
    """A FROM operand buildah resolves the same from any directory: `oci:` layout paths made absolute."""
    ref = parse_ref(base, "--base")
    if isinstance(ref, LayoutRef):
        return str(LayoutRef(os.path.abspath(ref.path), ref.tag))
    return base


def _build_containerfile(request: BuildRequest, plan: ImagePlan, progress: Progress,
                         runner: CommandRunner | None) -> BuildResult:
    temporary = request.context is None
    if temporary and not request.build:
        raise ImageInputError("--out-dir", "containerfile mode needs --out-dir DIR (or --build)")
    label = ""
    if request.build or isinstance(parse_ref(request.base, "--base"), LayoutRef):
        # COPY replaces directory metadata and symlinked directories of the base: fit the tree to the base
        progress(f"resolving base {request.base}")
        base = open_base(request.base, arch=request.arch, registry=request.registry)
        plan = _fit(request, plan, base, progress)
        label = base_label(base)
    else:
        progress("note: the registry base is not read without --build: parent directories in rootfs/ are 0755 "
                 "root, and paths below symlinked directories of the base are not rewritten")
    context = request.context or Path(tempfile.mkdtemp(prefix="mco-context-"))
    try:
        progress(f"writing build context {context}")
        write_context(plan, context, base=_buildable_base(request.base), base_label=label, lint=request.lint)
        if not request.build:
            return BuildResult(plan, "containerfile", request.base, context=context)
        if request.output is None and request.push is None:
            raise ImageInputError("--build",
                                  "--build needs --push docker://HOST/REPO:TAG and/or --output-layout oci:DIR:TAG")
        buildah = Buildah(BuildahSettings(tls_verify=request.registry.tls_verify), runner=runner)
        local = f"localhost/mco-{plan.pool}:{plan.name}"
        buildah.build(context, local, progress=progress)
        references: list[str] = []
        digest = None
        try:
            if request.output is not None:
                digest = buildah.push(local, f"oci:{os.path.abspath(request.output.path)}:{request.output.tag}",
                                      progress=progress)
                references.append(f"oci:{request.output.path}@{digest}")
            if request.push is not None:
                digest = buildah.push(local, f"docker://{request.push}", progress=progress)
                references.append(request.push.with_digest(digest))
        finally:
            buildah.remove(local)
        return BuildResult(plan, "containerfile", request.base, digest, tuple(references),
                           context=None if temporary else context)
    finally:
        if temporary:
            shutil.rmtree(context, ignore_errors=True)

