"""The image plan: what goes into the layer, and every kind of thing that cannot (table-driven)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from fleet.rendered import RenderedConfig
from imagebuild.plan import plan_image
from imagebuild.plan_builder import FIRST_BOOT, NODE_SPECIFIC_ANNOTATION, REFUSED, PlanSettings
from tests.builders import rendered_config


def rc(config: dict[str, Any], **spec: Any) -> RenderedConfig:
    return rendered_config("rendered-worker-1", config={"ignition": {"version": "3.2.0"}, **config}, **spec)


def f(path: str, source: str | None = "data:,x", **extra: Any) -> dict[str, Any]:
    return {"path": path, **({"contents": {"source": source}} if source is not None else {}), **extra}


PROBLEMS = {
    "user": ({"passwd": {"users": [{"name": "core", "passwordHash": "$6$x"}]}}, {},
             [("passwd", FIRST_BOOT, "$.spec.config.passwd.users.0")]),
    "group": ({"passwd": {"groups": [{"name": "ops"}]}}, {}, [("passwd", FIRST_BOOT, "$.spec.config.passwd.groups.0")]),
    "disk": ({"storage": {"disks": [{"device": "/dev/sdb"}]}}, {},
             [("storage-device", FIRST_BOOT, "$.spec.config.storage.disks.0")]),
    "filesystem": ({"storage": {"filesystems": [{"device": "/dev/sdb1", "format": "xfs"}]}}, {},
                   [("storage-device", FIRST_BOOT, "$.spec.config.storage.filesystems.0")]),
    "raid": ({"storage": {"raid": [{"name": "md0", "level": "raid1", "devices": ["/dev/a", "/dev/b"]}]}}, {},
             [("storage-device", FIRST_BOOT, "$.spec.config.storage.raid.0")]),
    "luks": ({"storage": {"luks": [{"name": "data", "device": "/dev/sdc"}]}}, {},
             [("storage-device", FIRST_BOOT, "$.spec.config.storage.luks.0")]),
    "var-file": ({"storage": {"files": [f("/var/lib/app/state")]}}, {},
                 [("var-path", FIRST_BOOT, "$.spec.config.storage.files.0.path")]),
    "home-dir": ({"storage": {"directories": [{"path": "/home/core/.config"}]}}, {},
                 [("var-path", FIRST_BOOT, "$.spec.config.storage.directories.0.path")]),
    "hostname": ({"storage": {"files": [f("/etc/hostname")]}}, {},
                 [("node-specific", FIRST_BOOT, "$.spec.config.storage.files.0.path")]),
    "ssh-host-key": ({"storage": {"files": [f("/etc/ssh/ssh_host_ed25519_key")]}}, {},
                     [("node-specific", FIRST_BOOT, "$.spec.config.storage.files.0.path")]),
    "merge-pointer": ({"ignition": {"version": "3.2.0", "config": {"merge": [{"source": "https://x/y"}]}}}, {},
                      [("remote-config", FIRST_BOOT, "$.spec.config.ignition.config.merge")]),
    "karg-remove": ({"ignition": {"version": "3.3.0"}, "kernelArguments": {"shouldNotExist": ["quiet"]}}, {},
                    [("karg-remove", FIRST_BOOT, "$.spec.config.kernelArguments.shouldNotExist.0")]),
    "fips": ({}, {"fips": True}, [("fips", FIRST_BOOT, "$.spec.fips")]),
    "base-unit": ({"systemd": {"units": [{"name": "chronyd.service", "enabled": True}]}}, {},
                  [("unit-base", FIRST_BOOT, "$.spec.config.systemd.units.0.enabled")]),
    "boot": ({"storage": {"files": [f("/boot/loader/x")]}}, {},
             [("path-not-in-image", REFUSED, "$.spec.config.storage.files.0.path")]),
    "usr-etc": ({"storage": {"files": [f("/usr/etc/x")]}}, {},
                [("path-not-in-image", REFUSED, "$.spec.config.storage.files.0.path")]),
    "run-link": ({"storage": {"links": [{"path": "/run/x", "target": "/y"}]}}, {},
                 [("path-not-in-image", REFUSED, "$.spec.config.storage.links.0.path")]),
    "remote-source": ({"storage": {"files": [f("/etc/x", "https://example.com/x")]}}, {},
                      [("remote-source", REFUSED, "$.spec.config.storage.files.0.contents.source")]),
    "bad-data-url": ({"storage": {"files": [f("/etc/x", "data:;base64,aGVsbG8")]}}, {},
                     [("data-url", REFUSED, "$.spec.config.storage.files.0.contents.source")]),
    "bad-gzip": ({"storage": {"files": [{"path": "/etc/x", "contents": {"source": "data:,plain",
                                                                      "compression": "gzip"}}]}}, {},
                 [("gzip", REFUSED, "$.spec.config.storage.files.0.contents.compression")]),
    "hash-mismatch": ({"storage": {"files": [{"path": "/etc/x", "contents": {
        "source": "data:,x", "verification": {"hash": "sha256-" + "0" * 64}}}]}}, {},
        [("hash-mismatch", REFUSED, "$.spec.config.storage.files.0.contents.verification.hash")]),
    "append": ({"storage": {"files": [{"path": "/etc/x", "append": [{"source": "data:,more"}]}]}}, {},
               [("file-append", REFUSED, "$.spec.config.storage.files.0.append")]),
    "owner-name": ({"storage": {"files": [f("/etc/x", user={"name": "core"})]}}, {},
                   [("owner-by-name", REFUSED, "$.spec.config.storage.files.0.user.name")]),
    "link-owner-name": ({"storage": {"links": [{"path": "/etc/l", "target": "/x", "group": {"name": "wheel"}}]}}, {},
                        [("owner-by-name", REFUSED, "$.spec.config.storage.links.0.group.name")]),
    "hard-link-outside": ({"storage": {"links": [{"path": "/etc/l", "target": "/etc/nothere", "hard": True}]}}, {},
                          [("hard-link", REFUSED, "$.spec.config.storage.links.0.target")]),
    "file-under-file": ({"storage": {"files": [f("/etc/a"), f("/etc/a/b")]}}, {},
                        [("path-conflict", REFUSED, "$.spec.config.storage.files.1")]),
    "unit-vs-file": ({"storage": {"files": [f("/etc/systemd/system/a.service")]},
                      "systemd": {"units": [{"name": "a.service", "contents": "[Unit]\n"}]}}, {},
                     [("path-conflict", REFUSED, "$.spec.config.systemd.units.0")]),
    "extension-oci": ({}, {"extensions": ("usbguard",)}, [("needs-engine", REFUSED, "$.spec.extensions")]),
    "extension-unknown": ({}, {"extensions": ("nope",)}, [("extension-unknown", REFUSED, "$.spec.extensions.0")]),
    "kernel-type-oci": ({}, {"kernel_type": "realtime"}, [("needs-engine", REFUSED, "$.spec.kernelType")]),
    "clean": ({"storage": {"files": [f("/etc/x")]}}, {}, []),
}


@pytest.mark.parametrize("config,spec,expected", PROBLEMS.values(), ids=PROBLEMS.keys())
def test_problems(config: dict[str, Any], spec: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    plan = plan_image(rc(config, **spec))
    assert [(p.code, p.disposition, p.path) for p in plan.problems] == expected


def test_all_refusals_are_collected_at_once() -> None:
    plan = plan_image(rc({"storage": {"files": [f("/boot/x"), f("/etc/y", "http://h/y"), f("/etc/z", user={"name": "u"})]}}))
    assert [p.code for p in plan.refused] == ["path-not-in-image", "remote-source", "owner-by-name"]


def test_node_specific_annotation_adds_globs() -> None:
    rendered = rendered_config("rendered-worker-1", config={"storage": {"files": [f("/etc/node/id.conf"), f("/etc/ok")]}},
                               annotations={NODE_SPECIFIC_ANNOTATION: "/etc/node/*, /etc/other"})
    plan = plan_image(rendered)
    assert [(p.code, p.path) for p in plan.problems] == [("node-specific", "$.spec.config.storage.files.0.path")]
    assert "/etc/ok" in {e.path for e in plan.entries}


def test_engine_mode_accepts_extensions_and_kernel_type_and_base_units() -> None:
    plan = plan_image(rc({"systemd": {"units": [{"name": "chronyd.service", "enabled": True},
                                                {"name": "cups.service", "enabled": False}]}},
                         extensions=("usbguard", "kerberos", "usbguard"), kernel_type="realtime"),
                      PlanSettings(engine=True))
    assert plan.problems == ()
    assert plan.packages == ("usbguard", "krb5-workstation", "libkadm5")
    assert plan.kernel_type == "realtime"
    assert plan.enable_in_build == ("chronyd.service",) and plan.disable_in_build == ("cups.service",)


# 64k-pages kernels exist for aarch64 only: MCO refuses the kernelType elsewhere
# (pkg/controller/build/buildrequest/buildrequestopts.go getKernelPackages: "64k-pages is only supported
# for aarch64 architecture"). The build's target is `--arch` (Go names, as MCO's GOARCH; aarch64 accepted).
KERNEL_ARCH = {
    "64k-arm64": ("64k-pages", "arm64", []),
    "64k-aarch64": ("64k-pages", "aarch64", []),
    "64k-amd64": ("64k-pages", "amd64", [("kernel-type", REFUSED, "$.spec.kernelType")]),
    "64k-ppc64le": ("64k-pages", "ppc64le", [("kernel-type", REFUSED, "$.spec.kernelType")]),
    "realtime-amd64": ("realtime", "amd64", []),
    "default-s390x": ("default", "s390x", []),
}


@pytest.mark.parametrize("kernel_type,arch,expected", KERNEL_ARCH.values(), ids=KERNEL_ARCH.keys())
def test_kernel_type_architecture(kernel_type: str, arch: str, expected: list[tuple[str, str, str]]) -> None:
    plan = plan_image(rc({}, kernel_type=kernel_type), PlanSettings(engine=True, arch=arch))
    assert [(p.code, p.disposition, p.path) for p in plan.problems] == expected


ENTRIES = {
    "default-modes": ({"storage": {"files": [f("/etc/a/f")], "directories": [{"path": "/etc/d"}]}},
                      {"/etc": ("dir", 0o755), "/etc/a": ("dir", 0o755), "/etc/a/f": ("file", 0o644),
                       "/etc/d": ("dir", 0o755)}),
    "explicit-modes": ({"storage": {"files": [f("/etc/f", mode=0o4750)], "directories": [{"path": "/etc", "mode": 0o700}]}},
                       {"/etc": ("dir", 0o700), "/etc/f": ("file", 0o4750)}),
    "relative-symlink": ({"storage": {"links": [{"path": "/etc/l", "target": "../x"}]}},
                         {"/etc": ("dir", 0o755), "/etc/l": ("symlink", 0o777)}),
    "mask": ({"systemd": {"units": [{"name": "x.service", "mask": True, "contents": "[Unit]\n"}]}},
             {"/etc": ("dir", 0o755), "/etc/systemd": ("dir", 0o755), "/etc/systemd/system": ("dir", 0o755),
              "/etc/systemd/system/x.service": ("symlink", 0o777)}),
}


@pytest.mark.parametrize("config,expected", ENTRIES.values(), ids=ENTRIES.keys())
def test_entries(config: dict[str, Any], expected: dict[str, tuple[str, int]]) -> None:
    plan = plan_image(rc(config))
    assert {e.path: (e.kind, e.mode) for e in plan.entries} == expected


# Owners of links. Ignition's files stage, internal/exec/util/file.go WriteLink: a symlink is created, then
# SetPermissions(nil, node) lchowns it to the node's user/group ids (names looked up, which an image layer
# cannot do); a hard link is os.Link and shares its target's inode, so its owner is the target's (config
# v3 types: "user/group ignored for hard link").
LINK_OWNERS = {
    "symlink-explicit-ids": ({"links": [{"path": "/etc/l", "target": "/nowhere", "user": {"id": 42},
                                         "group": {"id": 43}}]},
                             "/etc/l", (42, 43)),
    "symlink-user-only": ({"links": [{"path": "/etc/l", "target": "/nowhere", "user": {"id": 42}}]},
                          "/etc/l", (42, 0)),
    "symlink-root-by-name": ({"links": [{"path": "/etc/l", "target": "/nowhere", "user": {"name": "root"},
                                         "group": {"name": "root"}}]},
                             "/etc/l", (0, 0)),
    "symlink-no-owner": ({"links": [{"path": "/etc/l", "target": "/nowhere"}]}, "/etc/l", (0, 0)),
    "hard-link-shares-target-owner": ({"files": [f("/etc/a", user={"id": 7}, group={"id": 8})],
                                       "links": [{"path": "/etc/h", "target": "/etc/a", "hard": True}]},
                                      "/etc/h", (7, 8)),
}


@pytest.mark.parametrize("storage,path,owner", LINK_OWNERS.values(), ids=LINK_OWNERS.keys())
def test_link_owners(storage: dict[str, Any], path: str, owner: tuple[int, int]) -> None:
    plan = plan_image(rc({"storage": storage}))
    assert not plan.problems
    entry = next(e for e in plan.entries if e.path == path)
    assert (entry.uid, entry.gid) == owner


def test_kernel_arguments_become_kargs_d() -> None:
    import tomllib
    plan = plan_image(rc({"ignition": {"version": "3.3.0"}, "kernelArguments": {"shouldExist": ["quiet", "nosmt"]}},
                         kernel_arguments=("nosmt", "a=1 b=2")),
                      PlanSettings(kargs_architectures=("amd64", "arm64")))
    entry = next(e for e in plan.entries if e.path == "/usr/lib/bootc/kargs.d/50-machine-config.toml")
    assert tomllib.loads(entry.data.decode()) == {"kargs": ["nosmt", "a=1", "b=2", "quiet"],
                                                  "match-architectures": ["x86_64", "aarch64"]}


def test_labels_and_digest_ignore_provenance() -> None:
    a = rc({"storage": {"files": [f("/etc/x")]}})
    b = replace(a, provenance={"storage.files[/etc/x]": "50-x (m.yaml:3)"})
    pa, pb = plan_image(a), plan_image(b)
    assert pa.labels() == pb.labels()
    assert pa.labels()["machineconfig"] == "rendered-worker-1"
    assert pa.labels()["io.machine-config.config-digest"].startswith("sha256:")


BAD_TYPES = {
    "storage-not-object": ({"storage": []}, "$.spec.config.storage"),
    "files-not-list": ({"storage": {"files": {}}}, "$.spec.config.storage.files"),
    "file-not-object": ({"storage": {"files": ["x"]}}, "$.spec.config.storage.files.0"),
    "mode-string": ({"storage": {"files": [f("/etc/x", mode="0644")]}}, "$.spec.config.storage.files.0.mode"),
    "mode-too-big": ({"storage": {"directories": [{"path": "/etc/d", "mode": 0o17777}]}},
                     "$.spec.config.storage.directories.0.mode"),
    "uid-negative": ({"storage": {"files": [f("/etc/x", user={"id": -1})]}}, "$.spec.config.storage.files.0.user.id"),
    "dropin-name": ({"systemd": {"units": [{"name": "a.service", "dropins": [{"name": "../x", "contents": ""}]}]}},
                    "$.spec.config.systemd.units.0.dropins.0.name"),
    "units-not-list": ({"systemd": {"units": "a.service"}}, "$.spec.config.systemd.units"),
}


@pytest.mark.parametrize("config,path", BAD_TYPES.values(), ids=BAD_TYPES.keys())
def test_bad_types_are_refused_not_crashes(config: dict[str, Any], path: str) -> None:
    plan = plan_image(rc(config))
    assert [p.path for p in plan.refused] == [path]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_json = st.recursive(st.none() | st.booleans() | st.integers(-5, 70000) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=12)
_keys = st.sampled_from(["path", "mode", "contents", "source", "user", "id", "name", "enabled", "mask", "dropins",
                         "target", "hard", "append", "files", "units", "links", "directories"])
_node = st.dictionaries(_keys, _json | st.just("/etc/x") | st.just("data:,x"), max_size=5)


@settings(max_examples=150, deadline=None)
@given(files=st.lists(_node, max_size=3), units=st.lists(_node, max_size=3), links=st.lists(_node, max_size=2))
def test_plan_never_crashes_on_odd_configs(files: list, units: list, links: list) -> None:
    plan = plan_image(rc({"storage": {"files": files, "links": links}, "systemd": {"units": units}}))
    for problem in plan.problems:
        assert problem.path.startswith("$.spec")
