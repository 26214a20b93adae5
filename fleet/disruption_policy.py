"""Node disruption policies: what each changed file, unit or SSH key asks a node to do (MCO
`spec.nodeDisruptionPolicy`, pkg/apihelpers: the defaults and MergeClusterPolicies). Pure, no I/O.

Policies: MCO's built-in defaults, merged with the user's (`MergeClusterPolicies`): a user entry for the same
path / unit REPLACES the default entry in place, others are appended; non-empty user sshkey actions replace
the default. At most MAX_POLICIES files and units, MAX_ACTIONS actions each; a service named by an action must
be a unit name. The decision over a diff is disruption.py's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fleet.errors import PathError
from fleet.registries_conf import REGISTRIES_CONF
from ignition.canonical import canonical_json

ACTION_TYPES = ("Reboot", "Drain", "Reload", "Restart", "DaemonReload", "None")
# A rendered config may carry the cluster's `spec.nodeDisruptionPolicy` (compact JSON) under this annotation,
# so the node applies the policy in force when the config was rendered (see `policy_annotation`).
POLICY_ANNOTATION = "machineconfiguration.openshift.io/node-disruption-policy"
MAX_POLICIES = 50
MAX_ACTIONS = 10
_SERVICE_RE = re.compile(r"^[a-zA-Z0-9:._\\-]+\..")
_SERVICE_SUFFIXES = (".service", ".socket", ".device", ".mount", ".automount", ".swap", ".target", ".path",
                     ".timer", ".snapshot", ".slice", ".scope")


class PolicyError(PathError, ValueError):
    """A MachineConfiguration disruption policy that is not valid; `path` names the field."""


@dataclass(frozen=True)
class Action:
    """One post-config action: `type` in ACTION_TYPES or "Special"; `service` for Reload / Restart."""

    type: str
    service: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The MachineConfiguration JSON form."""
        if self.type == "Reload":
            return {"type": "Reload", "reload": {"serviceName": self.service}}
        if self.type == "Restart":
            return {"type": "Restart", "restart": {"serviceName": self.service}}
        return {"type": self.type}

    def __str__(self) -> str:
        return f"{self.type} {self.service}" if self.service else self.type


REBOOT = Action("Reboot")
NONE = Action("None")


@dataclass(frozen=True)
class FilePolicy:
    """Actions for a file path (or every file below a directory path)."""

    path: str
    actions: tuple[Action, ...]


@dataclass(frozen=True)
class UnitPolicy:
    """Actions for a systemd unit, by exact name."""

    name: str
    actions: tuple[Action, ...]


def _reload(svc: str) -> Action:
    return Action("Reload", svc)


def _restart(svc: str) -> Action:
    return Action("Restart", svc)


DEFAULT_FILES: tuple[FilePolicy, ...] = (
    FilePolicy("/var/lib/kubelet/config.json", (NONE,)),
    FilePolicy("/etc/machine-config-daemon/no-reboot/containers-gpg.pub", (_reload("crio.service"),)),
    FilePolicy("/etc/containers/policy.json", (_reload("crio.service"),)),
    FilePolicy(REGISTRIES_CONF, (Action("Special"),)),
    FilePolicy("/etc/containers/registries.d", (_reload("crio.service"),)),
    FilePolicy("/etc/crio/policies", (_reload("crio.service"),)),
    FilePolicy("/etc/nmstate/openshift", (NONE,)),
    FilePolicy("/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt",
               (_restart("coreos-update-ca-trust.service"), _restart("crio.service"))),
    FilePolicy("/etc/kubernetes/credential-providers", (_restart("kubelet.service"),)),
    FilePolicy("/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf",
               (Action("DaemonReload"), _restart("kubelet.service"))),
    FilePolicy("/etc/iri-registry", (_restart("iri-registry.service"),)),
    FilePolicy("/usr/local/bin/load-registry-image.sh", (_restart("iri-registry.service"),)),
    FilePolicy("/etc/pki/ca-trust/source/anchors/iri-root-ca.crt", (_restart("coreos-update-ca-trust.service"),)),
)
DEFAULT_UNITS: tuple[UnitPolicy, ...] = (
    UnitPolicy("iri-registry.service", (Action("DaemonReload"), _restart("iri-registry.service"))),
)
DEFAULT_SSHKEY: tuple[Action, ...] = (NONE,)


