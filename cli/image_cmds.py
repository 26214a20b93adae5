"""`mco image build`: render a cluster directory, then build the pool's layered OS image (imagebuild/).

    mco image build CLUSTER_DIR --pool P --base REF [--mode containerfile|oci] [--out-dir DIR]
        [--output-layout oci:DIR:TAG] [--push docker://HOST/REPO:TAG] [--tls-verify=false] [--digestfile F]
        [--build] [-o text|json]

`created` times are 1970-01-01 unless SOURCE_DATE_EPOCH is set. Progress goes to stderr; stdout's final line is the digested reference (`REPO@sha256:...`), or the
Containerfile path when only a context was written; `-o json` prints one JSON object instead. `--out-dir DIR` is
where the build context goes (`--context DIR`, its older spelling, still works with a warning; cli/output_flags.py).
Exit 1: the cluster does not render, or the config holds things an image refuses; exit 2: usage, I/O,
registry or buildah failures.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from cli.errors import InvalidInput, UsageError
from cli.output_flags import add_deprecated_format, add_format, add_out_dir
from ignition.canonical import pretty_json


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def register(subparsers: Any) -> None:
    """Add `mco image build`."""
    group = subparsers.add_parser("image", help="build layered OS images from rendered configs")
    sub = group.add_subparsers(dest="image_command", metavar="SUBCOMMAND")
    sub.required = True
    p = sub.add_parser("build", help="rendered config of a pool -> Containerfile + context, or an OCI image")
    p.add_argument("cluster_dir", metavar="CLUSTER_DIR", type=Path)
    p.add_argument("--pool", required=True, help="the pool whose rendered config goes into the image")
    p.add_argument("--base", required=True, help="base OS image: oci:DIR:TAG or [docker://]HOST/REPO:TAG")
    p.add_argument("--mode", choices=("containerfile", "oci"), default="containerfile",
                   help="containerfile: write a build context (default); oci: write the image itself")
    add_out_dir(p, help="containerfile mode: directory for the Containerfile and the files it copies (the build "
                        "context)", old=("--context",))
    p.add_argument("--output-layout", metavar="oci:DIR:TAG", help="write the image into an OCI layout")
    p.add_argument("--push", metavar="docker://HOST/REPO:TAG", help="push the image to a registry")
    p.add_argument("--tls-verify", type=_bool, nargs="?", const=True, default=True, metavar="BOOL",
                   help="verify registry TLS certificates (default true; false also allows plain HTTP)")
    p.add_argument("--digestfile", type=Path, help="write the manifest digest (sha256:...) to this file")
    p.add_argument("--build", action="store_true", help="containerfile mode: run buildah and push the result")
    p.add_argument("--lint", action="store_true", help="end the Containerfile with `RUN bootc container lint`")
    p.add_argument("--compression", choices=("gzip", "none"), default="gzip",
                   help="oci mode layer compression (none: byte-identical across zlib builds)")
    p.add_argument("--arch", default="amd64", help="platform built for (Go names), picked from a multi-arch base; kernelType 64k-pages needs arm64 (default amd64)")
    add_format(p, ("text", "json"), "text", old_destination=("oci:", "output_layout", "--output-layout"))
    add_deprecated_format(p, "--format", ("text", "json"))
    p.set_defaults(func=run_build)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _rendered(cluster_dir: Path, pool: str) -> Any:
    """Render the cluster in memory and return the pool's rendered config."""
    from fleet.store import MemoryStore
    from renderer.render import render_cluster

    if not cluster_dir.is_dir():
        raise UsageError(f"{cluster_dir}: not a directory")
    result = render_cluster(cluster_dir, store=MemoryStore())
    if pool not in result.pools:
        known = ", ".join(sorted(result.pools)) or "none"
        raise InvalidInput(f"{cluster_dir}: no pool {pool!r} (pools: {known})")
    pool_render = result.pools[pool]
    errors = [*result.errors, *pool_render.errors]
    if errors or pool_render.rendered is None:
        raise InvalidInput(f"pool {pool} does not render:\n" + "\n".join(f"  {e}" for e in errors))
    return pool_render.rendered


def run_build(args: argparse.Namespace) -> int:
    """Entry point of `mco image build`."""
    from imagebuild.errors import ImageInputError, PlanRefused
    from imagebuild.pipeline import BuildRequest, build_image
    from imagebuild.refs import LayoutRef, RegistryRef, parse_layout_ref, parse_registry_ref
    from imagebuild.registry import RegistrySettings

    output: LayoutRef | None = None
    push: RegistryRef | None = None
    try:
        if args.output_layout:
            if not args.output_layout.startswith("oci:"):
                raise UsageError(f"--output-layout {args.output_layout}: expected oci:DIR:TAG")
            output = parse_layout_ref(args.output_layout, "--output-layout")
        if args.push:
            if not args.push.startswith("docker://"):
                raise UsageError(f"--push {args.push}: expected docker://HOST/REPO:TAG")
            push = parse_registry_ref(args.push, "--push")
            if push.digest:
                raise UsageError(f"--push {args.push}: push to a tag, not a digest")
    except ImageInputError as exc:
        raise UsageError(str(exc)) from exc
    if args.build and args.mode != "containerfile":
        raise UsageError("--build applies to --mode containerfile (oci mode needs no builder)")
    if args.digestfile and args.mode == "containerfile" and not args.build:
        raise UsageError("--digestfile needs an image: use --mode oci or --build")
    try:
        epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or 0)
    except ValueError:
        raise UsageError("SOURCE_DATE_EPOCH must be an integer (seconds since 1970)") from None
    rendered = _rendered(args.cluster_dir, args.pool)
    request = BuildRequest(
        rendered=rendered, base=args.base, mode=args.mode, context=args.out_dir, output=output, push=push,
        build=args.build, lint=args.lint, compression=args.compression, arch=args.arch, epoch=epoch,
        registry=RegistrySettings(tls_verify=args.tls_verify),
    )
    try:
        result = build_image(request, progress=_progress)
    except PlanRefused as exc:
        if args.output == "json":
            print(pretty_json({"renderedConfig": rendered.name, "pool": rendered.pool, "reference": None,
                               "refused": [p.to_dict() for p in exc.problems]}), end="")
        raise  # exit 1, as every ImageInputError (cli/errors.py); I/O kinds of ImageBuildError exit 2
    if args.digestfile and result.digest:
        try:
            args.digestfile.write_text(result.digest)
        except OSError as exc:
            raise UsageError(f"--digestfile {args.digestfile}: {exc.strerror or exc}") from exc
    if args.output == "json":
        print(pretty_json(result.to_dict()), end="")
    elif result.reference:
        for ref in result.references[:-1]:
            _progress(f"wrote {ref}")
        print(result.reference)
    elif result.context:
        print(result.context / "Containerfile")
    return 0
