"""Machine documents: each machine's overlay merged over its pool's config, named from both hashes, recorded in
the pool record; their problems named by file, line and field, degrading no pool; a broken edit keeps the
machine's previous overlay; `mco render --explain --machine` names the machine document."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli.main import main
from fleet.directory_store import DirectoryStore
from fleet.rendered import MachineConfigSpec, RenderedConfig, pool_config_of
from fleet.store import MemoryStore
from ignition.dataurl import decode_data_url
from renderer.machine_render import (
    MACHINE_ANNOTATION,
    OVERLAY_ANNOTATION,
    POOL_CONFIG_ANNOTATION,
    merge_overlay,
)
from renderer.render import render_cluster
from tests.builders import custom_pool_manifest

MACHINES = Path(__file__).resolve().parent / "machines_cluster"
KEYFILE = "/etc/NetworkManager/system-connections/enp1s0.nmconnection"


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    target = tmp_path / "cluster"
    shutil.copytree(MACHINES, target)
    return target


def _file(config: object, path: str) -> tuple[int, bytes]:
    files = {f["path"]: f for f in config.spec.config["storage"]["files"]}  # type: ignore[attr-defined]
    entry = files[path]
    return entry["mode"], decode_data_url(entry["contents"]["source"])


def test_each_machine_is_its_pool_config_with_its_overlay(cluster: Path) -> None:
    store = MemoryStore()
    result = render_cluster(cluster, store=store)
    assert result.ok, result.errors
    pool = result.pools["worker"].rendered
    assert pool is not None
    a, b = result.machines["node-a"], result.machines["node-b"]
    for machine, host, address in ((a, "node-a", "192.168.122.10/24"), (b, "node-b", "192.168.122.11/24")):
        assert pool_config_of(machine.name) == pool.name and machine.pool == "worker"
        assert machine.annotations[POOL_CONFIG_ANNOTATION] == pool.name
        assert machine.annotations[MACHINE_ANNOTATION] == host
        assert machine.name.endswith("-" + machine.annotations[OVERLAY_ANNOTATION])
        assert _file(machine, "/etc/hostname") == (0o644, f"{host}\n".encode())  # overlay replaced the pool's
        mode, keyfile = _file(machine, KEYFILE)
        assert mode == 0o600 and f"address1={address},192.168.122.1".encode() in keyfile
        assert _file(machine, "/etc/motd") == _file(pool, "/etc/motd")  # the pool's files stay
        assert machine.spec.kernel_arguments == (*pool.spec.kernel_arguments, f"systemd.hostname={host}")
        assert store.get_rendered(machine.name) == machine
    record = store.get_pool("worker")
    assert {m.name: m.rendered for m in record.machines} == {"node-a": a.name, "node-b": b.name}
    assert record.target_for("node-a") == a.name and record.target_for("node-c") == pool.name
    assert store.get_pool("master").machines == ()


def test_a_changed_variable_moves_that_machine_only(cluster: Path) -> None:
    store = DirectoryStore(cluster.parent / "store")
    first = render_cluster(cluster, store=store)
    text = (cluster / "manifests/machines.yaml").read_text()
    (cluster / "manifests/machines.yaml").write_text(text.replace("192.168.122.11/24", "192.168.122.21/24"))
    second = render_cluster(cluster, store=store)
    assert second.ok
    assert second.pools["worker"].rendered == first.pools["worker"].rendered and not second.pools["worker"].changed
    assert second.machines["node-a"].name == first.machines["node-a"].name
    assert second.machines["node-b"].name != first.machines["node-b"].name
    assert b"192.168.122.21/24" in _file(second.machines["node-b"], KEYFILE)[1]


def test_a_pool_change_reaches_every_machine_with_its_overlay(cluster: Path) -> None:
    store = MemoryStore()
    first = render_cluster(cluster, store=store)
    base = cluster / "manifests/10-worker-base.yaml"
    base.write_text(base.read_text().replace("welcome%0A", "welcome%20back%0A"))
    second = render_cluster(cluster, store=store)
    for name in ("node-a", "node-b"):
        machine = second.machines[name]
        assert pool_config_of(machine.name) == second.pools["worker"].rendered.name  # type: ignore[union-attr]
        assert machine.annotations[OVERLAY_ANNOTATION] == first.machines[name].annotations[OVERLAY_ANNOTATION]
        assert _file(machine, "/etc/motd")[1] == b"welcome back\n"
        assert _file(machine, "/etc/hostname")[1] == f"{name}\n".encode()


BROKEN = [
    ("bad mac", ('mac: "52:54:00:00:00:0a"', 'mac: "52:54:00:00:00"'),
     "manifests/machines.yaml:7:10 $.spec.selector.mac: machine-selector"),
    ("missing template", ("templates: [hostname, static-net]\n  variables:\n    interface: enp1s0\n    address: "
                          "192.168.122.10/24", "templates: [hostname, nosuch]\n  variables:\n    interface: enp1s0\n"
                          "    address: 192.168.122.10/24"), "$.spec.templates.1: machine node-a: no machine template"),
    ("undefined variable", ("    interface: enp1s0\n    address: 192.168.122.10/24",
                            "    interface: enp1s0\n    addresss: 192.168.122.10/24"), "undefined value: 'address'"),
]


@pytest.mark.parametrize(("edit", "expected"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN])
def test_a_broken_machine_document_keeps_its_previous_overlay(cluster: Path, edit: tuple[str, str],
                                                              expected: str) -> None:
    store = MemoryStore()
    first = render_cluster(cluster, store=store)
    path = cluster / "manifests/machines.yaml"
    text = path.read_text()
    assert edit[0] in text
    path.write_text(text.replace(edit[0], edit[1], 1))
    second = render_cluster(cluster, store=store)
    assert not second.ok and second.pools["worker"].errors == ()  # the pool still renders
    message = " ".join(second.errors).replace("error[", "")
    assert all(part in message for part in expected.split(": machine-selector")), second.errors
    assert second.machines["node-a"].name == first.machines["node-a"].name  # kept as it was
    assert {m.name for m in store.get_pool("worker").machines} == {"node-a", "node-b"}


CLASHES = [
    ("same selector", "  selector:\n    uuid: 6e5b1c2a-0000-4000-8000-00000000000b\n    hostname: node-b",
     "  selector:\n    uuid: 6E5B1C2A-0000-4000-8000-00000000000B\n    hostname: node-b",
     "machine documents node-b and node-b2 have the same selector"),
    ("same hostname", "  selector:\n    uuid: 6e5b1c2a-0000-4000-8000-00000000000b\n    hostname: node-b",
     "  selector:\n    serial: SN-1\n    hostname: node-b", "machine documents node-b and node-b2 both select hostname"),
]


@pytest.mark.parametrize(("selector", "other", "expected"), [c[1:] for c in CLASHES], ids=[c[0] for c in CLASHES])
def test_documents_that_would_tie_are_an_error_naming_both(cluster: Path, selector: str, other: str,
                                                           expected: str) -> None:
    path = cluster / "manifests/machines.yaml"
    text = path.read_text()
    second_doc = text[text.index("---"):].replace("metadata:\n  name: node-b", "metadata:\n  name: node-b2").replace(selector, other)
    path.write_text(text + "\n" + second_doc)
    result = render_cluster(cluster, store=MemoryStore())
    assert any(expected in e for e in result.errors), result.errors
    assert "node-b2" not in result.machines and "node-b" in result.machines


def test_a_machine_in_no_pool_is_an_error(cluster: Path) -> None:
    path = cluster / "manifests/machines.yaml"
    path.write_text(path.read_text().replace('node-role.kubernetes.io/worker: ""', "rack: r1", 1))
    result = render_cluster(cluster, store=MemoryStore())
    assert any("machine node-a: node node-a matches no pool" in e and "$.spec.labels" in e for e in result.errors)
    assert "node-a" not in result.machines and "node-b" in result.machines


def test_explain_names_the_machine_document(cluster: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["render", str(cluster), "--explain", "worker", KEYFILE, "--machine", "node-b"])
    out = capsys.readouterr().out
    assert code == 0
    assert (f"storage.files[{KEYFILE}]  <- machine node-b (manifests/machines.yaml:18, template "
            "machine-templates/static-net/files/keyfile.yaml:1)") in out
    code = main(["render", str(cluster), "--explain", "worker", "/etc/hostname", "--machine", "node-a"])
    out = capsys.readouterr().out
    assert "machine node-a (manifests/machines.yaml:1, template machine-templates/hostname/files/hostname.yaml:1); " \
           "overrode 10-worker-base (manifests/10-worker-base.yaml:15)" in out
    assert main(["render", str(cluster), "--explain", "worker", "--machine", "nosuch"]) == 1
    assert main(["render", str(cluster), "--machine", "node-a"]) == 2


def test_a_machine_config_over_the_size_limit_is_refused(cluster: Path) -> None:
    big = "x" * 1_600_000
    path = cluster / "manifests/machines.yaml"
    path.write_text(path.read_text().replace("    gateway: 192.168.122.1\n", f"    gateway: 192.168.122.1\n"
                                             f"    padding: {big}\n", 1))
    keyfile = cluster / "machine-templates/static-net/files/keyfile.yaml"
    keyfile.write_text(keyfile.read_text() + "    # {{ padding | default('') }}\n")
    result = render_cluster(cluster, store=MemoryStore())
    assert any("machine node-a" in e and "more than the limit" in e for e in result.errors), result.errors
    assert "node-a" not in result.machines and "node-b" in result.machines


# A machine's labels are its node's labels, so they follow Kubernetes' syntax (apimachinery
# pkg/util/validation/validation.go IsQualifiedName and IsValidLabelValue, cases after its validation_test.go
# TestIsQualifiedName / TestIsValidLabelValue): an invalid one is an error of the document, as the API server
# refuses such a Node.
LABELS = [
    ("prefixed, mixed-case name", "example.com/Rack_1.a", "A-1_b.c", ""),
    ("empty value", "example.com/gpu", '""', ""),
    ("63-character name and value", "a" * 63, "b" * 63, ""),
    ("space in the key", '"rack one"', "r1", "a label key's name must be letters"),
    ("key beginning with a dash", '"-rack"', "r1", "a label key's name must be letters"),
    ("uppercase prefix", "Example.com/rack", "r1", "prefix must be a lowercase DNS subdomain"),
    ("two slashes", "a/b/c", "r1", "prefix must be a lowercase DNS subdomain"),
    ("empty name", "example.com/", "r1", "a label key's name must be 1-63 characters"),
    ("64-character name", "a" * 64, "r1", "a label key's name must be 1-63 characters"),
    ("64-character value", "rack", "b" * 64, "a label value must be 1-63 characters"),
    ("value ending with a dot", "rack", "r1.", "a label value must be letters"),
    ("value with a slash", "rack", "r/1", "a label value must be letters"),
    ("non-ASCII value", "rack", "r\u00fc", "a label value must be letters"),
]


@pytest.mark.parametrize(("key", "value", "expected"), [c[1:] for c in LABELS], ids=[c[0] for c in LABELS])
def test_a_machines_labels_are_kubernetes_labels(cluster: Path, key: str, value: str, expected: str) -> None:
    path = cluster / "manifests/machines.yaml"
    text = path.read_text()
    path.write_text(text.replace("topology.kubernetes.io/zone: rack-1", f"{key}: {value}", 1))
    result = render_cluster(cluster, store=MemoryStore())
    if not expected:
        assert result.ok, result.errors
        assert "node-a" in result.machines
        return
    assert any(expected in e and "$.spec.labels" in e and "machines.yaml:11" in e for e in result.errors), \
        result.errors
    assert "node-a" not in result.machines and "node-b" in result.machines


def test_each_pool_may_have_its_own_default(cluster: Path) -> None:
    """A selector chooses among the machines of one pool (`/config/POOL`), as a matchbox group does among all
    groups (matchbox/server/server.go SelectGroup): the same selector in two pools never ties, so every pool may
    have its default (an empty selector)."""
    path = cluster / "manifests/machines.yaml"
    defaults = "".join(
        f"\n---\napiVersion: machine-config.io/v1\nkind: Machine\nmetadata:\n  name: {pool}-default\nspec:\n"
        f"  selector: {{}}\n  labels:\n    node-role.kubernetes.io/{pool}: \"\"\n  templates: [hostname]\n"
        f"  variables:\n    hostname: {pool}-node\n" for pool in ("worker", "master"))
    path.write_text(path.read_text() + defaults)
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok, result.errors
    assert result.machines["worker-default"].pool == "worker" and result.machines["master-default"].pool == "master"
    path.write_text(path.read_text() + defaults.replace("name: master-default", "name: master-default2"))
    result = render_cluster(cluster, store=MemoryStore())
    assert any("machine documents master-default and master-default2 have the same selector" in e
               for e in result.errors), result.errors




def test_a_machine_stays_in_its_pool_while_the_pools_manifest_is_broken(cluster: Path) -> None:
    """A pool whose manifest does not parse keeps the node selector it had, so its nodes stay in it (the MCO keeps
    the last pool object the API server admitted); the machine of such a node stays there too, with its overlay,
    rather than moving to `worker` and back."""
    machines = cluster / "manifests/machines.yaml"
    machines.write_text(machines.read_text().replace('node-role.kubernetes.io/worker: ""',
                                                     'node-role.kubernetes.io/worker: ""\n'
                                                     '    node-role.kubernetes.io/infra: ""', 1))
    pool = cluster / "manifests/20-infra-pool.yaml"
    pool.write_text(custom_pool_manifest("infra"))
    store = MemoryStore()
    first = render_cluster(cluster, store=store)
    assert first.ok, first.errors
    assert first.machines["node-a"].pool == "infra" and first.machines["node-b"].pool == "worker"
    pool.write_text(custom_pool_manifest("infra", max_unavailable="lots"))
    second = render_cluster(cluster, store=store)
    assert second.pools["infra"].errors and not second.pools["worker"].errors
    assert second.machines["node-a"].name == first.machines["node-a"].name
    assert [m.name for m in store.get_pool("infra").machines] == ["node-a"]
    assert [m.name for m in store.get_pool("worker").machines] == ["node-b"]


def _pool_config(spec: MachineConfigSpec) -> RenderedConfig:
    return RenderedConfig(name="rendered-worker-" + "a" * 32, pool="worker", spec=spec)


POOL_SPEC = MachineConfigSpec(
    config={"ignition": {"version": "3.5.0"},
            "storage": {"files": [{"path": "/etc/motd", "mode": 0o600, "overwrite": True, "user": {"name": "core"},
                                   "contents": {"source": "data:;base64,H4sIAAAAAAAA/w==", "compression": "gzip"}}]},
            "systemd": {"units": [{"name": "foo.service", "enabled": True, "contents": "[Unit]\n",
                                   "dropins": [{"name": "a.conf", "contents": "[Service]\n"}]}]}},
    kernel_arguments=("a=1", "b"), fips=True, kernel_type="realtime", extensions=("usbguard",),
    os_image_url="quay.io/os@sha256:" + "1" * 64)
OVERLAY_SPEC = MachineConfigSpec(
    config={"ignition": {"version": "3.5.0"},
            "storage": {"files": [{"path": "/etc/motd", "contents": {"source": "data:,hi"}},
                                  {"path": "/etc/hostname", "contents": {"source": "data:,n"}}]},
            "systemd": {"units": [{"name": "foo.service", "enabled": False,
                                   "dropins": [{"name": "b.conf", "contents": "[Unit]\n"}]}]}},
    kernel_arguments=("a=1", "c"))


def test_the_overlay_merges_as_the_last_machine_config_would() -> None:
    """The overlay over the pool's rendered config by MCO MergeMachineConfigs (pkg/controller/common/helpers.go):
    Ignition's merge (ignition config/merge: a file is merged by path and a unit by name, field by field, so what
    the overlay leaves out, a mode, an owner, a unit's contents, stays the pool's; drop-ins merge by name),
    `compression` reset when the overlay's file does not set it, `overwrite: true` for every file; kernel arguments
    concatenated (no de-duplication in current MCO); FIPS, kernel type, extensions and the OS image the pool's."""
    merged = merge_overlay(_pool_config(POOL_SPEC), OVERLAY_SPEC)
    files = {f["path"]: f for f in merged.config["storage"]["files"]}
    assert files["/etc/motd"] == {"path": "/etc/motd", "mode": 0o600, "overwrite": True, "user": {"name": "core"},
                                  "contents": {"source": "data:,hi"}}
    assert files["/etc/hostname"]["overwrite"] is True
    assert merged.config["systemd"]["units"] == [
        {"name": "foo.service", "enabled": False, "contents": "[Unit]\n",
         "dropins": [{"name": "a.conf", "contents": "[Service]\n"}, {"name": "b.conf", "contents": "[Unit]\n"}]}]
    assert merged.kernel_arguments == ("a=1", "b", "a=1", "c")
    assert (merged.fips, merged.kernel_type, merged.extensions, merged.os_image_url) == \
        (True, "realtime", ("usbguard",), POOL_SPEC.os_image_url)


