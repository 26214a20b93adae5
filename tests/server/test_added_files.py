"""The files the server appends for a booting node, as the MCS does (MCO `pkg/server/cluster_server.go`: GetConfig)."""

from __future__ import annotations

import json
from urllib.parse import unquote

import pytest

from server.added_files import (
    ANNOTATIONS_PATH,
    CONTENT_PATH,
    ENCAPSULATED_PATH,
    AppendOptions,
    escape_data_url,
    migrate_kernel_arguments,
    with_appended,
)
from server.convert import ConversionRefused
from tests.builders import rendered_config
from tests.server.helpers import SOURCES, ignition_config


@pytest.mark.parametrize(("data", "url"), [
    (b"abcXYZ019", "data:,abcXYZ019"),
    (b"-_.!~*'()", "data:,-_.!~*'()"),
    (b" ", "data:,%20"),
    (b'{"a":1}', "data:,%7B%22a%22%3A1%7D"),
    (b"/etc\n", "data:,%2Fetc%0A"),
    ("é".encode(), "data:,%C3%A9"),
], ids=["unreserved", "go-extra-safe", "space", "json", "slash-newline", "utf8"])
def test_escape_like_go_dataurl(data: bytes, url: str) -> None:
    assert escape_data_url(data) == url


def _text(config: dict, path: str) -> str:
    entry = next(f for f in config["storage"]["files"] if f["path"] == path)
    assert entry["mode"] == 420 and entry["overwrite"] is True
    return unquote(entry["contents"]["source"][len("data:,"):])


def _decoded(config: dict, path: str) -> dict:
    return json.loads(_text(config, path))


def test_annotations_and_encapsulated_are_appended_last() -> None:
    rendered = rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.4.0", files=2), kernel_arguments=("nosmt",),
                             os_image_url="quay.io/x/os@sha256:1")
    out = with_appended(rendered, "3.4.0", AppendOptions())
    paths = [f["path"] for f in out["storage"]["files"]]
    assert paths[-3:] == [ANNOTATIONS_PATH, CONTENT_PATH, ENCAPSULATED_PATH]  # server.go getAppenders order
    annotations = _decoded(out, ANNOTATIONS_PATH)
    prefix = "machineconfiguration.openshift.io/"
    assert annotations == {prefix + "currentConfig": rendered.name, prefix + "desiredConfig": rendered.name,
                           prefix + "firstPivotConfig": rendered.name, prefix + "state": "Done"}
    mc = _decoded(out, ENCAPSULATED_PATH)
    assert mc["kind"] == "MachineConfig" and mc["metadata"]["name"] == rendered.name
    assert mc["spec"]["config"] == {"ignition": {"version": "3.5.0"}}
    assert mc["spec"]["kernelArguments"] == ["nosmt"]
    assert mc["spec"]["osImageURL"] == "quay.io/x/os@sha256:1"
    assert rendered.ignition["storage"]["files"][-1]["path"] == "/etc/demo/file1.conf"  # input untouched


@pytest.mark.parametrize(("options", "expected"), [
    (AppendOptions(False, False, False), []),
    (AppendOptions(True, False, False), [ANNOTATIONS_PATH]),
    (AppendOptions(False, True, False), [ENCAPSULATED_PATH]),
    (AppendOptions(False, False, True), [CONTENT_PATH]),
], ids=["none", "annotations-only", "encapsulated-only", "content-only"])
def test_append_is_configurable(options: AppendOptions, expected: list[str]) -> None:
    out = with_appended(rendered_config(pool="worker", sources=SOURCES, config=ignition_config()), "3.4.0", options)
    assert [f["path"] for f in out["storage"]["files"]][1:] == expected


def test_same_path_is_replaced_not_duplicated() -> None:
    config = ignition_config()
    config["storage"]["files"].append({"path": ANNOTATIONS_PATH, "contents": {"source": "data:,old"}})
    out = with_appended(rendered_config(pool="worker", sources=SOURCES, config=config), "3.4.0", AppendOptions())
    assert [f["path"] for f in out["storage"]["files"]].count(ANNOTATIONS_PATH) == 1


