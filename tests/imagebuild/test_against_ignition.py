"""The image plan's tree equals what the real Ignition (`ignition-apply --root`) writes for the same config,
plus the symlinks the real `systemctl --root enable` makes for the units the config enables."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from imagebuild.layer import write_layer
from imagebuild.plan import plan_image
from imagebuild.plan_builder import FIRST_BOOT
from tests.builders import rendered_config
from tests.imagebuild.trees import enabled_units, ignition_apply, snapshot, systemctl_enable

DATA = Path(__file__).parent / "data"
KARGS_DIR = "/usr/lib/bootc/kargs.d"


def reference_tree(config: dict, tmp: Path) -> Path:
    """ignition-apply + systemctl enable into a fresh root."""
    root = tmp / "ref"
    cfg_file = tmp / "config.ign"
    cfg_file.write_text(json.dumps(config))
    ignition_apply(cfg_file, root, tmp)
    systemctl_enable(root, enabled_units(config))
    return root


def layer_tree(config: dict, tmp: Path) -> Path:
    """Our layer for the same config, extracted with tarfile (numeric owners kept)."""
    rendered = rendered_config("rendered-worker-0", config=config)
    plan = plan_image(rendered)
    assert not plan.refused, plan.refused
    buf = io.BytesIO()
    write_layer(plan.entries, buf, compression="none")
    root = tmp / "ours"
    root.mkdir()
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue())) as tar:
        tar.extractall(root, numeric_owner=True, filter="fully_trusted")
    return root


CASES = {
    "worker-config": json.loads((DATA / "worker.ign").read_text()),
    "files-only": {"ignition": {"version": "3.1.0"}, "storage": {"files": [
        {"path": "/etc/a/b/c.conf", "mode": 256, "contents": {"source": "data:,deep"}},
        {"path": "/etc/motd", "contents": {"source": "data:;base64,d2VsY29tZQo="}}]}},
    "units-only": {"ignition": {"version": "3.3.0"}, "systemd": {"units": [
        {"name": "a.timer", "enabled": True,
         "contents": "[Timer]\nOnCalendar=daily\n[Install]\nWantedBy=timers.target\n"},
        {"name": "a.service", "contents": "[Service]\nExecStart=/bin/true\n"},
        {"name": "b.socket", "enabled": True, "contents": "[Socket]\nListenStream=1234\n[Install]\nWantedBy=sockets.target\n",
         "dropins": [{"name": "override.conf", "contents": "[Socket]\nBacklog=5\n"}]}]}},
    "also-and-mask": {"ignition": {"version": "3.2.0"}, "systemd": {"units": [
        {"name": "a.service", "enabled": True,
         "contents": "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\nAlso=b.socket\n"},
        {"name": "b.socket", "contents": "[Socket]\nListenStream=9\n[Install]\nWantedBy=sockets.target\n"},
        {"name": "gone.service", "mask": True, "enabled": False}]}},
    # systemctl reads [Install] from drop-ins too (systemd src/shared/install.c unit_file_search).
    "install-in-dropin": {"ignition": {"version": "3.2.0"}, "systemd": {"units": [
        {"name": "di.service", "enabled": True, "contents": "[Service]\nExecStart=/bin/true\n",
         "dropins": [{"name": "install.conf", "contents": "[Install]\nWantedBy=multi-user.target\n"}]}]}},
    # WriteLink lchowns a symlink to its user/group (internal/exec/util/file.go).
    "link-owners": {"ignition": {"version": "3.2.0"}, "storage": {"links": [
        {"path": "/etc/links/explicit", "target": "/nowhere", "user": {"id": 42}, "group": {"id": 43}},
        {"path": "/etc/links/user-only", "target": "/nowhere", "user": {"id": 44}}]}},
}


@pytest.mark.realtool
@pytest.mark.parametrize("config", CASES.values(), ids=CASES.keys())
def test_layer_tree_matches_real_ignition_and_systemctl(config: dict, tmp_path: Path) -> None:
    # /usr/local is /var/usrlocal on image-based systems: the plan leaves it for first boot.
    ref = snapshot(reference_tree(config, tmp_path), skip=("/usr/local",))
    ours = snapshot(layer_tree(config, tmp_path))
    assert sorted(ours) == sorted(ref)
    for path in ref:
        assert ours[path] == ref[path], path


def test_first_boot_items_are_reported_for_worker_config() -> None:
    config = CASES["worker-config"]
    plan = plan_image(rendered_config("rendered-worker-0", config=config))
    got = sorted((p.code, p.path) for p in plan.problems)
    assert got == [
        ("passwd", "$.spec.config.passwd.users.0"),
        ("unit-base", "$.spec.config.systemd.units.7.enabled"),
        ("var-path", "$.spec.config.storage.files.4.path"),
    ]
    assert all(p.disposition == FIRST_BOOT for p in plan.problems)
