"""The MCO's merge rules (MCO pkg/controller/common/helpers.go: MergeMachineConfigs), table-driven."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fleet.rendered import MachineConfigSpec
from renderer.merge_machineconfigs import merge_machine_configs
from renderer.model import GENERATED_BY, ROLE_LABEL, MachineConfig, Origin
from renderer.naming import rendered_name, spec_hash
from renderer.order import merge_order

V = "3.5.0"


def mc(name: str, role: str = "worker", config: dict[str, Any] | None = None, generated: bool = False,
       **spec: Any) -> MachineConfig:
    return MachineConfig(name=name, labels={ROLE_LABEL: role}, annotations={GENERATED_BY: "x"} if generated else {},
                         spec=MachineConfigSpec(config=config or {}, **spec), has_config=config is not None,
                         origin=Origin(f"manifests/{name}.yaml", 1))


def files(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"ignition": {"version": V}, "storage": {"files": list(entries)}}


def test_order_worker_configs_first_then_others_by_name() -> None:
    configs = [mc("50-infra", "infra"), mc("99-worker-x"), mc("00-worker"), mc("10-infra", "infra")]
    assert [c.name for c in merge_order(configs)] == ["00-worker", "99-worker-x", "10-infra", "50-infra"]


@pytest.mark.parametrize("names", [
    ["b", "a", "B", "_", "-", "10", "9"],
    ["é", "z", "\U0001f600", "\uffff", "\x7f", "e\u0301"],  # byte order of the UTF-8, as Go compares strings
])
def test_order_is_go_byte_order(names: list[str]) -> None:
    configs = [mc(n) for n in names] + [mc(n, "master") for n in names]
    expected = sorted(names, key=str.encode)
    assert [c.name for c in merge_order(configs)] == expected + expected


def _merged(*configs: MachineConfig, **kw: str) -> MachineConfigSpec:
    return merge_machine_configs(merge_order(configs), **kw)


FILE_CASES = [
    ([files({"path": "/etc/a", "mode": 0o644, "contents": {"source": "data:,one"}}),
      files({"path": "/etc/a", "contents": {"source": "data:,two"}})],
     [{"path": "/etc/a", "mode": 0o644, "contents": {"source": "data:,two"}, "overwrite": True}],
     "later-source-wins-mode-inherited"),
    ([files({"path": "/etc/a", "contents": {"source": "data:;base64,H4sI", "compression": "gzip"}}),
      files({"path": "/etc/a", "contents": {"source": "data:,plain"}})],
     [{"path": "/etc/a", "contents": {"source": "data:,plain"}, "overwrite": True}],
     "gzip-reset-by-uncompressed-later-file"),
    ([files({"path": "/etc/a", "overwrite": False, "contents": {"source": "data:,x"}})],
     [{"path": "/etc/a", "overwrite": False, "contents": {"source": "data:,x"}}],
     "explicit-overwrite-false-kept"),
    ([files({"path": "/etc/b", "contents": {"source": "data:,b"}}),
      files({"path": "/etc/a", "contents": {"source": "data:,a"}})],
     [{"path": "/etc/b", "contents": {"source": "data:,b"}, "overwrite": True},
      {"path": "/etc/a", "contents": {"source": "data:,a"}, "overwrite": True}],
     "new-files-appended-in-order"),
    ([files({"path": "/etc/a", "mode": 420, "contents": {"source": "data:,one"}},
            {"path": "/etc/b", "contents": {"source": "data:,b"}}),
      files({"path": "/etc/a", "overwrite": False})],
     [{"path": "/etc/a", "mode": 420, "overwrite": False, "contents": {"source": "data:,one"}},
      {"path": "/etc/b", "contents": {"source": "data:,b"}, "overwrite": True}],
     "later-overwrite-false-keeps-the-source"),
    ([files({"path": "/etc/a", "contents": {"source": "data:,one"}}), files({"path": "/etc/a", "mode": 384})],
     [{"path": "/etc/a", "mode": 384, "contents": {"source": "data:,one"}, "overwrite": True}],
     "later-mode-only-keeps-the-source"),
    ([files({"path": "/etc/a", "mode": 384})], [{"path": "/etc/a", "mode": 384}], "no-source-no-overwrite"),
    ([files({"path": "/etc/a", "contents": {"source": "data:;base64,H4sI", "compression": "gzip"}}),
      files({"path": "/etc/a", "mode": 384})],
     [{"path": "/etc/a", "mode": 384, "contents": {"source": "data:;base64,H4sI"}, "overwrite": True}],
     "gzip-reset-by-a-later-file-without-contents"),
    ([files({"path": "/etc/a", "contents": {"source": "data:,x"}}),
      {"ignition": {"version": V}, "storage": {"directories": [{"path": "/etc/a"}]}}],
     None, "a-directory-replaces-a-file"),
    ([files({"path": "/etc/x", "contents": {"source": "data:,x"}}),
      files({"path": "/etc/a", "contents": {"source": "data:;base64,H4sI", "compression": "gzip"}},
            {"path": "/etc/a", "contents": {"source": "data:,two"}})],
     [{"path": "/etc/x", "contents": {"source": "data:,x"}, "overwrite": True},
      {"path": "/etc/a", "contents": {"source": "data:;base64,H4sI", "compression": "gzip"}, "overwrite": True},
      {"path": "/etc/a", "contents": {"source": "data:,two"}, "overwrite": True}],
     # a config repeating a path (Ignition's validator refuses it: `duplicate`): both kept, as Ignition's merge
     # appends every repeat of a new key; the later one's compression is not left as the earlier one's
     "a-repeated-path-of-one-config-kept-twice"),
    ([files({"path": "/etc/x", "contents": {"source": "data:,x"}}),
      files({"path": "/etc/b", "contents": {"source": "data:,b", "compression": None}}, {"path": "/etc/c"})],
     [{"path": "/etc/x", "contents": {"source": "data:,x"}, "overwrite": True},
      {"path": "/etc/b", "contents": {"source": "data:,b"}, "overwrite": True},
      {"path": "/etc/c", "contents": {}}],
     "new-files-of-a-later-config"),
    ([{"ignition": {"version": V}, "storage": {"directories": [{"path": "/etc/a"}]}},
      files({"path": "/etc/a", "contents": {"source": "data:,a"}})],
     [{"path": "/etc/a", "contents": {"source": "data:,a"}, "overwrite": True}], "a-file-replaces-a-directory"),
]


@pytest.mark.parametrize(("configs", "expected"), [c[:2] for c in FILE_CASES], ids=[c[2] for c in FILE_CASES])
def test_file_merge(configs: list[dict[str, Any]], expected: list[dict[str, Any]] | None) -> None:
    before = copy.deepcopy(configs)
    spec = _merged(*(mc(f"{i:02d}-worker", config=c) for i, c in enumerate(configs)))
    assert spec.config["storage"].get("files") == expected
    assert configs == before  # the inputs are never written to


def test_ssh_keys_union_and_units_merge_dropins_by_name() -> None:
    a = {"ignition": {"version": V}, "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["k1"]}]},
         "systemd": {"units": [{"name": "k.service", "enabled": True,
                                "dropins": [{"name": "10.conf", "contents": "a"}]}]}}
    b = {"ignition": {"version": V}, "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["k2", "k1"]}]},
         "systemd": {"units": [{"name": "k.service", "dropins": [{"name": "10.conf", "contents": "b"},
                                                                  {"name": "20.conf", "contents": "c"}]}]}}
    spec = _merged(mc("00-worker", config=a), mc("99-worker-ssh", config=b))
    assert spec.config["passwd"]["users"] == [{"name": "core", "sshAuthorizedKeys": ["k1", "k2"]}]
    assert spec.config["systemd"]["units"] == [{"name": "k.service", "enabled": True, "dropins": [
        {"name": "10.conf", "contents": "b"}, {"name": "20.conf", "contents": "c"}]}]


SPEC_CASES = [
    ([mc("00-worker", kernel_arguments=("a", "b")), mc("10-worker", kernel_arguments=("b", "c"))],
     "kernel_arguments", ("a", "b", "b", "c"), "kargs-concatenated-no-dedup"),
    ([mc("00-worker", extensions=("usbguard",)), mc("10-worker", extensions=("usbguard", "sysstat"))],
     "extensions", ("usbguard", "usbguard", "sysstat"), "extensions-concatenated"),
    ([mc("00-worker", fips=True), mc("10-worker")], "fips", True, "fips-or"),
    ([mc("00-worker", kernel_type="realtime"), mc("10-worker", kernel_type="default")],
     "kernel_type", "realtime", "kernel-type-last-non-default"),
    ([mc("00-worker", kernel_type="realtime"), mc("10-worker", kernel_type="64k-pages")],
     "kernel_type", "64k-pages", "kernel-type-last-wins"),
    ([mc("00-worker", os_image_url="quay.io/a"), mc("10-worker", os_image_url="quay.io/b")],
     "os_image_url", "quay.io/b", "os-image-last-user-mc"),
    # MCO MergeMachineConfigs: the last non-empty osImageURL of ALL the pool's MachineConfigs, the annotation
    # generated-by-controller-version not looked at; the template controller's MachineConfigs carry the default
    # (pkg/controller/template/render.go generateMachineConfigForName: GetDefaultBaseImageContainer), so one that
    # sorts before a template does not override it
    ([mc("00-worker", os_image_url="quay.io/a"), mc("10-worker", os_image_url="quay.io/gen", generated=True)],
     "os_image_url", "quay.io/gen", "os-image-of-a-generated-mc-counts"),
    ([mc("00-worker", os_image_url="quay.io/default", generated=True), mc("00-worker-os", os_image_url="quay.io/a"),
      mc("01-worker-kubelet", os_image_url="quay.io/default", generated=True)],
     "os_image_url", "quay.io/default", "os-image-before-a-template-is-overridden-by-it"),
    ([mc("01-worker-kubelet", os_image_url="quay.io/default", generated=True), mc("50-infra", "infra",
                                                                                  os_image_url="quay.io/a")],
     "os_image_url", "quay.io/a", "os-image-of-a-custom-role-after-every-worker-template"),
    ([mc("00-worker", base_os_extensions_container_image="quay.io/ext"),
      mc("99-worker-generated-x", base_os_extensions_container_image="quay.io/gen-ext", generated=True)],
     "base_os_extensions_container_image", "quay.io/gen-ext", "extensions-image-of-a-generated-mc-counts"),
    ([mc("00-worker")], "os_image_url", "quay.io/default", "os-image-default"),
    ([mc("00-worker", base_os_extensions_container_image="quay.io/ext")],
     "base_os_extensions_container_image", "quay.io/ext", "extensions-image-override"),
]


@pytest.mark.parametrize(("configs", "field", "expected"), [c[:3] for c in SPEC_CASES], ids=[c[3] for c in SPEC_CASES])
def test_spec_fields(configs: list[MachineConfig], field: str, expected: Any) -> None:
    spec = _merged(*configs, default_os_image="quay.io/default")
    assert getattr(spec, field) == expected


def test_absent_configs_give_an_empty_35_config() -> None:
    assert _merged(mc("00-worker"), mc("01-worker")).config == {"ignition": {"version": V}}


def test_hash_changes_iff_spec_changes() -> None:
    one = _merged(mc("00-worker", config=files({"path": "/etc/a", "contents": {"source": "data:,x"}})))
    renamed = _merged(mc("00-worker-renamed", config=files({"path": "/etc/a", "contents": {"source": "data:,x"}})))
    other = _merged(mc("00-worker", config=files({"path": "/etc/a", "contents": {"source": "data:,y"}})))
    assert spec_hash(one) == spec_hash(renamed)
    assert spec_hash(one) != spec_hash(other)
    assert len(spec_hash(one)) == 32
    assert rendered_name("infra", one).split("-")[-1] == rendered_name("worker", one).split("-")[-1]
    reordered = MachineConfigSpec(config={"storage": one.config["storage"], "ignition": one.config["ignition"]})
    assert spec_hash(reordered) == spec_hash(MachineConfigSpec(config=one.config))