def _check_service(name: Any, path: str) -> str:
    if not isinstance(name, str) or not name:
        raise PolicyError(path, "required")
    if len(name) > 255:
        raise PolicyError(path, "must be at most 255 characters")
    if not _SERVICE_RE.match(name) or not name.endswith(_SERVICE_SUFFIXES):
        raise PolicyError(path, f"invalid service name {name!r}: must match {_SERVICE_RE.pattern} and end in "
                          f"one of {', '.join(_SERVICE_SUFFIXES)}")
    return name


def _parse_actions(data: Any, path: str) -> tuple[Action, ...]:
    if not isinstance(data, list):
        raise PolicyError(path, "must be a list")
    if len(data) > MAX_ACTIONS:
        raise PolicyError(path, f"must have at most {MAX_ACTIONS} items")
    actions: list[Action] = []
    for i, item in enumerate(data):
        p = f"{path}[{i}]"
        if not isinstance(item, Mapping):
            raise PolicyError(p, "must be an object")
        kind = item.get("type")
        if kind not in ACTION_TYPES:
            raise PolicyError(f"{p}.type", f"must be one of {', '.join(ACTION_TYPES)}, got {kind!r}")
        for other in ("reload", "restart"):
            if other in item and kind.lower() != other:
                raise PolicyError(f"{p}.{other}", f"forbidden unless type is {other.capitalize()}")
        if kind in ("Reload", "Restart"):
            key = kind.lower()
            sub = item.get(key)
            if not isinstance(sub, Mapping):
                raise PolicyError(f"{p}.{key}", f"required when type is {kind}")
            actions.append(Action(kind, _check_service(sub.get("serviceName"), f"{p}.{key}.serviceName")))
        else:
            actions.append(Action(kind))
    for kind in ("Reboot", "None"):
        if any(a.type == kind for a in actions) and len(actions) > 1:
            raise PolicyError(path, f"{kind} must be the only action in the list")
    return tuple(actions)


def _parse_list(data: Any, path: str, key: str) -> list[tuple[str, tuple[Action, ...]]]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise PolicyError(path, "must be a list")
    if len(data) > MAX_POLICIES:
        raise PolicyError(path, f"must have at most {MAX_POLICIES} items")
    out: list[tuple[str, tuple[Action, ...]]] = []
    seen: set[str] = set()
    for i, item in enumerate(data):
        p = f"{path}[{i}]"
        if not isinstance(item, Mapping):
            raise PolicyError(p, "must be an object")
        name = item.get(key)
        if not isinstance(name, str) or not name:
            raise PolicyError(f"{p}.{key}", "required")
        if key == "path" and not name.startswith("/"):
            raise PolicyError(f"{p}.path", f"path {name!r} must be absolute")
        if key == "name":
            _check_service(name, f"{p}.name")
        if name in seen:
            raise PolicyError(f"{p}.{key}", f"duplicate entry {name!r}")
        seen.add(name)
        out.append((name, _parse_actions(item.get("actions"), f"{p}.actions")))
    return out


