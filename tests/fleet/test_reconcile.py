"""Day-2 reconcilability (MCO `pkg/controller/common/reconcile.go`: isConfigReconcilable) with MCO's exact texts."""

from __future__ import annotations

from typing import Any

import pytest

from fleet.reconcile import check_reconcilable, not_reconcilable_message
from fleet.rendered import MachineConfigSpec

V = {"version": "3.4.0"}


def _s(fips: bool = False, **cfg: Any) -> MachineConfigSpec:
    return MachineConfigSpec(config={"ignition": V, **cfg}, fips=fips)


CASES = [
    ("files-ok", _s(), _s(storage={"files": [{"path": "/etc/a"}]}), (), []),
    ("units-ok", _s(), _s(systemd={"units": [{"name": "a.service", "enabled": True}]}), (), []),
    ("core-keys-ok", _s(), _s(passwd={"users": [{"name": "core", "sshAuthorizedKeys": ["k"]}]}), (), []),
    ("empty-users-ok", _s(passwd={"users": [{"name": "core", "sshAuthorizedKeys": ["k"]}]}), _s(), (), []),
    ("null-equals-empty", _s(storage={"disks": []}), _s(storage={"disks": None}), (), []),
    ("groups", _s(), _s(passwd={"groups": [{"name": "g"}]}), (),
     ["invalid passwd change(s): ignition Passwd Groups section contains changes"]),
    ("non-core", _s(), _s(passwd={"users": [{"name": "bob", "sshAuthorizedKeys": ["k"]}]}), (),
     ["invalid passwd change(s): ignition passwd user section contains unsupported changes: non-core user"]),
    ("core-extra-field", _s(), _s(passwd={"users": [{"name": "core", "sshAuthorizedKeys": ["k"], "uid": 1000}]}), (),
     ["invalid passwd change(s): SSH keys and password hash are not reconcilable"]),
    ("core-no-keys", _s(), _s(passwd={"users": [{"name": "core", "shell": "/bin/sh"}]}), (),
     ["invalid passwd change(s): ignition passwd user section contains unsupported changes: user must be core "
      "and have 1 or more sshKeys"]),
    ("ign-kargs", _s(), _s(kernelArguments={"shouldExist": ["nosmt"]}), (),
     ["ignition kargs section contains changes"]),
    ("disks", _s(), _s(storage={"disks": [{"device": "/dev/vdb"}]}), (), ["ignition disks section contains changes"]),
    ("disks-overridden", _s(), _s(storage={"disks": [{"device": "/dev/vdb"}]}), ("Disks",), []),
    ("filesystems", _s(), _s(storage={"filesystems": [{"device": "/dev/vdb"}]}), ("Disks",),
     ["ignition filesystems section contains changes"]),
    ("raid", _s(), _s(storage={"raid": [{"name": "md0"}]}), ("FileSystems",), ["ignition raid section contains changes"]),
    ("directories", _s(), _s(storage={"directories": [{"path": "/var/x"}]}), ("Disks", "FileSystems", "Raid"),
     ["ignition directories section contains changes"]),
    ("links-added", _s(), _s(storage={"links": [{"path": "/etc/l", "target": "/x"}]}), (),
     ["ignition links section contains changes"]),
    ("links-removed-ok", _s(storage={"links": [{"path": "/etc/l", "target": "/x"}]}), _s(), (), []),
    ("append", _s(), _s(storage={"files": [{"path": "/etc/a", "append": [{"source": "data:,x"}]}]}), (),
     ["ignition file /etc/a includes append"]),
    ("force-file", _s(), _s(storage={"files": [{"path": "/run/machine-config-daemon-force"}]}), (),
     ["cannot create /run/machine-config-daemon-force via Ignition"]),
    ("fips", _s(), _s(fips=True), (), ["detected change to FIPS flag; refusing to modify FIPS on a running cluster"]),
    ("several-in-mco-order", _s(), _s(fips=True, storage={"directories": [{"path": "/d"}]},
                                      kernelArguments={"shouldExist": ["a"]}), (),
     ["ignition kargs section contains changes", "ignition directories section contains changes",
      "detected change to FIPS flag; refusing to modify FIPS on a running cluster"]),
]


@pytest.mark.parametrize("old,new,overrides,errors", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reconcilable(old: MachineConfigSpec, new: MachineConfigSpec, overrides: tuple, errors: list[str]) -> None:
    assert check_reconcilable(old, new, overrides=overrides) == errors


def test_wrapped_message() -> None:
    assert not_reconcilable_message("rendered-worker-a", "rendered-worker-b", "x") == (
        'new machineconfig "rendered-worker-a" is not reconcilable against "rendered-worker-b": x')
