"""Units and drop-ins, enabled / disabled / masked with the real `systemctl --root`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from applier.files import FileWriter
from applier.runner import SubprocessRunner
from applier.state import StateDir
from applier.units import Systemctl, UnitWriter
from applier.verify import check_unit
from tests.applier.helpers import SERVICE, make_root, unit
from tests.tools import real_tool


@pytest.fixture
def units(tmp_path: Path) -> UnitWriter:
    real_tool("systemctl")
    root = make_root(tmp_path / "root")
    files = FileWriter(root, StateDir(root / "etc/machine-config-daemon"))
    return UnitWriter(root, files, Systemctl(SubprocessRunner(), root))


CASES = [
    ("enabled", unit("a.service", SERVICE.format(name="a"), True), "enabled"),
    ("disabled", unit("a.service", SERVICE.format(name="a"), False), "disabled"),
    ("preset-default", unit("a.service", SERVICE.format(name="a")), "enabled"),  # no preset files: enable
    ("masked", unit("a.service", mask=True), "masked"),
]


@pytest.mark.parametrize("entry,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_enablement(units: UnitWriter, entry: dict, expected: str) -> None:
    units.write_unit(entry, managed_before=False)
    units.set_enablement([entry])
    assert units.systemctl.is_enabled("a.service") == expected
    assert check_unit(units.root, entry, units.systemctl) == []


def test_wants_link_and_disable(units: UnitWriter) -> None:
    entry = unit("b.service", SERVICE.format(name="b"), True, dropins=[{"name": "10-nice.conf",
                                                                          "contents": "[Service]\nNice=5\n"}])
    units.write_unit(entry, managed_before=False)
    units.set_enablement([entry])
    link = units.root / "etc/systemd/system/multi-user.target.wants/b.service"
    assert os.readlink(link) == "/etc/systemd/system/b.service"
    assert (units.root / "etc/systemd/system/b.service.d/10-nice.conf").read_text() == "[Service]\nNice=5\n"
    units.remove_dropin("b.service/10-nice.conf")
    units.remove_unit("b.service")
    assert not link.exists() and not (units.root / "etc/systemd/system/b.service").exists()
    assert not (units.root / "etc/systemd/system/b.service.d").exists()


def test_verification_catches_wrong_enablement(units: UnitWriter) -> None:
    entry = unit("c.service", SERVICE.format(name="c"), True)
    units.write_unit(entry, managed_before=False)  # written but never enabled
    assert check_unit(units.root, entry, units.systemctl) == [
        'state validation: unit "c.service" expected enabled=true, systemctl is-enabled reports "disabled"']


def test_unmask(units: UnitWriter) -> None:
    units.write_unit(unit("d.service", mask=True), managed_before=False)
    units.write_unit(unit("d.service", mask=False), managed_before=True)
    assert not (units.root / "etc/systemd/system/d.service").is_symlink()


def test_live_root_uses_plain_systemctl_and_runs_actions() -> None:
    from applier.runner import Result
    from tests.applier.doubles import RecordingRunner

    runner = RecordingRunner({("systemctl", "is-enabled"): Result((), 0, "enabled\n")})
    live = Systemctl(runner, Path("/"))
    live.enable(["a.service", "b.service"])
    assert live.is_enabled("a.service") == "enabled"
    assert live.live_action("restart", "chronyd.service") and live.live_action("daemon-reload")
    assert runner.calls == [("systemctl", "enable", "a.service", "b.service"), ("systemctl", "is-enabled", "a.service"),
                            ("systemctl", "restart", "chronyd.service"), ("systemctl", "daemon-reload")]


def test_directory_root_runs_no_live_actions(tmp_path: Path) -> None:
    from tests.applier.doubles import RecordingRunner

    runner = RecordingRunner()
    offline = Systemctl(runner, tmp_path)
    offline.disable(["a.service"])
    assert not offline.live_action("restart", "chronyd.service")
    assert runner.calls == [("systemctl", f"--root={tmp_path}", "disable", "a.service")]


def test_removed_override_of_vendor_unit_returns_to_preset(units: UnitWriter) -> None:
    vendor = units.root / "usr/lib/systemd/system"
    vendor.mkdir(parents=True)
    (vendor / "v.service").write_text(SERVICE.format(name="vendor"))
    preset = units.root / "usr/lib/systemd/system-preset"
    preset.mkdir(parents=True)
    (preset / "90-default.preset").write_text("disable *\n")
    entry = unit("v.service", SERVICE.format(name="override"), True)
    units.write_unit(entry, managed_before=False)
    units.set_enablement([entry])
    assert units.systemctl.is_enabled("v.service") == "enabled"
    units.remove_unit("v.service")
    assert not (units.root / "etc/systemd/system/v.service").exists()
    assert units.systemctl.is_enabled("v.service") == "disabled"  # the vendor preset says so


# MCO pkg/daemon/update.go writeUnits: `enabled` is acted on only for a unit with contents or one systemd knows
# (OCPBUGS-56648); a contents-less entry naming no unit is skipped with a log line, not an error.
@pytest.mark.parametrize("enabled", [True, False], ids=["enable", "disable"])
def test_enablement_of_a_unit_with_no_contents_and_no_file_is_skipped(units: UnitWriter, enabled: bool) -> None:
    entry = unit("ghost.service", enabled=enabled)
    units.write_unit(entry, managed_before=False)
    units.set_enablement([entry])  # no `systemctl enable` of a unit that does not exist
    assert units.systemctl.is_enabled("ghost.service") not in ("enabled", "disabled")
    assert not (units.root / "etc/systemd/system/ghost.service").exists()
    assert check_unit(units.root, entry, units.systemctl) == []  # nor is the skipped enablement drift


# MCO pkg/daemon/file_writers.go writeUnit: a unit whose contents are rewritten is disabled first when it is
# enabled, whatever its `enabled` (OCPBUGS-33694), so the links of its old [Install] section go.
@pytest.mark.parametrize("enabled", [True, None], ids=["enabled", "preset"])
def test_rewritten_unit_loses_the_links_of_its_old_install_section(units: UnitWriter, enabled: bool | None) -> None:
    first = unit("e.service", SERVICE.format(name="e"), True)
    units.write_unit(first, managed_before=False)
    units.set_enablement([first])
    moved = unit("e.service", SERVICE.format(name="e").replace("multi-user.target", "graphical.target"), enabled)
    units.write_unit(moved, managed_before=True)
    units.set_enablement([moved])
    system = units.root / "etc/systemd/system"
    assert not (system / "multi-user.target.wants/e.service").is_symlink()
    assert os.readlink(system / "graphical.target.wants/e.service") == "/etc/systemd/system/e.service"


# MCO pkg/daemon/file_writers.go writeUnit: `mask: false` with no contents removes what is at the unit's path
# (a mask link, or the contents an earlier config wrote there).
UNMASKED = [
    ("mask-link", unit("f.service", mask=True)),
    ("old-contents", unit("f.service", SERVICE.format(name="f"))),
]


@pytest.mark.parametrize("before", [c[1] for c in UNMASKED], ids=[c[0] for c in UNMASKED])
def test_mask_false_without_contents_clears_the_unit_path(units: UnitWriter, before: dict) -> None:
    units.write_unit(before, managed_before=False)
    units.write_unit(unit("f.service", mask=False), managed_before=True)
    target = units.root / "etc/systemd/system/f.service"
    assert not target.exists() and not target.is_symlink()