def test_pre_built_image_annotations() -> None:
    rendered = rendered_config(pool="worker", sources=SOURCES, config=ignition_config())
    rendered = type(rendered)(**{**rendered.__dict__, "annotations": {
        "machineconfiguration.openshift.io/pre-built-image": "registry/os@sha256:2"}})
    annotations = _decoded(with_appended(rendered, "3.4.0", AppendOptions()), ANNOTATIONS_PATH)
    assert annotations["machineconfiguration.openshift.io/desiredImage"] == "registry/os@sha256:2"
    assert annotations["machineconfiguration.openshift.io/currentImage"] == "registry/os@sha256:2"


@pytest.mark.parametrize(("version", "kept"), [("3.3.0", True), ("3.6.0", True), ("3.2.0", False), ("3.0.0", False)])
def test_kernel_arguments_move_into_the_mc_below_3_3(version: str, kept: bool) -> None:
    config = ignition_config("3.3.0", extra={"kernelArguments": {"shouldExist": ["quiet"]}})
    out, moved = migrate_kernel_arguments(config, version)
    assert ("kernelArguments" in out) is kept
    assert moved == (() if kept else ("quiet",))
    if not kept:
        rendered = rendered_config(pool="worker", sources=SOURCES, config=config, kernel_arguments=("nosmt",))
        mc = _decoded(with_appended(rendered, version, AppendOptions()), ENCAPSULATED_PATH)
        assert mc["spec"]["kernelArguments"] == ["nosmt", "quiet"]


def test_should_not_exist_cannot_be_served_below_3_3() -> None:
    config = ignition_config("3.3.0", extra={"kernelArguments": {"shouldNotExist": ["quiet"]}})
    with pytest.raises(ConversionRefused) as info:
        migrate_kernel_arguments(config, "3.2.0")
    assert info.value.fields == ("$.kernelArguments.shouldNotExist",)


# MCO pkg/server/server.go appendEncapsulated: the emptied config is `ctrlcommon.NewIgnConfig()`, whose version is the
# one the MCS renders (ign3types.MaxVersion, 3.5.0) for every spec-3 request, whichever version is served.
@pytest.mark.parametrize("served", ["3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"])
def test_encapsulated_config_is_the_rendered_version(served: str) -> None:
    rendered = rendered_config(pool="worker", sources=SOURCES, config=ignition_config("3.5.0"))
    mc = _decoded(with_appended(rendered, served, AppendOptions()), ENCAPSULATED_PATH)
    assert mc["spec"]["config"] == {"ignition": {"version": "3.5.0"}}


# MCO pkg/server/server.go appendInitialMachineConfig: /etc/mcs-machine-config-content.json holds the whole
# MachineConfig served (json.MarshalIndent(mc, "", "    ")), its Ignition config as rendered, after
# MigrateKernelArgsIfNecessary moved kernel arguments into spec.kernelArguments for a spec below 3.3.0.
@pytest.mark.parametrize(("served", "kernel_arguments"), [
    ("3.5.0", ["nosmt"]), ("3.3.0", ["nosmt"]), ("3.2.0", ["nosmt", "quiet"]), ("3.1.0", ["nosmt", "quiet"]),
])
def test_machine_config_content(served: str, kernel_arguments: list[str]) -> None:
    config = ignition_config("3.5.0", files=2, extra={"kernelArguments": {"shouldExist": ["quiet"]}})
    rendered = rendered_config(pool="worker", sources=SOURCES, config=config, kernel_arguments=("nosmt",),
                               os_image_url="quay.io/x/os@sha256:1")
    out = with_appended(rendered, served, AppendOptions())
    text = _text(out, CONTENT_PATH)
    assert text.startswith('{\n    "')  # four-space indentation, as MarshalIndent writes it
    mc = json.loads(text)
    assert mc["kind"] == "MachineConfig" and mc["metadata"]["name"] == rendered.name
    assert mc["spec"]["config"] == rendered.ignition  # the rendered config, not the served one with its files
    assert mc["spec"]["kernelArguments"] == kernel_arguments
    assert mc["spec"]["osImageURL"] == "quay.io/x/os@sha256:1"
