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
