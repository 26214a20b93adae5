"""KubeletConfig and ContainerRuntimeConfig settings as the MCO writes or refuses them (MCO
pkg/controller/kubelet-config/helpers.go: validateUserKubeletConfig, generateKubeletIgnFiles;
pkg/controller/container-runtime-config/helpers.go: validateUserContainerRuntimeConfig,
createCRIODropinFiles; TLS profiles from openshift/api config/v1 TLSProfiles with library-go's
OpenSSL -> IANA cipher names, as MCO GetSecurityProfileCiphers maps them)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleet.store import MemoryStore
from ignition.dataurl import decode_data_url
from renderer.render import RenderResult, render_cluster

KC = """\
apiVersion: machineconfiguration.openshift.io/v1
kind: KubeletConfig
metadata:
  name: test-kubelet
spec:
  machineConfigPoolSelector:
    matchLabels:
      pools.operator.machineconfiguration.openshift.io/{pool}: ""
{spec}"""
CRC = """\
apiVersion: machineconfiguration.openshift.io/v1
kind: ContainerRuntimeConfig
metadata:
  name: test-ctrcfg
spec:
  machineConfigPoolSelector:
    matchLabels:
      pools.operator.machineconfiguration.openshift.io/{pool}: ""
  containerRuntimeConfig:
{settings}"""


def _render(cluster: Path, name: str, text: str) -> RenderResult:
    (cluster / "manifests" / "80-crio-worker.yaml").unlink()  # the example's own ctrcfg for worker
    (cluster / "manifests" / name).write_text(text)
    return render_cluster(cluster, store=MemoryStore())


def _file(result: RenderResult, pool: str, path: str) -> bytes | None:
    rendered = result.pools[pool].rendered
    assert rendered is not None, result.pools[pool].errors
    for f in rendered.spec.config.get("storage", {}).get("files", []):
        if f["path"] == path:
            return decode_data_url(f["contents"]["source"])
    return None


def _problems(result: RenderResult) -> list[str]:
    return [*result.errors, *result.warnings, *(e for p in result.pools.values() for e in (*p.errors, *p.warnings))]


INTERMEDIATE = ["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"]
OLD = [*INTERMEDIATE, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
       "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
       "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
       "TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_256_GCM_SHA384", "TLS_RSA_WITH_AES_128_CBC_SHA256",
       "TLS_RSA_WITH_AES_128_CBC_SHA", "TLS_RSA_WITH_AES_256_CBC_SHA", "TLS_RSA_WITH_3DES_EDE_CBC_SHA"]
TLS = [
    ("old", "  tlsSecurityProfile:\n    type: Old\n    old: {}\n", "VersionTLS10", OLD),
    ("intermediate", "  tlsSecurityProfile:\n    type: Intermediate\n    intermediate: {}\n", "VersionTLS12",
     INTERMEDIATE),
    ("modern-tls13-ciphers-not-configurable", "  tlsSecurityProfile:\n    type: Modern\n    modern: {}\n",
     "VersionTLS13", []),
    ("custom", "  tlsSecurityProfile:\n    type: Custom\n    custom:\n      ciphers: [ECDHE-RSA-AES128-GCM-SHA256, "
     "ECDHE-ECDSA-AES256-GCM-SHA384, DHE-RSA-AES128-GCM-SHA256]\n      minTLSVersion: VersionTLS11\n",
     "VersionTLS11", ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"]),
    ("custom-without-spec-is-intermediate", "  tlsSecurityProfile:\n    type: Custom\n", "VersionTLS12",
     INTERMEDIATE),
    # GetSecurityProfileCiphers returns the custom spec's empty minTLSVersion; KubeletConfiguration.TLSMinVersion
    # is `omitempty`, so EncodeKubeletConfig writes no tlsMinVersion at all
    ("custom-without-min-version-writes-none", "  tlsSecurityProfile:\n    type: Custom\n    custom:\n"
     "      ciphers: [ECDHE-RSA-AES128-GCM-SHA256]\n", None, ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]),
]


@pytest.mark.parametrize(("spec", "min_version", "ciphers"), [t[1:] for t in TLS], ids=[t[0] for t in TLS])
def test_tls_security_profile_reaches_kubelet_conf(cluster: Path, spec: str, min_version: str | None,
                                                   ciphers: list[str]) -> None:
    result = _render(cluster, "81-kc.yaml", KC.format(pool="worker", spec=spec))
    conf = yaml.safe_load(_file(result, "worker", "/etc/kubernetes/kubelet.conf") or b"{}")
    assert conf.get("tlsMinVersion") == min_version
    assert conf.get("tlsCipherSuites", []) == ciphers


# (id, pool, spec, expected problem fragment or "" for accepted, kubelet.conf expectations)
KUBELET = [
    ("static-pod-path-empty-worker", "worker", "  kubeletConfig:\n    staticPodPath: \"\"\n", "", {}),
    ("static-pod-path-empty-custom", "infra", "  kubeletConfig:\n    staticPodPath: \"\"\n", "", {}),
    ("static-pod-path-empty-master", "master", "  kubeletConfig:\n    staticPodPath: \"\"\n",
     "$.spec.kubeletConfig.staticPodPath: KubeletConfiguration: staticPodPath is not allowed to be set on the "
     "control plane pool master", {}),
    ("static-pod-path-set-worker", "worker", "  kubeletConfig:\n    staticPodPath: /etc/manifests\n",
     "KubeletConfiguration: staticPodPath is not allowed to be set, but contains: /etc/manifests", {}),
    ("cgroup-driver-empty-allowed", "worker", "  kubeletConfig:\n    cgroupDriver: \"\"\n    maxPods: 300\n", "",
     {"maxPods": 300}),
    ("cgroup-driver-set", "worker", "  kubeletConfig:\n    cgroupDriver: cgroupfs\n",
     "KubeletConfiguration: cgroupDriver is not allowed to be set, but contains: cgroupfs", {}),
    ("fail-swap-on", "worker", "  kubeletConfig:\n    failSwapOn: false\n",
     "KubeletConfiguration: failSwapOn is not allowed to be set, but contains: false", {}),
    ("system-reserved-to-env-file", "worker",
     "  kubeletConfig:\n    systemReserved:\n      memory: 3Gi\n      cpu: 1000m\n      pid: \"1000\"\n", "",
     {"systemReserved": {"pid": "1000", "memory": "1Gi"}}),  # the template's memory stays
    ("unknown-kubelet-field-named", "worker", "  kubeletConfig:\n    maxPodz: 300\n",
     "$.spec.kubeletConfig.maxPodz: unknown field", {}),
    ("unknown-tls-type", "worker", "  tlsSecurityProfile:\n    type: Ancient\n",
     "$.spec.tlsSecurityProfile.type: Unsupported value: \"Ancient\"", {}),
    ("string-for-an-int32", "worker", "  kubeletConfig:\n    maxPods: lots\n",
     "KubeletConfig could not be unmarshalled, err: json: cannot unmarshal string into Go struct field "
     "KubeletConfiguration.maxPods of type int32", {}),
    # Kubernetes reads YAML through go-yaml v2 (sigs.k8s.io/yaml), which keeps an unquoted date a string
    ("yaml-date-for-an-int32-is-a-string", "worker", "  kubeletConfig:\n    maxPods: 2026-01-02\n",
     "KubeletConfig could not be unmarshalled, err: json: cannot unmarshal string into Go struct field "
     "KubeletConfiguration.maxPods of type int32", {}),
    ("list-for-a-bool", "worker", "  kubeletConfig:\n    serializeImagePulls: [true]\n",
     "KubeletConfig could not be unmarshalled, err: json: cannot unmarshal array into Go struct field "
     "KubeletConfiguration.serializeImagePulls of type bool", {}),
    # KubeletConfiguration.systemReserved (and the other reservation and eviction maps) is map[string]string:
    # DecodeKubeletConfig (encoding/json) refuses a number there, naming the field
    ("number-in-a-string-map", "worker", "  kubeletConfig:\n    systemReserved:\n      cpu: 1\n",
     "KubeletConfig could not be unmarshalled, err: json: cannot unmarshal number into Go struct field "
     "KubeletConfiguration.systemReserved of type string", {}),
    ("list-for-a-string-map", "worker", "  kubeletConfig:\n    evictionHard: [memory.available]\n",
     "json: cannot unmarshal array into Go struct field KubeletConfiguration.evictionHard of type "
     "map[string]string", {}),
    ("strings-in-a-string-map", "worker", "  kubeletConfig:\n    evictionHard:\n      memory.available: 5%\n",
     "", {"evictionHard": {"memory.available": "5%"}}),
    # helpers.go validateUserKubeletConfig: `LogLevel < 1 || LogLevel > 10` is refused, 0 included
    ("log-level-zero", "worker", "  logLevel: 0\n", "$.spec.logLevel: KubeletConfig's LogLevel is not valid [1,10]: 0",
     {}),
    ("log-level-eleven", "worker", "  logLevel: 11\n", "KubeletConfig's LogLevel is not valid [1,10]: 11", {}),
    ("log-level-one", "worker", "  logLevel: 1\n  kubeletConfig:\n    maxPods: 200\n", "", {"maxPods": 200}),
    ("log-level-ten", "worker", "  logLevel: 10\n", "", {}),
]


@pytest.mark.parametrize(("pool", "spec", "problem", "conf"), [k[1:] for k in KUBELET], ids=[k[0] for k in KUBELET])
def test_kubelet_config_fields(cluster: Path, pool: str, spec: str, problem: str, conf: dict[str, Any]) -> None:
    result = _render(cluster, "81-kc.yaml", KC.format(pool=pool, spec=spec))
    problems = _problems(result)
    if problem:
        assert any(problem in p for p in problems), problems
    else:
        assert not any("81-kc.yaml" in p for p in problems), problems
    if conf:
        written = yaml.safe_load(_file(result, pool, "/etc/kubernetes/kubelet.conf") or b"{}")
        for key, value in conf.items():
            if isinstance(value, dict):  # merged into the template's map
                assert {k: written[key].get(k) for k in value} == value
            else:
                assert written[key] == value


# helpers.go createNewKubeletDynamicSystemReservedIgnition: a reservation that is absent or "" is the default
# (1Gi, 500m, 1Gi; MCO PR #3439, OCPBUGS-4101), and any user reservation turns auto-sizing off
SIZING = [
    ("memory-and-cpu", "      memory: 3Gi\n      cpu: 1000m\n", b"NODE_SIZING_ENABLED=false\n"
     b"SYSTEM_RESERVED_MEMORY=3Gi\nSYSTEM_RESERVED_CPU=1000m\nSYSTEM_RESERVED_ES=1Gi\n"),
    ("empty-values-are-the-defaults", "      memory: \"\"\n      cpu: 1500m\n      ephemeral-storage: \"\"\n",
     b"NODE_SIZING_ENABLED=false\nSYSTEM_RESERVED_MEMORY=1Gi\nSYSTEM_RESERVED_CPU=1500m\nSYSTEM_RESERVED_ES=1Gi\n"),
]


@pytest.mark.parametrize(("reserved", "env"), [c[1:] for c in SIZING], ids=[c[0] for c in SIZING])
def test_system_reserved_goes_to_the_node_sizing_file(cluster: Path, reserved: str, env: bytes) -> None:
    result = _render(cluster, "81-kc.yaml", KC.format(pool="worker", spec=(
        "  kubeletConfig:\n    systemReserved:\n" + reserved)))
    assert _file(result, "worker", "/etc/node-sizing-enabled.env") == env


# helpers.go generateKubeletIgnFiles: after the merge, `if specKubeletConfig.SystemReservedCgroup == ""` clears the
# template's systemReservedCgroup -- whenever spec.kubeletConfig is given and does not set one (decoding cannot
# tell unset from ""); without spec.kubeletConfig there is no merge and the template's stays
CGROUP = [
    ("no-kubelet-config-keeps-it", "  logLevel: 2\n", "/system.slice"),
    ("kubelet-config-without-it-clears-it", "  kubeletConfig:\n    maxPods: 300\n", None),
    ("empty-clears-it", "  kubeletConfig:\n    systemReservedCgroup: \"\"\n", None),
    ("set-keeps-it", "  kubeletConfig:\n    systemReservedCgroup: /system.slice\n    systemCgroups: /system.slice\n",
     "/system.slice"),
    ("reserved-cpus-clear-it", "  kubeletConfig:\n    systemReservedCgroup: /system.slice\n"
     "    reservedSystemCPUs: 0-1\n", None),
]


@pytest.mark.parametrize(("spec", "want"), [c[1:] for c in CGROUP], ids=[c[0] for c in CGROUP])
def test_system_reserved_cgroup_of_the_template(cluster: Path, spec: str, want: str | None) -> None:
    template = cluster / "templates" / "worker" / "01-worker-kubelet" / "files" / "kubelet-conf.yaml"
    text = template.read_text()
    template.write_text(text.replace("    staticPodPath:", "    systemReservedCgroup: /system.slice\n"
                                     "    staticPodPath:", 1))
    result = _render(cluster, "81-kc.yaml", KC.format(pool="worker", spec=spec))
    assert not any("81-kc.yaml" in p for p in _problems(result)), _problems(result)
    conf = yaml.safe_load(_file(result, "worker", "/etc/kubernetes/kubelet.conf") or b"{}")
    assert conf.get("systemReservedCgroup") == want


def _paths(result: RenderResult, pool: str) -> list[str]:
    rendered = result.pools[pool].rendered
    assert rendered is not None, result.pools[pool].errors
    return [f["path"] for f in rendered.spec.config["storage"]["files"]]


# The generated MachineConfig's files are in the order the controllers append them, and the rendered config
# keeps that order for paths no template writes (Ignition merge appends a child's new entries in order):
# kubelet_config_controller.go syncKubeletConfig appends the node-sizing env, the logging drop-in, kubelet.conf;
# container_runtime_config_controller.go syncContainerRuntimeConfig appends storage.conf, then
# helpers.go createCRIODropinFiles's logLevel, pidsLimit, logSizeMax, defaultRuntime drop-ins.
FILE_ORDER = [
    ("kubelet", "81-kc.yaml", KC.format(pool="worker", spec="  logLevel: 4\n  autoSizingReserved: true\n"),
     ["/etc/node-sizing-enabled.env", "/etc/systemd/system/kubelet.service.d/20-logging.conf"]),
    ("crio", "81-crc.yaml", CRC.format(pool="worker", settings="    defaultRuntime: crun\n    logSizeMax: 16Mi\n"
                                       "    pidsLimit: 4096\n    logLevel: info\n    overlaySize: 10G\n"),
     ["/etc/containers/storage.conf", "/etc/crio/crio.conf.d/01-ctrcfg-logLevel",
      "/etc/crio/crio.conf.d/01-ctrcfg-pidsLimit", "/etc/crio/crio.conf.d/01-ctrcfg-logSizeMax",
      "/etc/crio/crio.conf.d/01-ctrcfg-defaultRuntime"]),
]


@pytest.mark.parametrize(("name", "text", "order"), [c[1:] for c in FILE_ORDER], ids=[c[0] for c in FILE_ORDER])
def test_generated_files_keep_the_controllers_order(cluster: Path, name: str, text: str, order: list[str]) -> None:
    paths = _paths(_render(cluster, name, text), "worker")
    assert [p for p in paths if p in order] == order


# (id, settings, expected problem or "", {drop-in file: expected body})
CRIO = [
    ("log-size-max-unlimited", "    logSizeMax: \"-1\"\n", "", {"01-ctrcfg-logSizeMax": "log_size_max = -1"}),
    ("log-size-max-unlimited-int", "    logSizeMax: -1\n", "", {"01-ctrcfg-logSizeMax": "log_size_max = -1"}),
    ("log-size-max-binary", "    logSizeMax: 1.5Mi\n", "", {"01-ctrcfg-logSizeMax": "log_size_max = 1572864"}),
    ("log-size-max-just-above", "    logSizeMax: \"8193\"\n", "", {"01-ctrcfg-logSizeMax": "log_size_max = 8193"}),
    ("log-size-max-zero-writes-nothing", "    logSizeMax: \"0\"\n", "", {"01-ctrcfg-logSizeMax": None}),
    ("log-size-max-8k", "    logSizeMax: 8k\n", 'invalid LogSizeMax "8k", cannot be less than 8kB', {}),
    ("log-size-max-8Ki", "    logSizeMax: 8Ki\n", 'invalid LogSizeMax "8Ki", cannot be less than 8kB', {}),
    ("log-size-max-not-a-quantity", "    logSizeMax: lots\n", "$.spec.containerRuntimeConfig.logSizeMax: "
     "quantities must match the regular expression", {}),
    ("overlay-size-negative", "    overlaySize: -1G\n", 'invalid overlaySize "-1G", cannot be less than 0', {}),
    ("pids-limit-zero-written", "    pidsLimit: 0\n", "", {"01-ctrcfg-pidsLimit": "pids_limit = 0"}),
    ("pids-limit-negative", "    pidsLimit: -1\n", "invalid PidsLimit -1", {}),
    ("additional-layer-stores-named", "    additionalLayerStores:\n    - path: /var/lib/stargz-store\n",
     "$.spec.containerRuntimeConfig.additionalLayerStores: ", {}),
    ("unknown-field-named", "    logSize: 10Mi\n", "$.spec.containerRuntimeConfig.logSize: unknown field", {}),
]


@pytest.mark.parametrize(("settings", "problem", "dropins"), [c[1:] for c in CRIO], ids=[c[0] for c in CRIO])
def test_container_runtime_config_fields(cluster: Path, settings: str, problem: str,
                                         dropins: dict[str, str | None]) -> None:
    result = _render(cluster, "81-crc.yaml", CRC.format(pool="worker", settings=settings))
    problems = _problems(result)
    if problem:
        assert any(problem in p for p in problems), problems
    else:
        assert not any("81-crc.yaml" in p for p in problems), problems
    for name, body in dropins.items():
        data = _file(result, "worker", f"/etc/crio/crio.conf.d/{name}")
        if body is None:
            assert data is None
        else:
            assert data is not None and body in data.decode()


# The drop-ins as the MCO writes them (pkg/controller/container-runtime-config/helpers.go createCRIODropinFiles:
# BurntSushi/toml's encoder over `Crio { Runtime { ... } }`); the OpenShift 4.22 documentation, "Configuring
# MCO-related custom resources", shows /etc/crio/crio.conf.d/01-ctrcfg-defaultRuntime on a node as exactly
# these three lines for defaultRuntime: runc.
CRIO_GOLDEN = {
    "01-ctrcfg-defaultRuntime": b'[crio]\n  [crio.runtime]\n    default_runtime = "runc"\n',
    "01-ctrcfg-logLevel": b'[crio]\n  [crio.runtime]\n    log_level = "debug"\n',
    "01-ctrcfg-pidsLimit": b"[crio]\n  [crio.runtime]\n    pids_limit = 2048\n",
    "01-ctrcfg-logSizeMax": b"[crio]\n  [crio.runtime]\n    log_size_max = 10485760\n",
}


def test_crio_dropins_are_the_mcos_bytes(cluster: Path) -> None:
    result = _render(cluster, "81-crc.yaml", CRC.format(pool="worker", settings=(
        "    defaultRuntime: runc\n    logLevel: debug\n    pidsLimit: 2048\n    logSizeMax: 10Mi\n")))
    written = {name: _file(result, "worker", f"/etc/crio/crio.conf.d/{name}") for name in CRIO_GOLDEN}
    assert written == CRIO_GOLDEN
    for body in written.values():  # and CRI-O reads them as [crio.runtime] settings
        assert set(tomllib.loads((body or b"").decode())["crio"]) == {"runtime"}


@pytest.mark.parametrize(("size", "want"), [("8G", "8G"), ("10Gi", "10Gi"), ("0", None),
                                            ("1.5Gi", "1536Mi"), ("1024Mi", "1Gi"), ("1000M", "1G")])
def test_overlay_size_is_storage_options_size(cluster: Path, size: str, want: str | None) -> None:
    # helpers.go updateStorageConfig sets tomlConfigStorage.Storage.Options.Size (`[storage.options] size`) to
    # OverlaySize.String(), the quantity's canonical form, and
    # syncContainerRuntimeConfig writes storage.conf only when overlaySize is set and not zero
    result = _render(cluster, "81-crc.yaml", CRC.format(pool="worker", settings=f'    overlaySize: "{size}"\n'))
    data = _file(result, "worker", "/etc/containers/storage.conf")
    if want is None:
        assert data is None
        return
    assert data is not None
    storage = tomllib.loads(data.decode())["storage"]
    assert storage["options"] == {"size": want}
    assert storage["driver"] == "overlay"


# kubelet-config/helpers.go getManagedKubeletConfigKey (container-runtime-config/helpers.go getManagedKeyCtrCfg):
# an object whose mc-name-suffix annotation is "" writes 99-<pool>-generated-<kind>, one whose annotation is N
# writes ...-N; one without it (the MCO sets it after the first sync) writes the plain name when it is alone in
# the pool, else ...-<largest suffix of the pool + 1>, refused past 9. Objects without the annotation are taken
# as created one after another in name order, after the annotated ones.
NAMES = [
    ("no-annotations", "kubelet", [("a", None), ("b", None), ("c", None)],
     ["99-worker-generated-kubelet", "99-worker-generated-kubelet-1", "99-worker-generated-kubelet-2"], ""),
    ("annotations-kept", "kubelet", [("a", "2"), ("b", "5")],
     ["99-worker-generated-kubelet-2", "99-worker-generated-kubelet-5"], ""),
    ("new-one-after-the-largest", "kubelet", [("a", None), ("b", "3")],
     ["99-worker-generated-kubelet-3", "99-worker-generated-kubelet-4"], ""),
    ("empty-annotation-is-the-plain-name", "kubelet", [("z", ""), ("a", None)],
     ["99-worker-generated-kubelet", "99-worker-generated-kubelet-1"], ""),
    ("past-nine-refused", "kubelet", [("a", "9"), ("b", None)], ["99-worker-generated-kubelet-9"],
     "max number of supported kubelet config (10) has been reached"),
    ("containerruntime-annotation", "containerruntime", [("a", "4")], ["99-worker-generated-containerruntime-4"], ""),
    ("containerruntime-past-nine", "containerruntime", [("a", "9"), ("b", None)],
     ["99-worker-generated-containerruntime-9"], "max number of supported ctrcfgs (10) has been reached"),
]


@pytest.mark.parametrize(("kind", "objects", "names", "problem"), [c[1:] for c in NAMES], ids=[c[0] for c in NAMES])
def test_generated_machine_config_names(cluster: Path, kind: str, objects: list[tuple[str, str | None]],
                                        names: list[str], problem: str) -> None:
    (cluster / "manifests" / "80-crio-worker.yaml").unlink()
    for obj, suffix in objects:
        meta = "" if suffix is None else \
            f'  annotations:\n    machineconfiguration.openshift.io/mc-name-suffix: "{suffix}"\n'
        if kind == "kubelet":
            text = KC.format(pool="worker", spec="  logLevel: 2\n")
        else:
            text = CRC.format(pool="worker", settings="    logLevel: info\n")
        text = text.replace("  name: test-kubelet\n", f"  name: {obj}\n{meta}")
        text = text.replace("  name: test-ctrcfg\n", f"  name: {obj}\n{meta}")
        (cluster / "manifests" / f"81-{obj}.yaml").write_text(text)
    result = render_cluster(cluster, store=MemoryStore())
    rendered = result.pools["worker"].rendered
    assert rendered is not None
    assert [s for s in rendered.sources if f"-generated-{kind}" in s] == names
    problems = _problems(result)
    assert any(problem in p for p in problems) if problem else not problems, problems
