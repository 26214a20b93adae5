"""Rendered configs against Debian's real `ignition-validate` (Ignition 2.14: spec 3.3.0 is its newest stable).

The rendered 3.5.0 config is translated down to 3.3.0 (ignition.translate) and must be valid for the real
tool; and for inputs the renderer refuses, the real tool refuses them too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleet.store import MemoryStore
from ignition.translate import translate
from renderer.render import render_cluster
from tests.tools import real_tool

pytestmark = pytest.mark.realtool


def _real_validate(config: dict[str, Any], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    tool = real_tool("ignition-validate")
    path = tmp_path / "config.ign"
    path.write_text(json.dumps(config))
    return subprocess.run([str(tool), str(path)], capture_output=True, text=True, timeout=60)


def test_every_rendered_example_config_is_valid_for_real_ignition(cluster: Path, tmp_path: Path) -> None:
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok
    for pool, outcome in result.pools.items():
        assert outcome.rendered is not None
        down = translate(outcome.rendered.spec.config, "3.3.0")
        proc = _real_validate(down, tmp_path)
        assert proc.returncode == 0, (pool, proc.stdout, proc.stderr)


MC = """\
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 50-worker-probe
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config:
    ignition:
      version: 3.3.0
{body}"""

PROBES = [
    ("    storage:\n      files:\n        - path: etc/x\n", "relative-path"),
    ("    systemd:\n      units:\n        - name: noext\n          contents: '[Unit]'\n", "unit-name-without-type"),
    ("    storage:\n      files:\n        - path: /etc/x\n          contents:\n            source: data:,x\n"
     "            compression: zip\n", "bad-compression"),
    ("    storage:\n      files:\n        - path: /etc/x\n        - path: /etc/x\n", "duplicate-path"),
]


@pytest.mark.parametrize("body", [p[0] for p in PROBES], ids=[p[1] for p in PROBES])
def test_refused_inputs_are_refused_by_real_ignition(cluster: Path, tmp_path: Path, body: str) -> None:
    (cluster / "manifests" / "50-worker-probe.yaml").write_text(MC.format(body=body))
    result = render_cluster(cluster, store=MemoryStore())
    errors = result.pools["worker"].errors
    assert errors and all(e.startswith("manifests/50-worker-probe.yaml:") for e in errors), errors
    config = yaml.safe_load(MC.format(body=body))["spec"]["config"]
    proc = _real_validate(config, tmp_path)
    assert proc.returncode != 0 and "unsupported config version" not in proc.stderr, proc.stderr


def test_a_valid_probe_is_valid_for_both(cluster: Path, tmp_path: Path) -> None:
    body = "    storage:\n      files:\n        - path: /etc/x\n          contents:\n            source: data:,x\n"
    (cluster / "manifests" / "50-worker-probe.yaml").write_text(MC.format(body=body))
    assert render_cluster(cluster, store=MemoryStore()).pools["worker"].errors == ()
    assert _real_validate(yaml.safe_load(MC.format(body=body))["spec"]["config"], tmp_path).returncode == 0
