"""oci mode against the real tools: umoci base, umoci/skopeo read the result, docker-registry push/pull."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from imagebuild.kargs import split_kargs
from imagebuild.layer import MEDIA_TAR
from imagebuild.pipeline import BuildRequest, BuildResult, build_image
from imagebuild.refs import parse_layout_ref, parse_registry_ref
from imagebuild.registry import RegistrySettings
from tests.imagebuild.conftest import run
from tests.imagebuild.images import (
    KERNEL_ARGUMENTS,
    expected_root,
    image_config,
    pull_and_unpack,
    rendered,
    unpack_layout,
    without_kargs,
)
from tests.imagebuild.trees import kargs_of, snapshot
from tests.tools import real_tool

pytestmark = pytest.mark.realtool
INSECURE = RegistrySettings(tls_verify=False)


def build_oci(base: str, out: Path | None, *, push: str | None = None, config: dict | None = None,
              compression: str = "gzip") -> BuildResult:
    return build_image(BuildRequest(
        rendered=rendered(config), base=base, mode="oci",
        output=parse_layout_ref(f"oci:{out}:v2") if out else None,
        push=parse_registry_ref(push) if push else None, compression=compression, registry=INSECURE))


def expected_kargs() -> list[str]:
    return [a for entry in KERNEL_ARGUMENTS for a in split_kargs(entry)]


def test_oci_image_unpacks_to_the_rendered_config(base_layout: Path, tmp_path: Path) -> None:
    result = build_oci(f"oci:{base_layout}:v1", tmp_path / "out")
    root = unpack_layout(tmp_path / "out", "v2", tmp_path / "root")
    assert without_kargs(snapshot(root)) == expected_root(base_layout, image_config(), tmp_path)
    assert kargs_of(root) == expected_kargs()
    assert result.reference == f"oci:{tmp_path / 'out'}@{result.digest}"


def test_oci_image_fits_the_base_tree(base_layout: Path, tmp_path: Path) -> None:
    """Writing below a symlinked directory (/lib -> usr/lib) and into a 0750 directory of the base: the image
    root equals the real ignition-apply run on the unpacked base."""
    config = image_config()
    build_oci(f"oci:{base_layout}:v1", tmp_path / "out", config=config)
    root = unpack_layout(tmp_path / "out", "v2", tmp_path / "root")
    got = without_kargs(snapshot(root))
    assert got["/etc/sudoers.d"][:2] == ("dir", 0o750)
    assert got["/lib"][0] == "symlink" and got["/usr/lib/udev/rules.d/99-x.rules"][0] == "file"
    assert got == expected_root(base_layout, config, tmp_path)


def test_oci_image_keeps_base_config_labels_and_history(base_layout: Path, tmp_path: Path) -> None:
    result = build_oci(f"oci:{base_layout}:v1", tmp_path / "out")
    skopeo = real_tool("skopeo")
    info = json.loads(run(skopeo, "inspect", f"oci:{tmp_path / 'out'}:v2"))
    base_info = json.loads(run(skopeo, "inspect", f"oci:{base_layout}:v1"))
    assert info["Digest"] == result.digest
    assert info["Layers"][:-1] == base_info["Layers"] and len(info["Layers"]) == len(base_info["Layers"]) + 1
    labels = info["Labels"]
    assert labels["containers.bootc"] == "1" and labels["ostree.bootable"] == "1"
    assert labels["machineconfig"] == "rendered-worker-0123456789abcdef"
    assert labels["machineconfigpool"] == "worker"
    assert labels["baseOSContainerImage"] == base_info["Digest"]
    config = json.loads(run(skopeo, "inspect", "--config", f"oci:{tmp_path / 'out'}:v2"))
    base_config = json.loads(run(skopeo, "inspect", "--config", f"oci:{base_layout}:v1"))
    assert config["config"]["Env"] == base_config["config"]["Env"]
    assert config["config"]["Cmd"] == base_config["config"]["Cmd"]
    assert config["history"][:-1] == base_config["history"]
    assert config["history"][-1]["created_by"] == "mco image build rendered-worker-0123456789abcdef"
    assert "mco image build" in run(real_tool("umoci"), "stat", "--image", f"{tmp_path / 'out'}:v2")


def test_oci_mode_is_reproducible(base_layout: Path, tmp_path: Path) -> None:
    first = build_oci(f"oci:{base_layout}:v1", tmp_path / "a")
    second = build_oci(f"oci:{base_layout}:v1", tmp_path / "b")
    # The same config with every object's keys in another order.
    reordered = json.loads(json.dumps(image_config(), sort_keys=True),
                           object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    third = build_oci(f"oci:{base_layout}:v1", tmp_path / "c", config=reordered)
    assert first.digest == second.digest == third.digest
    for name in ("a", "b"):
        index = json.loads((tmp_path / name / "index.json").read_text())
        assert index["manifests"][0]["digest"] == first.digest


def test_push_to_registry_and_read_back(base_layout: Path, registry: str, tmp_path: Path) -> None:
    result = build_oci(f"oci:{base_layout}:v1", tmp_path / "out", push=f"docker://{registry}/tiny/layered:v2")
    assert result.reference == f"{registry}/tiny/layered@{result.digest}"
    info = json.loads(run(real_tool("skopeo"), "inspect", "--tls-verify=false",
                          f"docker://{registry}/tiny/layered:v2"))
    assert info["Digest"] == result.digest
    pulled = pull_and_unpack(f"{registry}/tiny/layered:v2", tmp_path)
    assert snapshot(pulled) == snapshot(unpack_layout(tmp_path / "out", "v2", tmp_path / "local-root"))


def test_registry_base_is_mounted_and_kept(base_layout: Path, registry: str, tmp_path: Path) -> None:
    skopeo = real_tool("skopeo")
    run(skopeo, "copy", "--dest-tls-verify=false", f"oci:{base_layout}:v1", f"docker://{registry}/tiny/base:v1")
    messages: list[str] = []
    result = build_image(BuildRequest(
        rendered=rendered(), base=f"docker://{registry}/tiny/base:v1", mode="oci",
        push=parse_registry_ref(f"docker://{registry}/tiny/from-registry:v1"),
        output=parse_layout_ref(f"oci:{tmp_path / 'local'}:v2"), registry=INSECURE),
        progress=messages.append)
    assert any("mounted from" in m for m in messages), messages
    info = json.loads(run(skopeo, "inspect", "--tls-verify=false", f"docker://{registry}/tiny/from-registry:v1"))
    base_info = json.loads(run(skopeo, "inspect", "--tls-verify=false", f"docker://{registry}/tiny/base:v1"))
    assert info["Digest"] == result.digest
    assert info["Labels"]["baseOSContainerImage"] == f"{registry}/tiny/base@{base_info['Digest']}"
    root = pull_and_unpack(f"{registry}/tiny/from-registry:v1", tmp_path)
    assert without_kargs(snapshot(root)) == expected_root(base_layout, image_config(), tmp_path)
    # the same image written locally: base blobs downloaded from the registry into the layout
    assert snapshot(unpack_layout(tmp_path / "local", "v2", tmp_path / "local-root")) == snapshot(root)


def test_uncompressed_layer_keeps_its_digest_through_the_registry(base_layout: Path, registry: str,
                                                                   tmp_path: Path) -> None:
    result = build_oci(f"oci:{base_layout}:v1", tmp_path / "out", compression="none",
                       push=f"docker://{registry}/tiny/plain:v1")
    assert result.layer is not None and result.layer.media_type == MEDIA_TAR
    assert result.layer.digest == result.layer.diff_id
    raw = json.loads(run(real_tool("skopeo"), "inspect", "--raw", "--tls-verify=false",
                         f"docker://{registry}/tiny/plain:v1"))
    assert raw["layers"][-1] == {"mediaType": MEDIA_TAR, "digest": result.layer.digest, "size": result.layer.size}
