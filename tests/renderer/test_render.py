"""render_cluster end to end: the example cluster (golden files), degraded pools, store contents."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fleet.clock import ManualClock
from fleet.directory_store import DirectoryStore
from fleet.rendered import RenderedConfig
from fleet.store import MemoryStore
from renderer.errors import ClusterDirectoryMissing
from renderer.render import render_cluster
from tests.golden import assert_golden

GOLDEN = Path(__file__).parent / "golden" / "example"


_clock = ManualClock(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))


def _write(cluster: Path, name: str, text: str) -> None:
    (cluster / "manifests" / name).write_text(text)


def test_example_renders_every_pool_to_its_golden_file(cluster: Path) -> None:
    store = MemoryStore()
    result = render_cluster(cluster, store=store, clock=_clock)
    assert result.ok, (result.errors, {p: r.errors for p, r in result.pools.items()})
    assert sorted(result.pools) == ["infra", "master", "worker"]
    for pool, outcome in result.pools.items():
        assert outcome.changed and outcome.rendered is not None
        golden = GOLDEN / f"{pool}.json"
        data = outcome.rendered.to_json_bytes()
        assert_golden(golden, data)
        assert store.get_rendered(outcome.rendered.name) == outcome.rendered
        record = store.get_pool(pool)
        assert record.current == outcome.rendered.name
        assert record.condition("RenderDegraded").status == "False"  # type: ignore[union-attr]


def test_example_semantics(cluster: Path) -> None:
    result = render_cluster(cluster, store=MemoryStore(), clock=_clock)
    infra = result.pools["infra"].rendered
    worker = result.pools["worker"].rendered
    assert infra is not None and worker is not None
    # custom pool: worker configs first, then infra ones, whatever the names
    assert infra.sources[-2:] == ("60-infra-node-exporter", "99-infra-generated-kubelet")
    assert infra.spec.kernel_arguments == ("nosmt", "mitigations=auto,nosmt", "transparent_hugepage=never")
    assert worker.spec.extensions == ("usbguard",)
    assert "overrode 01-worker-kubelet" in infra.provenance["storage.files[/etc/kubernetes/kubelet.conf]"]
    assert infra.provenance["storage.files[/etc/usbguard/rules.conf]"].startswith(
        "50-worker-usbguard (manifests/50-worker-usbguard.yaml:")
    paths = [f["path"] for f in worker.spec.config["storage"]["files"]]
    assert "/etc/motd.d/10-lab.motd" in paths and "/etc/sysconfig/node-exporter" not in paths


def test_rendering_twice_changes_nothing_and_renaming_keeps_the_hash(cluster: Path) -> None:
    store = MemoryStore()
    first = render_cluster(cluster, store=store, clock=_clock)
    again = render_cluster(cluster, store=store, clock=_clock)
    assert {p: r.changed for p, r in again.pools.items()} == {"infra": False, "master": False, "worker": False}
    text = (cluster / "manifests" / "05-worker-kernelarg-nosmt.yaml").read_text()
    (cluster / "manifests" / "05-worker-kernelarg-nosmt.yaml").write_text(
        text.replace("name: 05-worker-kernelarg-nosmt", "name: 06-worker-kernelarg-nosmt"))
    renamed = render_cluster(cluster, store=store, clock=_clock)
    assert renamed.pools["worker"].rendered.name == first.pools["worker"].rendered.name  # type: ignore[union-attr]


BAD_MC = """\
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 50-worker-bad
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
{spec}
"""

DEGRADING = [
    ("  kernelType: foo\n", "manifests/50-worker-bad.yaml:8:15 $.spec.kernelType: kernelType=foo is invalid",
     "kernel-type"),
    ("  config:\n    ignition:\n      version: 3.5.0\n    storage:\n      files:\n        - path: /usr/local/bin/x\n"
     "          mode: 04755\n          contents:\n            source: data:,x\n",
     "manifests/50-worker-bad.yaml:14:17 $.spec.config.storage.files.0.mode: invalid mode 04755 for "
     "/usr/local/bin/x, cannot exceed 0777", "setuid-mode"),
    ("  extensions: [nvidia]\n  config:\n    ignition:\n      version: 3.5.0\n",
     "manifests/50-worker-bad.yaml:8:16 $.spec.extensions.0: invalid extensions found: [nvidia]", "extension"),
    ("  fips: yes\n", "manifests/50-worker-bad.yaml:8:9 $.spec.fips: reconciliation failed between current config "
     '"rendered-{pool}-', "fips-cannot-change-on-running-nodes"),
]


@pytest.mark.parametrize(("spec", "message"), [d[:2] for d in DEGRADING], ids=[d[2] for d in DEGRADING])
def test_bad_worker_config_degrades_worker_and_infra_keeps_master(cluster: Path, spec: str, message: str) -> None:
    store = MemoryStore()
    before = render_cluster(cluster, store=store, clock=_clock)
    _write(cluster, "50-worker-bad.yaml", BAD_MC.format(spec=spec))
    after = render_cluster(cluster, store=store, clock=_clock)
    assert not after.ok
    for pool in ("worker", "infra"):
        outcome = after.pools[pool]
        assert any(e.startswith(message.format(pool=pool)) for e in outcome.errors), outcome.errors
        assert not outcome.changed
        assert outcome.rendered == before.pools[pool].rendered
        record = store.get_pool(pool)
        assert record.current == before.pools[pool].rendered.name  # type: ignore[union-attr]
        degraded = record.condition("RenderDegraded")
        assert degraded is not None and degraded.status == "True"
        assert degraded.message.startswith(f"Failed to render configuration for pool {pool}: ")
        # the same problems as data beside the message: file:line:col, field path and text, nothing to parse
        shown = [" ".join(x for x in (p.where, p.field) if x) + ": " + p.message for p in degraded.problems]
        assert degraded.message == f"Failed to render configuration for pool {pool}: " + "; ".join(shown)
        assert any(text.startswith(message.format(pool=pool)) for text in shown), shown
        assert all(p.file == "manifests/50-worker-bad.yaml" and p.line and p.column for p in degraded.problems
                   if p.file)
    assert after.pools["master"].errors == () and after.pools["master"].rendered == before.pools["master"].rendered


def test_yaml_1_1_surprise_is_explained(cluster: Path) -> None:
    _write(cluster, "50-worker-bad.yaml", BAD_MC.format(spec="  fips: yes\n  osImageURL: on\n"))
    result = render_cluster(cluster, store=MemoryStore(), clock=_clock)
    errors = result.pools["worker"].errors
    assert any("YAML 1.1 read 'on' as the boolean true; quote it" in e for e in errors), errors


def test_syntax_error_without_owner_degrades_every_pool(cluster: Path) -> None:
    _write(cluster, "51-broken.yaml", "kind: MachineConfig\nmetadata: [\n")
    result = render_cluster(cluster, store=MemoryStore(), clock=_clock)
    assert result.errors and result.errors[0].startswith("manifests/51-broken.yaml:3:1: invalid YAML")
    assert all(p.errors and p.rendered is None for p in result.pools.values())


SELECTORS = [
    ("machineConfigSelector: {}", "SelectingAll", "empty-selects-all-refused"),
    ("machineConfigSelector:\n    matchLabels:\n      machineconfiguration.openshift.io/role: nothing",
     "no MachineConfigs found matching selector machineconfiguration.openshift.io/role=nothing", "matches-none"),
    ("nodeSelector: {}", "selects no MachineConfigs", "nil-selector"),
]


@pytest.mark.parametrize(("spec", "message"), [s[:2] for s in SELECTORS], ids=[s[2] for s in SELECTORS])
def test_pool_selector_problems(cluster: Path, spec: str, message: str) -> None:
    _write(cluster, "01-pool-edge.yaml", "apiVersion: machineconfiguration.openshift.io/v1\n"
           "kind: MachineConfigPool\nmetadata:\n  name: edge\nspec:\n  " + spec + "\n")
    result = render_cluster(cluster, store=MemoryStore(), clock=_clock)
    assert any(message in e for e in result.pools["edge"].errors), result.pools["edge"].errors
    assert result.pools["worker"].errors == ()


def test_kubelet_config_forbidden_field_fails_only_that_object(cluster: Path) -> None:
    """MCO: the KubeletConfig gets a Failure condition; its pool still renders (pkg/controller/kubelet-config)."""
    path = cluster / "manifests" / "80-kubelet-infra.yaml"
    path.write_text(path.read_text().replace("    maxPods: 110\n", "    maxPods: 110\n    clusterDNS: [1.2.3.4]\n"))
    store = MemoryStore()
    result = render_cluster(cluster, store=store, clock=_clock)
    assert [e.split(": ", 1)[0] for e in result.errors] == \
        ["manifests/80-kubelet-infra.yaml:13:17 $.spec.kubeletConfig.clusterDNS"]
    assert all(p.errors == () for p in result.pools.values())
    failure = store.get_pool("infra").condition("KubeletConfigFailure")
    assert failure is not None and failure.status == "True"
    assert store.get_pool("worker").condition("KubeletConfigFailure") is None


def test_template_undefined_value_names_the_template(cluster: Path) -> None:
    chrony = cluster / "templates" / "master" / "00-master" / "files" / "chrony.yaml"
    chrony.write_text(chrony.read_text().replace("{{ name }}", "{{ clusterName }}"))
    result = render_cluster(cluster, store=MemoryStore(), clock=_clock)
    errors = result.pools["master"].errors
    assert errors and errors[0].startswith("templates/master/00-master/files/chrony.yaml:5: template uses an "
                                           "undefined value: 'clusterName' is undefined")
    assert result.pools["worker"].errors == ()


def test_unusable_cluster_directory(tmp_path: Path) -> None:
    with pytest.raises(ClusterDirectoryMissing) as caught:
        render_cluster(tmp_path, store=MemoryStore())
    assert str(caught.value) == "cluster.yaml: not found in the cluster directory"  # said once, with no path


def test_directory_store_holds_rendered_and_pools(cluster: Path, tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "store")
    result = render_cluster(cluster, store=store, clock=_clock)
    worker = result.pools["worker"].rendered
    assert worker is not None
    raw = (tmp_path / "store" / "rendered" / f"{worker.name}.json").read_bytes()
    assert RenderedConfig.from_json_bytes(raw) == worker
    record = json.loads((tmp_path / "store" / "pools" / "worker.json").read_text())
    assert record["current"] == worker.name
    assert record["history"] == [{"name": worker.name, "time": "2026-01-02T03:04:05Z"}]
    assert record["maxUnavailable"] == "25%"


def _mc(name: str, role: str, spec: str) -> str:
    return BAD_MC.replace("50-worker-bad", name).replace("role: worker", f"role: {role}").format(spec=spec)


MORE = [
    ("50-worker-rt.yaml", _mc("50-worker-rt", "worker", "  kernelType: realtime\n  extensions: [kernel-devel]\n"),
     "installing kernel-devel extension is not supported with kernelType: realtime", "kernel-devel-with-realtime"),
    ("50-worker-v36.yaml", _mc("50-worker-v36", "worker", "  config:\n    ignition:\n      version: 3.6.0\n"
                               "    storage:\n      files:\n        - path: /etc/x\n          mode: 0644\n"
                               "          contents:\n            source: data:,x\n"
                               "    passwd:\n      users:\n        - name: core\n          shouldExist: true\n"),
     "", "36-translates-down"),
    ("50-worker-v2.yaml", _mc("50-worker-v2", "worker", "  config:\n    ignition:\n      version: 2.2.0\n"),
     "", "spec-2-converted"),
    ("50-worker-v2fs.yaml", _mc("50-worker-v2fs", "worker", "  config:\n    ignition:\n      version: 2.2.0\n"
                                "    storage:\n      files:\n        - filesystem: data\n          path: /etc/x\n"),
     'manifests/50-worker-v2fs.yaml:13:23 $.spec.config.storage.files.0.filesystem: parsing Ignition spec v2 '
     'failed: Config defined filesystem "data" but no mapping was defined', "spec-2-filesystem-not-root"),
    ("50-worker-v2user.yaml", _mc("50-worker-v2user", "worker", "  config:\n    ignition:\n      version: 2.1.0\n"
                                  "    passwd:\n      users:\n        - name: admin\n"),
     "$.spec.config.passwd.users.0.name: parsing Ignition spec v2 failed: unexpected user with name: admin. "
     "Only core user is supported", "spec-2-user-not-core"),
    ("50-worker-v23.yaml", _mc("50-worker-v23", "worker", "  config:\n    ignition:\n      version: 2.3.0\n"),
     "unknown version '2.3.0'. Supported spec versions: 2.0, 2.1, 2.2, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6",
     "spec-2.3-unknown"),
    ("50-worker-novers.yaml", _mc("50-worker-novers", "worker", "  config:\n    storage: {}\n"),
     "parsing Ignition config failed: invalid version", "missing-version"),
]


@pytest.mark.parametrize(("name", "text", "message"), [m[:3] for m in MORE], ids=[m[3] for m in MORE])
def test_more_worker_inputs(cluster: Path, name: str, text: str, message: str) -> None:
    _write(cluster, name, text)
    result = render_cluster(cluster, store=MemoryStore(), clock=_clock)
    errors = result.pools["worker"].errors
    if not message:
        assert errors == (), errors
    else:
        assert any(message in e for e in errors), errors


def test_extension_allow_list_is_configurable(cluster: Path) -> None:
    _write(cluster, "50-worker-ext.yaml", _mc("50-worker-ext", "worker",
                                              "  extensions: [wireguard-tools]\n  config:\n    ignition:\n"
                                              "      version: 3.5.0\n"))
    assert render_cluster(cluster, store=MemoryStore()).pools["worker"].errors
    text = (cluster / "cluster.yaml").read_text()
    (cluster / "cluster.yaml").write_text(text + "extensionsAllowList: [usbguard, wireguard-tools]\n")
    assert render_cluster(cluster, store=MemoryStore()).pools["worker"].errors == ()


def test_disk_change_is_not_reconcilable_and_names_the_culprit(cluster: Path) -> None:
    store = MemoryStore()
    render_cluster(cluster, store=store, clock=_clock)
    _write(cluster, "60-worker-disk.yaml", _mc("60-worker-disk", "worker",
                                               "  config:\n    ignition:\n      version: 3.5.0\n    storage:\n"
                                               "      disks:\n        - device: /dev/vdb\n          wipeTable: true\n"))
    result = render_cluster(cluster, store=store, clock=_clock)
    errors = result.pools["worker"].errors
    assert len(errors) == 1 and errors[0].startswith("manifests/60-worker-disk.yaml:9:5 $.spec.config: "
                                                     'reconciliation failed between current config "rendered-worker-')
    assert errors[0].endswith('and base config "60-worker-disk": ignition disks section contains changes')
    # the MachineConfiguration override lets it render (for new machines)
    mcfg = cluster / "manifests" / "90-machineconfiguration.yaml"
    mcfg.write_text(mcfg.read_text() + "  irreconcilableValidationOverrides:\n    storage: [Disks]\n")
    assert render_cluster(cluster, store=store, clock=_clock).pools["worker"].errors == ()


def test_os_image_override_is_annotated(cluster: Path) -> None:
    _write(cluster, "70-worker-os.yaml", _mc("70-worker-os", "worker", "  osImageURL: quay.io/lab/custom-os:41\n"))
    rendered = render_cluster(cluster, store=MemoryStore()).pools["worker"].rendered
    assert rendered is not None and rendered.spec.os_image_url == "quay.io/lab/custom-os:41"
    assert rendered.annotations["machineconfiguration.openshift.io/os-image-url-overridden"] == "true"
    assert rendered.provenance["osImageURL"] == ("70-worker-os (manifests/70-worker-os.yaml:8); overrode "
                                                 "01-worker-kubelet (cluster.yaml:osImageURL), 01-worker-container-"
                                                 "runtime (cluster.yaml:osImageURL), 00-worker (cluster.yaml:osImageURL)")


# MCO: template MachineConfigs carry the cluster's OS image (pkg/controller/template/render.go
# generateMachineConfigForName sets `Spec.OSImageURL = GetDefaultBaseImageContainer(...)`) and MergeMachineConfigs
# (pkg/controller/common/helpers.go) keeps the last non-empty osImageURL of all of them, generated or not. So an
# override sorting before the last template of its role (00-worker < 00-worker-os < 01-worker-kubelet) is undone by
# it, in a worker pool; a custom pool merges every worker MachineConfig first, so there it holds.
OS_ORDER = [
    ("00-worker-os", "worker", "worker", False, "before-the-templates-undone"),
    ("01-worker-a-os", "worker", "worker", False, "between-the-templates-undone"),
    ("01-worker-kubelet-os", "worker", "worker", True, "after-the-last-template-holds"),
    ("00-infra-os", "infra", "infra", True, "custom-role-after-every-worker-template-holds"),
]


@pytest.mark.parametrize(("name", "role", "pool", "overrides"), [o[:4] for o in OS_ORDER], ids=[o[4] for o in OS_ORDER])
def test_os_image_override_against_the_templates(cluster: Path, name: str, role: str, pool: str,
                                                 overrides: bool) -> None:
    default = render_cluster(cluster, store=MemoryStore()).pools[pool].rendered
    _write(cluster, f"{name}.yaml", _mc(name, role, "  osImageURL: quay.io/lab/custom-os:41\n"))
    rendered = render_cluster(cluster, store=MemoryStore()).pools[pool].rendered
    assert default is not None and rendered is not None
    if overrides:
        assert rendered.spec.os_image_url == "quay.io/lab/custom-os:41"
        assert rendered.annotations["machineconfiguration.openshift.io/os-image-url-overridden"] == "true"
    else:
        assert rendered.spec.os_image_url == default.spec.os_image_url != "quay.io/lab/custom-os:41"
        assert "machineconfiguration.openshift.io/os-image-url-overridden" not in rendered.annotations
        assert rendered.name == default.name


def test_json_manifest_provenance_has_entry_lines(cluster: Path) -> None:
    doc = {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
           "metadata": {"name": "60-worker-json", "labels": {"machineconfiguration.openshift.io/role": "worker"}},
           "spec": {"config": {"ignition": {"version": "3.5.0"}, "storage": {"files": [
               {"path": "/etc/one", "contents": {"source": "data:,1"}},
               {"path": "/etc/two", "contents": {"source": "data:,2"}}]}}}}
    (cluster / "manifests" / "60-worker-json.json").write_text(json.dumps(doc, indent=2))
    rendered = render_cluster(cluster, store=MemoryStore()).pools["worker"].rendered
    assert rendered is not None
    text = (cluster / "manifests" / "60-worker-json.json").read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if '"/etc/two"' in t)
    assert rendered.provenance["storage.files[/etc/two]"] == f"60-worker-json (manifests/60-worker-json.json:{line})"


def test_butane_refusal_degrades_the_pool_of_its_role(cluster: Path) -> None:
    (cluster / "manifests" / "65-infra-dirs.bu").write_text(
        "variant: openshift\nversion: 4.19.0\nmetadata:\n  name: 65-infra-dirs\n  labels:\n"
        "    machineconfiguration.openshift.io/role: infra\nstorage:\n  directories:\n    - path: /var/lib/x\n")
    result = render_cluster(cluster, store=MemoryStore())
    errors = result.pools["infra"].errors
    assert errors and errors[0].startswith("manifests/65-infra-dirs.bu:"), errors
    assert "directories are not supported" in errors[0]
    assert result.pools["worker"].errors == () and result.pools["master"].errors == ()


@pytest.mark.parametrize(("value", "stored", "error"), [
    ("150%", "150%", None),  # MCO scales it to every node (intstr.GetScaledValueFromIntOrPercent)
    ("0%", "0%", None),  # at least one node
    ("7", 7, None),
    ('"3"', None, "maxUnavailable '3' is not an integer or a percentage"),  # intstr: a string must be a percentage
    ("-1", None, "maxUnavailable must not be negative"),
    ('"-5%"', None, "maxUnavailable '-5%' is not an integer or a percentage"),
    # Go's strconv.Atoi reads ASCII digits only: the MCO refuses fullwidth ones (Python's \\d and int() take them)
    ('"\uff15\uff10%"', None, "maxUnavailable '\uff15\uff10%' is not an integer or a percentage"),
])
def test_pool_max_unavailable(cluster: Path, value: str, stored: int | str | None, error: str | None) -> None:
    pools = cluster / "manifests" / "00-pools.yaml"
    pools.write_text(pools.read_text().replace("  maxUnavailable: 1\n", f"  maxUnavailable: {value}\n"))
    store = MemoryStore()
    infra = render_cluster(cluster, store=store, clock=_clock).pools["infra"]
    if error is None:
        assert infra.errors == () and store.get_pool("infra").max_unavailable == stored
    else:
        assert infra.errors and error in infra.errors[0]


def test_broken_custom_pool_manifest_degrades_that_pool_only(cluster: Path) -> None:
    store = MemoryStore()
    before = render_cluster(cluster, store=store, clock=_clock)
    pools = cluster / "manifests" / "00-pools.yaml"
    pools.write_text(pools.read_text().replace("  maxUnavailable: 1\n", "  maxUnavailable: lots\n"))
    result = render_cluster(cluster, store=store, clock=_clock)
    infra, master = result.pools["infra"], result.pools["master"]
    assert infra.errors and "maxUnavailable 'lots' is not an integer or a percentage" in infra.errors[0]
    assert master.errors and result.pools["worker"].errors == ()
    assert infra.rendered == before.pools["infra"].rendered
    assert store.get_pool("infra").condition("RenderDegraded").status == "True"  # type: ignore[union-attr]


def test_cluster_level_problems_are_reported_without_degrading_pools(cluster: Path) -> None:
    mcfg = cluster / "manifests" / "90-machineconfiguration.yaml"
    mcfg.write_text(mcfg.read_text().replace("type: Restart\n            restart:\n              serviceName: chronyd",
                                             "type: Restart\n            restart:\n              serviceName: chronyd!"))
    _write(cluster, "81-kubelet-none.yaml", "apiVersion: machineconfiguration.openshift.io/v1\nkind: KubeletConfig\n"
           "metadata:\n  name: nowhere\nspec:\n  machineConfigPoolSelector:\n    matchLabels:\n      x: y\n")
    result = render_cluster(cluster, store=MemoryStore())
    assert all(p.errors == () for p in result.pools.values())
    assert not result.ok and result.errors[0].startswith("manifests/90-machineconfiguration.yaml:")
    assert any("KubeletConfig nowhere selects no MachineConfigPool" in w for w in result.warnings)


@pytest.mark.parametrize(("line", "message"), [
    ("          mode: 644\n", "invalid mode 01204 for /etc/x, cannot exceed 0777 (the decimal 644 would be reasonable "
                             "in octal: write 0644)"),
    ("          overwrite: no\n          contents: {source: 'data:,x'}\n          user: {name: on}\n",
     "(YAML 1.1 read 'on' as the boolean true; quote it)"),
], ids=["decimal-mode", "yaml-on-as-user-name"])
def test_ignition_errors_explain_yaml_readings(cluster: Path, line: str, message: str) -> None:
    _write(cluster, "50-worker-bad.yaml", _mc("50-worker-bad", "worker", "  config:\n    ignition:\n"
                                              "      version: 3.5.0\n    storage:\n      files:\n"
                                              "        - path: /etc/x\n" + line))
    errors = render_cluster(cluster, store=MemoryStore()).pools["worker"].errors
    assert any(message in e for e in errors), errors


def test_unlabelled_machine_config_picked_by_notin_selector_is_refused(cluster: Path) -> None:
    _write(cluster, "01-pool-edge.yaml", "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfigPool\n"
           "metadata:\n  name: edge\nspec:\n  machineConfigSelector:\n    matchExpressions:\n"
           "      - {key: machineconfiguration.openshift.io/role, operator: NotIn, values: [master, infra]}\n")
    _write(cluster, "50-unlabelled.yaml", "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\n"
           "metadata:\n  name: 50-unlabelled\nspec:\n  kernelArguments: [quiet]\n")
    result = render_cluster(cluster, store=MemoryStore())
    assert result.pools["edge"].errors == ("manifests/50-unlabelled.yaml:1 $.metadata.labels: cannot find label in "
                                           "MachineConfig 50-unlabelled",)
    assert result.pools["worker"].errors == ()