def _clean(path: str) -> str:
    """filepath.Clean for absolute paths."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)


@dataclass(frozen=True)
class DisruptionPolicy:
    """The cluster's merged disruption policies (defaults plus the user's)."""

    files: tuple[FilePolicy, ...] = DEFAULT_FILES
    units: tuple[UnitPolicy, ...] = DEFAULT_UNITS
    sshkey: tuple[Action, ...] = DEFAULT_SSHKEY

    @classmethod
    def defaults(cls) -> DisruptionPolicy:
        """MCO's built-in policies."""
        return cls()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, path: str = "$.spec") -> DisruptionPolicy:
        """Read a MachineConfiguration `cluster` spec (or the whole object) and merge it over the defaults."""
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise PolicyError(path, "must be an object")
        if "spec" in data and isinstance(data.get("spec"), Mapping):
            data, path = data["spec"], "$.spec"
        ndp = data.get("nodeDisruptionPolicy")
        if ndp is None:
            return cls()
        npath = f"{path}.nodeDisruptionPolicy"
        if not isinstance(ndp, Mapping):
            raise PolicyError(npath, "must be an object")
        user_files = _parse_list(ndp.get("files"), f"{npath}.files", "path")
        user_units = _parse_list(ndp.get("units"), f"{npath}.units", "name")
        ssh = ndp.get("sshkey")
        user_ssh: tuple[Action, ...] = ()
        if ssh is not None:
            if not isinstance(ssh, Mapping):
                raise PolicyError(f"{npath}.sshkey", "must be an object")
            user_ssh = _parse_actions(ssh.get("actions") or [], f"{npath}.sshkey.actions")
        return cls(
            files=tuple(FilePolicy(p, a) for p, a in _merge([(f.path, f.actions) for f in DEFAULT_FILES],
                                                             user_files)),
            units=tuple(UnitPolicy(n, a) for n, a in _merge([(u.name, u.actions) for u in DEFAULT_UNITS],
                                                             user_units)),
            sshkey=user_ssh or DEFAULT_SSHKEY,
        )

    def for_file(self, path: str) -> FilePolicy | None:
        """The policy whose path is `path` as written, or a directory above it, the longest path as written
        winning (the first listed on a tie): MCO FindClosestFilePolicyPathMatch and IsSubdirectory
        (pkg/controller/common/helpers.go), so `/etc/foo/` covers only what is below `/etc/foo` and `/` nothing."""
        target = _clean(path)
        best: FilePolicy | None = None
        for policy in self.files:
            below = target.startswith(_clean(policy.path) + "/")
            if (path == policy.path or below) and (best is None or len(policy.path) > len(best.path)):
                best = policy
        return best

    def for_unit(self, name: str) -> UnitPolicy | None:
        """The policy for exactly this unit name."""
        return next((u for u in self.units if u.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """The `clusterPolicies` status form."""
        return {
            "files": [{"path": f.path, "actions": [a.to_dict() for a in f.actions]} for f in self.files],
            "units": [{"name": u.name, "actions": [a.to_dict() for a in u.actions]} for u in self.units],
            "sshkey": {"actions": [a.to_dict() for a in self.sshkey]},
        }


def policy_annotation(machine_configuration_spec: Mapping[str, Any] | None) -> dict[str, str]:
    """The annotation a renderer adds to a rendered config for the cluster's policy ({} when there is none)."""
    ndp = (machine_configuration_spec or {}).get("nodeDisruptionPolicy")
    if not isinstance(ndp, Mapping) or not ndp:
        return {}
    return {POLICY_ANNOTATION: canonical_json(ndp).decode()}


def policy_from_annotations(annotations: Mapping[str, str]) -> DisruptionPolicy:
    """The policy a rendered config carries (defaults when it carries none); PolicyError names the annotation."""
    raw = annotations.get(POLICY_ANNOTATION)
    if not raw:
        return DisruptionPolicy.defaults()
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise PolicyError(f"metadata.annotations[{POLICY_ANNOTATION}]", f"not JSON: {exc}") from exc
    return DisruptionPolicy.from_dict({"nodeDisruptionPolicy": data},
                                      path=f"metadata.annotations[{POLICY_ANNOTATION}]")


def _merge(defaults: list[tuple[str, tuple[Action, ...]]],
           user: list[tuple[str, tuple[Action, ...]]]) -> list[tuple[str, tuple[Action, ...]]]:
    merged = list(defaults)
    index = {k: i for i, (k, _) in enumerate(merged)}
    for key, actions in user:
        if key in index:
            merged[index[key]] = (key, actions)
        else:
            index[key] = len(merged)
            merged.append((key, actions))
    return merged
