"""Offline enablement (units.py) against the real `systemctl --root enable`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from imagebuild.plan import plan_image
from imagebuild.units import InstallSection, enablement_links, parse_install, split_instance
from tests.builders import rendered_config
from tests.imagebuild.trees import systemctl_enable

UNIT_DIR = "/etc/systemd/system"

INSTALL = {
    "wanted-by": ("[Install]\nWantedBy=multi-user.target\n", InstallSection(wanted_by=("multi-user.target",))),
    "several": ("[Install]\nWantedBy=a.target b.target\nWantedBy=c.target\nRequiredBy=d.target\n",
                InstallSection(wanted_by=("a.target", "b.target", "c.target"), required_by=("d.target",))),
    "reset": ("[Install]\nWantedBy=a.target\nWantedBy=\nWantedBy=b.target\n", InstallSection(wanted_by=("b.target",))),
    "continuation": ("[Install]\nWantedBy=a.target \\\n b.target\n", InstallSection(wanted_by=("a.target", "b.target"))),
    "comments-other-sections": ("[Unit]\nWantedBy=no.target\n# c\n[Install]\n; x\nAlias=z.service\n",
                                InstallSection(alias=("z.service",))),
    "default-instance": ("[Install]\nWantedBy=m.target\nDefaultInstance=one\n",
                         InstallSection(wanted_by=("m.target",), default_instance="one")),
    "none": ("[Service]\nExecStart=/bin/true\n", InstallSection()),
}


@pytest.mark.parametrize("text,expected", INSTALL.values(), ids=INSTALL.keys())
def test_parse_install(text: str, expected: InstallSection) -> None:
    assert parse_install(text) == expected


@pytest.mark.parametrize("name,expected", [
    ("a.service", ("a.service", None)), ("a@.service", ("a@.service", "")), ("a@b.c.service", ("a@.service", "b.c")),
], ids=["plain", "template", "instance"])
def test_split_instance(name: str, expected: tuple[str, str | None]) -> None:
    assert split_instance(name) == expected


# (unit name to enable, unit file name, contents)
SYSTEMCTL = {
    "wants": ("a.service", "a.service", "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"),
    # (UpheldBy= is systemd >= 254; Debian's 252 here ignores it, so it is not in this table.)
    "requires": ("b.service", "b.service", "[Service]\nExecStart=/bin/true\n[Install]\nRequiredBy=x.target\n"),
    "alias": ("c.service", "c.service", "[Service]\nExecStart=/bin/true\n[Install]\nAlias=cc.service\nWantedBy=m.target\n"),
    "template-default": ("t@.service", "t@.service",
                         "[Service]\nExecStart=/bin/echo %i\n[Install]\nWantedBy=m.target\nDefaultInstance=one\n"),
    "instance-of-template": ("t@two.service", "t@.service",
                             "[Service]\nExecStart=/bin/echo %i\n[Install]\nWantedBy=m.target\n"),
    "timer": ("d.timer", "d.timer", "[Timer]\nOnCalendar=daily\n[Install]\nWantedBy=timers.target\n"),
    "no-install": ("e.service", "e.service", "[Service]\nExecStart=/bin/true\n"),
}


def _links(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if p.is_symlink():
                out["/" + str(p.relative_to(root))] = os.readlink(p)
    return out


@pytest.mark.realtool
@pytest.mark.parametrize("name,file_name,contents", SYSTEMCTL.values(), ids=SYSTEMCTL.keys())
def test_links_match_systemctl(name: str, file_name: str, contents: str, tmp_path: Path) -> None:
    unit_dir = tmp_path / UNIT_DIR.lstrip("/")
    unit_dir.mkdir(parents=True)
    (unit_dir / file_name).write_text(contents)
    systemctl_enable(tmp_path, [name])
    ours = {link.path: link.target for link in enablement_links(name, parse_install(contents), UNIT_DIR,
                                                                file_name=file_name)}
    assert ours == _links(tmp_path)


SVC = "[Service]\nExecStart=/bin/true\n"
# The plan's enablement links when [Install] lines come from drop-ins, against the real systemctl: systemd's
# src/shared/install.c unit_file_search() loads `<name>.d/*.conf` and, for an instance, `<template>.d/*.conf`
# (one list sorted by file name; the instance's file wins over the template's of the same name) after the unit
# file, and their [Install] values accumulate like the unit file's own.
# (units of the config: name, contents or None, {dropin name: contents}; the unit to enable)
DROPIN_INSTALL = {
    "dropin-adds-wanted-by": ([("a.service", SVC, {"i.conf": "[Install]\nWantedBy=multi-user.target\n"})],
                              "a.service"),
    "dropins-in-name-order": ([("b.service", SVC + "[Install]\nWantedBy=x.target\n",
                                {"20-add.conf": "[Install]\nWantedBy=z.target\nAlias=bb.service\n",
                                 "10-reset.conf": "[Install]\nWantedBy=\nWantedBy=y.target\n"})],
                              "b.service"),
    "not-conf-ignored": ([("c.service", SVC, {"i.txt": "[Install]\nWantedBy=multi-user.target\n"})], "c.service"),
    "template-dropin-for-instance": ([("t@.service", SVC, {"i.conf": "[Install]\nWantedBy=m.target\n"}),
                                      ("t@one.service", None, {"j.conf": "[Install]\nRequiredBy=r.target\n"})],
                                     "t@one.service"),
    "instance-dropin-wins": ([("u@.service", SVC, {"i.conf": "[Install]\nWantedBy=m.target\n"}),
                              ("u@one.service", None, {"i.conf": "[Install]\nWantedBy=n.target\n"})],
                             "u@one.service"),
    "also-unit-dropin": ([("d.service", SVC + "[Install]\nAlso=e.socket\n", {}),
                          ("e.socket", "[Socket]\nListenStream=9\n", {"i.conf": "[Install]\nWantedBy=sockets.target\n"})],
                         "d.service"),
}


@pytest.mark.realtool
@pytest.mark.parametrize("units,enable", DROPIN_INSTALL.values(), ids=DROPIN_INSTALL.keys())
def test_plan_reads_install_from_dropins_like_systemctl(units: list[tuple[str, str | None, dict[str, str]]],
                                                        enable: str, tmp_path: Path) -> None:
    unit_dir = tmp_path / UNIT_DIR.lstrip("/")
    config_units = []
    for name, contents, dropins in units:
        unit: dict[str, object] = {"name": name, "dropins": [{"name": n, "contents": c} for n, c in dropins.items()]}
        if contents is not None:
            unit["contents"] = contents
            (unit_dir).mkdir(parents=True, exist_ok=True)
            (unit_dir / name).write_text(contents)
        if name == enable:
            unit["enabled"] = True
        for dropin, text in dropins.items():
            (unit_dir / f"{name}.d").mkdir(parents=True, exist_ok=True)
            (unit_dir / f"{name}.d" / dropin).write_text(text)
        config_units.append(unit)
    systemctl_enable(tmp_path, [enable])
    plan = plan_image(rendered_config("rendered-worker-1", config={"ignition": {"version": "3.2.0"},
                                                                   "systemd": {"units": config_units}}))
    assert not plan.refused
    ours = {e.path: e.target for e in plan.entries if e.kind == "symlink"}
    assert ours == _links(tmp_path)
