"""Containerfile mode: golden Containerfiles, and the context tree they copy."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from fleet.rendered import RenderedConfig
from imagebuild.containerfile import render_containerfile, write_context
from imagebuild.errors import ImageInputError
from imagebuild.plan import plan_image
from imagebuild.plan_builder import PlanSettings
from tests.builders import rendered_config
from tests.golden import assert_golden

GOLDEN = Path(__file__).parent / "golden"
DATA = Path(__file__).parent / "data"
BASE = "quay.io/fedora/fedora-coreos@sha256:" + "3a" * 32


def worker(**spec: object) -> RenderedConfig:
    config = json.loads((DATA / "worker.ign").read_text())
    return rendered_config("rendered-worker-0123456789abcdef", config=config, kernel_arguments=("nosmt",), **spec)


CASES = {
    "worker": (worker(), False),
    "worker-extensions-rt-lint": (worker(extensions=("usbguard", "kerberos"), kernel_type="realtime",
                                         base_os_extensions_container_image="quay.io/fedora/ext@sha256:" + "9f" * 32),
                                  True),
    "worker-packages-no-extensions-image": (worker(extensions=("sysstat",), kernel_type="64k-pages"), False),
}


@pytest.mark.parametrize("rendered,lint", CASES.values(), ids=CASES.keys())
def test_golden_containerfile(rendered: RenderedConfig, lint: bool, request: pytest.FixtureRequest) -> None:
    plan = plan_image(rendered, PlanSettings(engine=True, arch="arm64"))   # 64k-pages kernels are aarch64 only
    assert not plan.refused
    text = render_containerfile(plan, base=BASE, lint=lint)
    golden = GOLDEN / f"Containerfile.{request.node.callspec.id}"
    assert_golden(golden, text)
    assert "<<" not in text  # no heredocs: Debian's buildah 1.28 cannot parse them


# MCO's pkg/controller/build/buildrequest/assets/Containerfile.on-cluster-build-template labels the image
# `baseOSContainerImage={{.BaseOSImage}}`, the same pull spec it builds FROM: never a transport prefix, and
# the digested reference when the base was resolved (oci mode labels it so, pipeline.py base_label).
BASE_LABELS = {
    "pull-spec": (BASE, "", BASE),
    "docker-transport": ("docker://" + BASE, "", BASE),
    "tag": ("docker://quay.io/fedora/fedora-coreos:stable", "", "quay.io/fedora/fedora-coreos:stable"),
    "resolved": ("docker://quay.io/fedora/fedora-coreos:stable", BASE, BASE),
    "resolved-layout": ("oci:/abs/layout:v1", "sha256:" + "3a" * 32, "sha256:" + "3a" * 32),
}


@pytest.mark.parametrize("base,resolved,label", BASE_LABELS.values(), ids=BASE_LABELS.keys())
def test_base_label_is_a_pull_spec(base: str, resolved: str, label: str) -> None:
    plan = plan_image(worker(), PlanSettings(engine=True))
    text = render_containerfile(plan, base=base, base_label=resolved)
    assert f'LABEL baseOSContainerImage="{label}"' in text


def test_context_tree(tmp_path: Path) -> None:
    plan = plan_image(worker(), PlanSettings(engine=True))
    containerfile = write_context(plan, tmp_path / "ctx", base=BASE)
    rootfs = tmp_path / "ctx" / "rootfs"
    assert containerfile == tmp_path / "ctx" / "Containerfile"
    assert stat.S_IMODE((rootfs / "etc/myapp/app.conf").stat().st_mode) == 0o600
    assert (rootfs / "etc/myapp/app.conf").read_bytes() == b"level=debug\nname=demo\n"
    assert (rootfs / "etc/myapp/app-hard.conf").stat().st_ino == (rootfs / "etc/myapp/app.conf").stat().st_ino
    assert os.readlink(rootfs / "etc/systemd/system/multi-user.target.wants/demo.service") == \
        "/etc/systemd/system/demo.service"
    assert stat.S_IMODE((rootfs / "etc/myapp/conf.d").stat().st_mode) == 0o700
    assert not (rootfs / "etc/owned/by-1000.conf").exists()          # copied by its own COPY --chown
    assert (tmp_path / "ctx" / "owned" / "0").read_bytes() == b"mine\n"
    assert (rootfs / "etc/owned/dir").is_dir()                      # chowned by a RUN step


def test_context_replaces_only_generated_contexts(tmp_path: Path) -> None:
    plan = plan_image(worker(), PlanSettings(engine=True))
    write_context(plan, tmp_path / "ctx", base=BASE)
    (tmp_path / "ctx" / "rootfs" / "stale").write_text("old")
    write_context(plan, tmp_path / "ctx", base=BASE)
    assert not (tmp_path / "ctx" / "rootfs" / "stale").exists()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ImageInputError, match="not a generated build context"):
        write_context(plan, tmp_path / "other", base=BASE)
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx", "other"]   # no temporaries left