def test_a_selector_value_wins_over_a_variable_of_the_same_name(cluster: Path) -> None:
    """A template sees the machine's selector values over its variables, as matchbox's templates see a group's
    selectors over its metadata (matchbox/http/parse.go collectVariables: metadata first, then each selector key,
    lowercased, written over it): the value the machine was matched by is the one its config carries."""
    path = cluster / "manifests/machines.yaml"
    text = path.read_text()
    path.write_text(text.replace("    interface: enp1s0\n    address: 192.168.122.10/24",
                                 "    hostname: other-name\n    interface: enp1s0\n    address: 192.168.122.10/24", 1))
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok, result.errors
    assert _file(result.machines["node-a"], "/etc/hostname")[1] == b"node-a\n"


def test_an_unquoted_mac_read_as_a_number_says_so(cluster: Path) -> None:
    """YAML 1.1 reads `52:54:00:00:00:10` as a base-60 number, as Kubernetes does: the error says what the text
    was read as, like every other type error of a document."""
    path = cluster / "manifests/machines.yaml"
    path.write_text(path.read_text().replace('mac: "52:54:00:00:00:0a"', "mac: 52:54:00:00:00:10", 1))
    result = render_cluster(cluster, store=MemoryStore())
    assert any("$.spec.selector.mac" in e and "base-60" in e for e in result.errors), result.errors


