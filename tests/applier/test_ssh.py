"""core's SSH key file: where it is written and what else under ~core/.ssh goes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from applier.ssh import write_keys
from tests.applier.helpers import make_root

CONFIG = {"passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA one", "ssh-rsa BBBB two"]}]}}


def legacy_file(ssh: Path) -> None:
    ssh.mkdir(mode=0o700)
    os.chown(ssh, 1000, 1000)
    (ssh / "authorized_keys").write_text("ssh-ed25519 OLD\n")


def other_fragment(ssh: Path) -> None:
    (ssh / "authorized_keys.d").mkdir(parents=True)
    for d in (ssh, ssh / "authorized_keys.d"):
        os.chown(d, 1000, 1000)
    (ssh / "authorized_keys.d/afterburn").write_text("ssh-ed25519 CLOUD\n")


def root_owned_dir(ssh: Path) -> None:
    ssh.mkdir()  # owned by root, as a bad write by hand leaves it (OCPBUGS-11832)
    (ssh / "config").write_text("Host *\n")


# MCO pkg/daemon/update.go updateSSHKeys on RHCOS 9+/FCOS/SCOS (useNewSSHKeyPath): the keys go to
# ~core/.ssh/authorized_keys.d/ignition only; cleanSSHKeyPaths removes the legacy ~core/.ssh/authorized_keys,
# removeNonIgnitionKeyPathFragments every other fragment, and atomicallyWriteSSHKey removes a ~core/.ssh not
# owned by core and creates it again (0700, owner core).
BEFORE = [
    ("legacy-file", legacy_file, "authorized_keys"),
    ("other-fragment", other_fragment, "authorized_keys.d/afterburn"),
    ("root-owned-ssh-dir", root_owned_dir, "config"),
]


@pytest.mark.parametrize("put,gone", [c[1:] for c in BEFORE], ids=[c[0] for c in BEFORE])
def test_keys_are_the_only_key_file_left(tmp_path: Path, put, gone: str) -> None:
    root = make_root(tmp_path / "root")
    ssh = root / "home/core/.ssh"
    put(ssh)
    assert write_keys(root, CONFIG, durable=False) == "/home/core/.ssh/authorized_keys.d/ignition"
    keys = ssh / "authorized_keys.d/ignition"
    assert keys.read_text() == "ssh-ed25519 AAAA one\nssh-rsa BBBB two\n"
    assert (stat.S_IMODE(keys.stat().st_mode), keys.stat().st_uid, keys.stat().st_gid) == (0o600, 1000, 1000)
    for d in (ssh, ssh / "authorized_keys.d"):
        assert (stat.S_IMODE(d.stat().st_mode), d.stat().st_uid) == (0o700, 1000)
    assert not (ssh / gone).exists()
    assert os.listdir(ssh / "authorized_keys.d") == ["ignition"]
