"""Cluster documents and readers the renderer tests share: the cluster's `Image` config, a new worker
MachineConfig (a change the pool must still render while another document is refused), and a rendered
config's files decoded."""

from __future__ import annotations

from ignition.dataurl import decode_data_url
from tests.builders import machine_config_manifest

NEW_WORKER_MC = machine_config_manifest("60-worker-new", "worker", files={"/etc/new": "data:,new"})


def image(spec: str, *, name: str = "cluster") -> str:
    """An `Image` (config.openshift.io/v1; the MCO reads only the one named cluster) with `spec`: YAML lines
    indented two spaces, so a test's line numbers count from line 6."""
    return f"apiVersion: config.openshift.io/v1\nkind: Image\nmetadata:\n  name: {name}\nspec:\n{spec}\n"


def rendered_files(rendered: object) -> dict[str, bytes]:
    """Path -> decoded contents of every file in a rendered config."""
    config = rendered.spec.config  # type: ignore[attr-defined]
    return {f["path"]: decode_data_url(f["contents"]["source"]) for f in config["storage"]["files"]}