# A machine's pool from its labels as MCO pkg/helpers/helpers.go GetPoolsForNode decides a node's (pools[0]):
# the pools whose nodeSelector matches; one custom pool over worker; master over a custom pool and over worker;
# two custom pools refused in the MCO's words; a windows node unmanaged.
POOL_CASES = [
    ("worker", {"node-role.kubernetes.io/worker": ""}, "worker"),
    ("custom over worker", {"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/infra": ""}, "infra"),
    ("custom alone", {"node-role.kubernetes.io/infra": ""}, "infra"),
    ("master over custom", {"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/infra": ""}, "master"),
    ("master over worker", {"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/worker": ""}, "master"),
    ("two custom pools", {"node-role.kubernetes.io/infra": "", "node-role.kubernetes.io/gpu": ""},
     "node node-b belongs to 2 custom roles, cannot proceed with this Node"),
    ("windows", {"node-role.kubernetes.io/worker": "", "kubernetes.io/os": "windows"},
     "node node-b is a windows node so won't be managed by MCO"),
    ("no pool's selector", {"rack": "r1"}, "node node-b matches no pool's nodeSelector"),
]


@pytest.mark.parametrize(("labels", "expected"), [c[1:] for c in POOL_CASES], ids=[c[0] for c in POOL_CASES])
def test_a_machines_pool_follows_from_its_labels_as_the_mcos(cluster: Path, labels: dict[str, str],
                                                             expected: str) -> None:
    for pool in ("infra", "gpu"):
        (cluster / f"manifests/20-{pool}-pool.yaml").write_text(custom_pool_manifest(pool))
    path = cluster / "manifests/machines.yaml"
    text = path.read_text()
    head, tail = text.split("---", 1)
    written = "".join(f"\n    {k}: \"{v}\"" for k, v in labels.items())
    path.write_text(head + "---" + tail.replace('  labels:\n    node-role.kubernetes.io/worker: ""',
                                                "  labels:" + written, 1))
    result = render_cluster(cluster, store=MemoryStore())
    if " " not in expected:
        assert result.ok, result.errors
        assert result.machines["node-b"].pool == expected
    else:
        assert any(expected in e and "$.spec.labels" in e for e in result.errors), result.errors
        assert "node-b" not in result.machines and "node-a" in result.machines
