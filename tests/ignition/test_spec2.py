"""Spec 2.x configs converted as the MCO converts them (ignition/spec2), with the expectations of MCO's
own tests (`pkg/controller/common/helpers_test.go`: TestParseAndConvert, TestRemoveIgnDuplicateFilesAndUnits)
and ign-converter's refusals; converted results are checked by Debian's real ignition-validate."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from ignition.spec2 import Spec2Error, to_spec3
from tests.tools import real_tool


def v2(version: str = "2.2.0", **sections: Any) -> dict[str, Any]:
    return {"ignition": {"version": version}, **sections}


def f2(path: str, source: str, **extra: Any) -> dict[str, Any]:
    return {"filesystem": "root", "path": path, "mode": 420, "contents": {"source": source}, **extra}


# (id, spec-2 input, expected 3.5.0 output)
CONVERTED = [
    ("mco-parse-and-convert-ssh-keys-deduped",  # TestParseAndConvert
     v2(passwd={"users": [{"name": "core", "sshAuthorizedKeys": ["5678", "5678", "abc"]}]}),
     {"ignition": {"version": "3.5.0"}, "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["5678", "abc"]}]}}),
    ("mco-remove-duplicates", v2(  # TestRemoveIgnDuplicateFilesAndUnits: last file wins, dropins gathered
        storage={"files": [f2("/etc/testfileconfig", "data:,old"), f2("/etc/testfileconfig", "data:,new")]},
        systemd={"units": [
            {"name": "test.service", "contents": "old", "dropins": [{"name": "one.conf", "contents": "old"}]},
            {"name": "test.service", "dropins": [{"name": "one.conf", "contents": "new"}]},
            {"name": "test.service", "contents": "new", "dropins": [{"name": "two.conf", "contents": "new"}]}]}),
     {"ignition": {"version": "3.5.0"},
      "storage": {"files": [{"path": "/etc/testfileconfig", "overwrite": True, "mode": 420,
                             "contents": {"source": "data:,new"}}]},
      "systemd": {"units": [{"name": "test.service", "contents": "new",
                             "dropins": [{"name": "two.conf", "contents": "new"},
                                         {"name": "one.conf", "contents": "new"}]}]}}),
    ("kept-entries-in-reverse-order", v2(storage={"files": [f2("/etc/a", "data:,a"), f2("/etc/b", "data:,b")]}),
     {"ignition": {"version": "3.5.0"},
      "storage": {"files": [{"path": "/etc/b", "overwrite": True, "mode": 420, "contents": {"source": "data:,b"}},
                            {"path": "/etc/a", "overwrite": True, "mode": 420, "contents": {"source": "data:,a"}}]}}),
    ("users-merged-into-the-last", v2("2.1.0", passwd={"users": [
        {"name": "core", "sshAuthorizedKeys": ["k1", "k2"], "passwordHash": "old"},
        {"name": "core", "sshAuthorizedKeys": ["k3", "k1"]}]}),
     {"ignition": {"version": "3.5.0"}, "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["k3", "k1", "k2"]}]}}),
    ("append-overwrite-false-enable-deprecated-and-path-cleaned", v2("2.0.0",
        storage={"files": [{"filesystem": "root", "path": "/etc//x/", "append": True, "contents": {"source": "data:,y"},
                            "user": {"name": "root"}, "group": {"id": 0}}]},
        systemd={"units": [{"name": "a.service", "enable": True, "mask": False,
                            "contents": "[Unit]\n[Install]\nWantedBy=multi-user.target\n"},
                           {"name": "b.service", "enabled": False}]}),
     {"ignition": {"version": "3.5.0"},
      "storage": {"files": [{"path": "/etc/x", "overwrite": False, "user": {"name": "root"}, "group": {"id": 0},
                             "append": [{"source": "data:,y"}]}]},
      "systemd": {"units": [{"name": "b.service", "enabled": False},
                            {"name": "a.service", "enabled": True,
                             "contents": "[Unit]\n[Install]\nWantedBy=multi-user.target\n"}]}}),
    ("config-append-becomes-merge", v2(ignition={"version": "2.2.0", "config": {"append": [{"source": "data:,%7B%7D"}]},
                                                 "timeouts": {"httpTotal": 5}}),
     {"ignition": {"version": "3.5.0", "config": {"merge": [{"source": "data:,%7B%7D"}]}, "timeouts": {"httpTotal": 5}}}),
    ("root-filesystem-implied", v2(storage={"filesystems": [{"name": "root", "path": "/sysroot"}],
                                            "directories": [{"filesystem": "root", "path": "/var/d", "mode": 493}]}),
     {"ignition": {"version": "3.5.0"}, "storage": {"directories": [{"path": "/var/d", "mode": 493}]}}),
]


@pytest.mark.parametrize(("given", "expected"), [c[1:] for c in CONVERTED], ids=[c[0] for c in CONVERTED])
def test_converted_as_mco_converts(given: dict[str, Any], expected: dict[str, Any]) -> None:
    result, report = to_spec3(given, "3.5.0")
    assert result == expected
    assert not report.is_fatal


# (id, spec-2 input, path of the error, words)
REFUSED = [
    ("filesystem-not-root", v2(storage={"files": [{"filesystem": "var", "path": "/etc/x"}]}),
     ("storage", "files", 0, "filesystem"), 'Config defined filesystem "var" but no mapping was defined.'),
    ("filesystem-declared-not-root", v2(storage={"filesystems": [{"name": "var", "mount": {"device": "/dev/sdb",
                                                                                         "format": "xfs"}}]}),
     ("storage", "filesystems", 0, "name"), 'Config defined filesystem "var" but no mapping'),
    ("no-filesystem", v2(storage={"files": [{"path": "/etc/x"}]}), ("storage", "files", 0, "filesystem"),
     "no filesystem specified"),
    ("relative-path", v2(storage={"files": [f2("etc/x", "data:,")]}), ("storage", "files", 0, "path"),
     "path not absolute"),
    ("user-not-core", v2(passwd={"users": [{"name": "core"}, {"name": "admin"}]}), ("passwd", "users", 1, "name"),
     "unexpected user with name: admin. Only core user is supported"),
    ("networkd", v2(networkd={"units": [{"name": "a.network", "contents": "x"}]}), ("networkd", "units"),
     "config includes deprecated networkd section - use Files instead"),
    ("partition-deprecated-size", v2(storage={"disks": [{"device": "/dev/sdb", "partitions": [{"number": 1}]}]}),
     ("storage", "disks", 0, "partitions", 0, "size"), "size is deprecated; use sizeMB instead"),
    ("file-and-directory-one-path", v2(storage={"files": [f2("/etc/x", "data:,")],
                                                "directories": [{"filesystem": "root", "path": "/etc/x"}]}),
     ("storage", "directories", 0, "path"), 'Config has conflicting inodes: "File: /etc/x" and "Directory: /etc/x"'),
    ("duplicate-dropin", v2(systemd={"units": [{"name": "a.service", "dropins": [{"name": "x.conf"},
                                                                                 {"name": "x.conf"}]}]}),
     ("systemd", "units", 0, "dropins", 1, "name"), 'Config has duplicate dropin name "x.conf" in unit "a.service"'),
    ("bad-unit-name-at-the-written-index", v2(storage={"files": [f2("/etc/a", "data:,")]},
                                              systemd={"units": [{"name": "ok.service"}, {"name": "bad.unknown"}]}),
     ("systemd", "units", 1, "name"), "invalid systemd unit extension"),
    ("wrong-json-type", v2(storage={"files": [{"filesystem": "root", "path": "/etc/x", "mode": "0644"}]}),
     ("storage", "files", 0, "mode"), "json: cannot unmarshal string into Go value of type int"),
]


@pytest.mark.parametrize(("given", "path", "words"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_at_the_field(given: dict[str, Any], path: tuple[Any, ...], words: str) -> None:
    with pytest.raises(Spec2Error) as caught:
        to_spec3(given, "3.5.0")
    assert any(e.path == path and words in e.message for e in caught.value.report.errors), caught.value.report.format()


@pytest.mark.parametrize("case", [c for c in CONVERTED if c[0] != "config-append-becomes-merge"],
                         ids=[c[0] for c in CONVERTED if c[0] != "config-append-becomes-merge"])
def test_real_ignition_validate_accepts_the_conversion(case: tuple[str, Any, Any], tmp_path: Path) -> None:
    """Debian's ignition-validate (2.14) reads 3.0-3.3: the conversion to 3.3.0 must satisfy it."""
    tool = real_tool("ignition-validate")
    result, _ = to_spec3(case[1], "3.3.0")
    path = tmp_path / "converted.ign"
    path.write_text(json.dumps(result))
    run = subprocess.run([str(tool), str(path)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_translate_cli_accepts_spec2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v2.ign"
    path.write_text(json.dumps(CONVERTED[0][1]))
    assert main(["ignition", "translate", "--to", "3.4.0", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == {**CONVERTED[0][2], "ignition": {"version": "3.4.0"}}
    path.write_text(json.dumps(REFUSED[0][1]))
    assert main(["ignition", "translate", "--to", "3.4.0", str(path)]) == 1
    assert '$.storage.files.0.filesystem' in capsys.readouterr().err
