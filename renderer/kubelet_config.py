"""One KubeletConfig for one pool: what the MCO refuses in it, and the files it writes.

MCO `pkg/controller/kubelet-config/helpers.go`:
- `validateUserKubeletConfig`: `logLevel` outside 1-10 (`KubeletConfig's LogLevel is not valid [1,10]`); a
  KubeletConfiguration field that must stay the platform's is refused when
  it holds a non-zero value (`cgroupDriver`, `clusterDNS`, `clusterDomain`, `featureGates`,
  `staticPodPath`, `failSwapOn` (any value), `memorySwap.swapBehavior`), in the MCO's words
  (`KubeletConfiguration: X is not allowed to be set, but contains: V`); `systemReserved` with
  `autoSizingReserved: true`; `systemReservedCgroup` different from `systemCgroups`. `staticPodPath`, even
  empty, is refused on a control-plane pool (`validateStaticPodPathGivenPool`, test
  TestStaticPodPathPoolValidation); an empty one is accepted on worker and custom pools.
- `generateKubeletIgnFiles`: the pool's template kubelet config merged with the user's as
  `mergo.Merge(WithOverride)` does (maps merge, a zero value -- false, 0, "", empty list or map -- does not
  override, except `protectKernelDefaults: false`, which the MCO detects by substring, and
  `systemReservedCgroup`, which the template keeps only when the user's `kubeletConfig` sets it: the MCO
  clears it whenever the decoded value is empty, and decoding cannot tell unset from ""); `systemReserved`'s
  memory, cpu and ephemeral-storage move to `/etc/node-sizing-enabled.env` (an empty value there is the
  default, `createNewKubeletDynamicSystemReservedIgnition`); `reservedSystemCPUs` clears
  `systemReservedCgroup` and leaves `enforceNodeAllocatable: [pods]`; `tlsSecurityProfile` sets
  `tlsMinVersion` and `tlsCipherSuites` (renderer/tls_profiles.py), an empty one being left out (omitempty).
- `kubelet_config_controller.go: syncKubeletConfig` writes the generated files in the order
  node-sizing env, logging drop-in, kubelet.conf; the rendered config keeps that order for new paths.
A KubeletConfiguration key that is not a v1beta1 field is named in a warning: the MCO's decoder drops it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from ignition.decode import json_kind
from renderer.model import KubeletConfig, raw_spec
from renderer.problems import Problem
from renderer.tls_profiles import profile_problems, profile_settings

KUBELET_CONF = "/etc/kubernetes/kubelet.conf"
LOGGING_DROPIN = "/etc/systemd/system/kubelet.service.d/20-logging.conf"
NODE_SIZING = "/etc/node-sizing-enabled.env"
CONTROL_PLANE_POOLS = ("master", "arbiter")
LOG_LEVELS = range(1, 11)  # validateUserKubeletConfig: [1,10]
SPEC_KEYS = ("machineConfigPoolSelector", "kubeletConfig", "logLevel", "autoSizingReserved", "tlsSecurityProfile")
_FORBIDDEN = ("cgroupDriver", "clusterDNS", "clusterDomain", "featureGates", "staticPodPath")
_SIZING = (("memory", "SYSTEM_RESERVED_MEMORY", "1Gi"), ("cpu", "SYSTEM_RESERVED_CPU", "500m"),
           ("ephemeral-storage", "SYSTEM_RESERVED_ES", "1Gi"))
# k8s.io/kubelet/config/v1beta1 KubeletConfiguration's JSON field names
FIELDS = frozenset("""apiVersion kind enableServer staticPodPath podLogsDir syncFrequency fileCheckFrequency
httpCheckFrequency staticPodURL staticPodURLHeader address port readOnlyPort tlsCertFile tlsPrivateKeyFile
tlsCipherSuites tlsMinVersion rotateCertificates serverTLSBootstrap authentication authorization registryPullQPS
registryBurst imagePullCredentialsVerificationPolicy preloadedImagesVerificationAllowlist eventRecordQPS
eventBurst enableDebuggingHandlers enableContentionProfiling healthzPort healthzBindAddress oomScoreAdj
clusterDomain clusterDNS streamingConnectionIdleTimeout nodeStatusUpdateFrequency nodeStatusReportFrequency
nodeLeaseDurationSeconds imageMinimumGCAge imageMaximumGCAge imageGCHighThresholdPercent
imageGCLowThresholdPercent volumeStatsAggPeriod kubeletCgroups systemCgroups cgroupRoot cgroupsPerQOS
cgroupDriver cpuManagerPolicy singleProcessOOMKill cpuManagerPolicyOptions cpuManagerReconcilePeriod
memoryManagerPolicy topologyManagerPolicy topologyManagerScope topologyManagerPolicyOptions qosReserved
runtimeRequestTimeout hairpinMode maxPods podCIDR podPidsLimit resolvConf runOnce cpuCFSQuota
cpuCFSQuotaPeriod nodeStatusMaxImages maxOpenFiles contentType kubeAPIQPS kubeAPIBurst serializeImagePulls
maxParallelImagePulls evictionHard evictionSoft evictionSoftGracePeriod evictionPressureTransitionPeriod
evictionMaxPodGracePeriod evictionMinimumReclaim mergeDefaultEvictionSettings podsPerCore
enableControllerAttachDetach protectKernelDefaults makeIPTablesUtilChains iptablesMasqueradeBit
iptablesDropBit featureGates failSwapOn memorySwap containerLogMaxSize containerLogMaxFiles
containerLogMaxWorkers containerLogMonitorInterval configMapAndSecretChangeDetectionStrategy systemReserved
kubeReserved reservedSystemCPUs showHiddenMetricsForVersion systemReservedCgroup kubeReservedCgroup
enforceNodeAllocatable allowedUnsafeSysctls volumePluginDir providerID kernelMemcgNotification logging
enableSystemLogHandler enableSystemLogQuery shutdownGracePeriod shutdownGracePeriodCriticalPods
shutdownGracePeriodByPodPriority crashLoopBackOff reservedMemory enableProfilingHandler
enableDebugFlagsHandler seccompDefault memoryThrottlingFactor registerWithTaints registerNode tracing
localStorageCapacityIsolation containerRuntimeEndpoint imageServiceEndpoint failCgroupV1 userNamespaces""".split())


_INT32 = ("maxPods", "podsPerCore", "kubeAPIQPS", "kubeAPIBurst", "eventRecordQPS", "eventBurst", "registryPullQPS",
          "registryBurst", "imageGCHighThresholdPercent", "imageGCLowThresholdPercent", "containerLogMaxFiles",
          "containerLogMaxWorkers", "nodeStatusMaxImages", "healthzPort", "port", "readOnlyPort", "oomScoreAdj",
          "iptablesMasqueradeBit", "iptablesDropBit", "maxParallelImagePulls", "nodeLeaseDurationSeconds")
_INT64 = ("podPidsLimit", "maxOpenFiles")
_BOOL = ("protectKernelDefaults", "serializeImagePulls", "cgroupsPerQOS", "enableControllerAttachDetach",
         "rotateCertificates", "serverTLSBootstrap", "makeIPTablesUtilChains", "failSwapOn", "seccompDefault",
         "enableServer", "kernelMemcgNotification", "localStorageCapacityIsolation", "registerNode",
         "enableDebuggingHandlers", "enableContentionProfiling", "enableSystemLogHandler", "enableSystemLogQuery",
         "enableProfilingHandler", "enableDebugFlagsHandler", "runOnce", "singleProcessOOMKill", "failCgroupV1")


_STRING_MAPS = ("systemReserved", "kubeReserved", "evictionHard", "evictionSoft", "evictionSoftGracePeriod",
                "evictionMinimumReclaim", "qosReserved")  # map[string]string


def _type_problem(key: str, value: Any) -> str | None:
    """encoding/json's refusal of a value of the wrong type for a numeric, boolean or map[string]string field
    (a map entry's error names the field, not the key), as the MCO's DecodeKubeletConfig reports it; None when
    Go would read it."""
    if value is None:
        return None
    if key in _STRING_MAPS:
        if not isinstance(value, Mapping):
            go = "map[string]string"
        else:
            value = next((v for v in value.values() if v is not None and not isinstance(v, str)), None)
            if value is None:
                return None
            go = "string"
    elif key in _INT32 or key in _INT64:
        go = "int32" if key in _INT32 else "int64"
        if isinstance(value, int) and not isinstance(value, bool):
            return None
    elif key in _BOOL:
        go = "bool"
        if isinstance(value, bool):
            return None
    else:
        return None
    return (f"KubeletConfig could not be unmarshalled, err: json: cannot unmarshal {json_kind(value)} into Go "
            f"struct field KubeletConfiguration.{key} of type {go}")


def _zero(value: Any) -> bool:
    return value is None or value is False or value == 0 and not isinstance(value, bool) or value in ("", [], {})


def _go(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + " ".join(map(str, value)) + "]"
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{_go(v)}" for k, v in sorted(value.items())) + "]"
    return str(value)


def kubelet_problems(kc: KubeletConfig, pool: str) -> list[Problem]:
    """Every problem of `kc` for `pool` (errors refuse it; warnings name what the MCO would drop)."""
    doc = kc.doc
    assert doc is not None
    out: list[Problem] = []
    user = kc.kubelet_config
    base = ("spec", "kubeletConfig")

    def error(path: tuple[str, ...], message: str, code: str = "kubelet-forbidden") -> None:
        out.append(doc.problem(code, path, message))

    if kc.log_level is not None and kc.log_level not in LOG_LEVELS:
        # the MCO formats the *int32 itself (an address); the value is what it means
        error(("spec", "logLevel"), f"KubeletConfig's LogLevel is not valid [1,10]: {kc.log_level}",
              "kubelet-log-level")

    for key, value in user.items():
        decode_error = _type_problem(str(key), value)
        if decode_error is not None:
            error((*base, str(key)), decode_error, "kubelet-decode")
    if out:
        return out
    for key in _FORBIDDEN:
        if key in user and not _zero(user[key]):
            error((*base, key), f"KubeletConfiguration: {key} is not allowed to be set, but contains: {_go(user[key])}")
    if "staticPodPath" in user and _zero(user["staticPodPath"]) and pool in CONTROL_PLANE_POOLS:
        error((*base, "staticPodPath"), "KubeletConfiguration: staticPodPath is not allowed to be set on the "
              f"control plane pool {pool}")
    if "failSwapOn" in user and user["failSwapOn"] is not None:
        error((*base, "failSwapOn"), f"KubeletConfiguration: failSwapOn is not allowed to be set, but contains: "
              f"{_go(user['failSwapOn'])}")
    swap = user.get("memorySwap")
    if isinstance(swap, Mapping) and not _zero(swap.get("swapBehavior")):
        error((*base, "memorySwap", "swapBehavior"), "KubeletConfiguration: swapBehavior is not allowed to be set, "
              f"but contains: {swap['swapBehavior']}")
    if user.get("systemReserved") and kc.auto_sizing_reserved:
        error((*base, "systemReserved"), "KubeletConfiguration: autoSizingReserved and systemdReserved cannot be "
              "set together", "kubelet-conflict")
    if user.get("systemReservedCgroup") and user.get("systemCgroups") and \
            user["systemReservedCgroup"] != user["systemCgroups"]:
        error((*base, "systemReservedCgroup"), f"KubeletConfiguration: systemReservedCgroup "
              f"({user['systemReservedCgroup']}) must match systemCgroups ({user['systemCgroups']})",
              "kubelet-conflict")
    spec = raw_spec(kc)
    if "tlsSecurityProfile" in spec and spec["tlsSecurityProfile"] is not None:
        for path, message in profile_problems(spec["tlsSecurityProfile"]):
            error(("spec", "tlsSecurityProfile", *path), message, "kubelet-tls-profile")
    for key in spec:
        if key not in SPEC_KEYS:
            out.append(doc.problem("unknown-field", ("spec", str(key)), f'unknown field "spec.{key}": the '
                                   "KubeletConfig API has no such field, it is ignored", severity="warning"))
    for key in user:
        if key not in FIELDS:
            out.append(doc.problem("unknown-field", (*base, str(key)), f'unknown field "{key}": not a '
                                   "KubeletConfiguration (v1beta1) field; the MCO drops it", severity="warning"))
    return out


def _mergo(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """mergo.Merge(WithOverride): maps merge key by key, a zero override value keeps the base's."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _mergo(out[key], value)
        elif not _zero(value):
            out[key] = value
    return out


def _has_kubelet_config(kc: KubeletConfig) -> bool:
    """Whether the manifest gives `spec.kubeletConfig` at all (the MCO merges only then)."""
    return raw_spec(kc).get("kubeletConfig") is not None


def _file(path: str, data: bytes) -> tuple[str, bytes]:
    return path, data


def kubelet_files(kc: KubeletConfig, base: Mapping[str, Any]) -> list[tuple[str, bytes]]:
    """(path, contents) of the files a checked KubeletConfig writes for a pool whose template config is `base`."""
    user = {k: v for k, v in kc.kubelet_config.items() if k != "featureGates"}
    reserved = dict(user.get("systemReserved") or {})
    moved = {key: reserved.pop(key) for key, _, _ in _SIZING if key in reserved}
    if "systemReserved" in user:
        user["systemReserved"] = reserved
    merged = _mergo(base, user)
    if user.get("protectKernelDefaults") is False:
        merged["protectKernelDefaults"] = False
    if _has_kubelet_config(kc) and _zero(user.get("systemReservedCgroup")):
        merged.pop("systemReservedCgroup", None)
    if merged.get("reservedSystemCPUs"):
        merged.pop("systemReservedCgroup", None)
        merged["enforceNodeAllocatable"] = ["pods"]
    profile = raw_spec(kc).get("tlsSecurityProfile")
    if profile is not None:
        version, ciphers = profile_settings(profile)
        for key, value in (("tlsMinVersion", version), ("tlsCipherSuites", ciphers)):
            if value:
                merged[key] = value
            else:  # `omitempty`: an empty setting is not written (nor the template's kept)
                merged.pop(key, None)
    files = []
    if moved or kc.auto_sizing_reserved is not None:
        enabled = "false" if moved or not kc.auto_sizing_reserved else "true"
        lines = [f"NODE_SIZING_ENABLED={enabled}"]
        lines += [f"{env}={moved.get(key) or default}" for key, env, default in _SIZING]
        files.append(_file(NODE_SIZING, ("\n".join(lines) + "\n").encode()))
    if kc.log_level is not None:
        files.append(_file(LOGGING_DROPIN, f'[Service]\nEnvironment="KUBELET_LOG_LEVEL={kc.log_level}"\n'.encode()))
    if kc.kubelet_config or base or profile is not None:
        merged.setdefault("apiVersion", "kubelet.config.k8s.io/v1beta1")
        merged.setdefault("kind", "KubeletConfiguration")
        files.append(_file(KUBELET_CONF, yaml.safe_dump(merged, sort_keys=True, default_flow_style=False).encode()))
    return files
