"""`cluster.yaml`: the cluster-wide values every pool's render starts from.

Fields (camelCase, as in manifests):
    name                              required; the cluster's name (templates use it)
    baseDomain                        DNS domain of the cluster
    osImageURL                        default OS image of every pool (MCO: ControllerConfig baseOSContainerImage)
    baseOSExtensionsContainerImage    default extensions image
    sshKeys                           SSH public keys for `core`; become `99-<role>-ssh` MachineConfigs
    extensionsAllowList               optional list replacing the MCO's supported extensions
    anything else                     passed to the templates unchanged (`{{ ntpServers }}`, ...)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from fleet.rendered import SUPPORTED_EXTENSIONS as DEFAULT_EXTENSIONS
from renderer.errors import ClusterDirectoryMissing, ClusterFileInvalid
from renderer.load import load_file
from renderer.problems import Problem

CLUSTER_FILE = "cluster.yaml"


@dataclass(frozen=True)
class Cluster:
    """The parsed cluster.yaml."""

    name: str
    base_domain: str = ""
    os_image_url: str = ""
    extensions_image: str = ""
    ssh_keys: tuple[str, ...] = ()
    extensions_allow_list: tuple[str, ...] = tuple(DEFAULT_EXTENSIONS)
    values: Mapping[str, Any] = field(default_factory=dict)


def load_cluster(cluster_dir: FsPath) -> Cluster:
    """Read `cluster_dir/cluster.yaml`; raises ClusterDirectoryMissing, or ClusterFileInvalid naming
    file:line:col and field."""
    path = cluster_dir / CLUSTER_FILE
    if not path.is_file():
        # No directory in the text: a server or controller publishes this message as a pool condition.
        raise ClusterDirectoryMissing(CLUSTER_FILE, "not found in the cluster directory")
    docs, problems = load_file(path, CLUSTER_FILE)
    if problems:
        raise ClusterFileInvalid(problems)
    if len(docs) != 1:
        raise ClusterFileInvalid([Problem("documents", f"{CLUSTER_FILE} must hold exactly one document, "
                                        f"found {len(docs)}", CLUSTER_FILE)])
    doc = docs[0]
    data = doc.data
    if not isinstance(data, Mapping):
        raise ClusterFileInvalid([doc.problem("json-type", (), "cluster.yaml must be a mapping of values")])
    errors: list[Problem] = []

    def text(key: str, required: bool = False) -> str:
        value = data.get(key)
        if value is None:
            if required:
                errors.append(doc.problem("required", (key,), f"{key} is required"))
            return ""
        if not isinstance(value, str):
            note = doc.parsed_as((key,))
            errors.append(doc.problem("json-type", (key,), f"expected a string, got {value!r}"
                                      + (f" ({note})" if note else "")))
            return ""
        return value

    def texts(key: str) -> tuple[str, ...] | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            errors.append(doc.problem("json-type", (key,), "expected a list of strings"))
            return None
        bad = [i for i, v in enumerate(value) if not isinstance(v, str)]
        for i in bad:
            errors.append(doc.problem("json-type", (key, i), f"expected a string, got {value[i]!r}"))
        return tuple(v for v in value if isinstance(v, str))

    allow = texts("extensionsAllowList")
    cluster = Cluster(
        name=text("name", required=True),
        base_domain=text("baseDomain"),
        os_image_url=text("osImageURL"),
        extensions_image=text("baseOSExtensionsContainerImage"),
        ssh_keys=texts("sshKeys") or (),
        extensions_allow_list=allow if allow is not None else tuple(DEFAULT_EXTENSIONS),
        values=dict(data),
    )
    if errors:
        raise ClusterFileInvalid(errors)
    return cluster
