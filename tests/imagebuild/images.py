"""Helpers shared by the real-tool image tests: the test config, unpacking images, expected roots."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from fleet.rendered import RenderedConfig
from tests.builders import rendered_config
from tests.imagebuild.conftest import run
from tests.imagebuild.trees import Snapshot, enabled_units, ignition_apply, snapshot, systemctl_enable
from tests.tools import real_tool

DATA = Path(__file__).parent / "data"
KERNEL_ARGUMENTS = ("nosmt", "console=ttyS0,115200n8 mitigations=auto,nosmt", 'dyndbg="file x.c +p"')


def image_config() -> dict[str, Any]:
    """The worker config without the base-unit enablement (the tiny base has no systemctl for RUN), plus
    files that need the base tree (basetree.py)."""
    config = json.loads((DATA / "worker.ign").read_text())
    config["systemd"]["units"] = [u for u in config["systemd"]["units"] if u["name"] != "chronyd.service"]
    config["storage"]["files"] += [   # into a 0750 directory and below a symlinked directory of the base
        {"path": "/etc/sudoers.d/90-ops", "mode": 0o440, "contents": {"source": "data:,%25ops%20ALL%3D(ALL)%20ALL%0A"}},
        {"path": "/lib/udev/rules.d/99-x.rules", "contents": {"source": "data:,%23%20rule%0A"}},
    ]
    return config


def rendered(config: dict[str, Any] | None = None, name: str = "rendered-worker-0123456789abcdef") -> RenderedConfig:
    """A hand-made rendered config (the renderer's output type) with kernel arguments."""
    return rendered_config(name, config=config or image_config(), kernel_arguments=KERNEL_ARGUMENTS)


def unpack_layout(layout: Path, tag: str, dest: Path) -> Path:
    """`umoci raw unpack` of an image in a layout; returns the root."""
    run(real_tool("umoci"), "raw", "unpack", "--image", f"{layout}:{tag}", dest)
    return dest


def pull_and_unpack(ref: str, work: Path) -> Path:
    """`skopeo copy docker://REF oci:DIR:x`, then unpack it."""
    layout = work / "pulled"
    run(real_tool("skopeo"), "copy", "--src-tls-verify=false", f"docker://{ref}", f"oci:{layout}:x")
    return unpack_layout(layout, "x", work / "pulled-root")


def expected_root(base_layout: Path, config: dict[str, Any], work: Path) -> Snapshot:
    """The base image's root with the real ignition-apply + systemctl enable results on top."""
    root = unpack_layout(base_layout, "v1", work / "expected")
    cfg_file = work / "config.ign"
    cfg_file.write_text(json.dumps(config))
    ignition_apply(cfg_file, root, work)
    systemctl_enable(root, enabled_units(config))
    local = root / "usr/local"
    if local.exists():
        shutil.rmtree(local)   # /usr/local is left for first boot (var-path)
    return snapshot(root)


def without_kargs(snap: Snapshot) -> Snapshot:
    """Drop the kargs.d file and the directories only it needs (compared separately, with tomllib)."""
    out = copy.copy(snap)
    for path in ("/usr/lib/bootc/kargs.d/50-machine-config.toml", "/usr/lib/bootc/kargs.d", "/usr/lib/bootc"):
        out.pop(path, None)
    return out
