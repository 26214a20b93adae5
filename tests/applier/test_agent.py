"""The agent's sync on a directory root: first apply, no-op, rebootless policy change, refusals, failures, drift."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from applier.agent import Agent, AgentSettings
from applier.backends.none import NoBackend
from applier.hooks import Hooks
from applier.runner import SubprocessRunner
from fleet.disruption_policy import DisruptionPolicy
from tests.applier.doubles import MemoryReporter, MemorySource
from tests.applier.helpers import SERVICE, file_entry, make_root, reboot_command, unit
from tests.builders import rendered_config
from tests.tools import real_tool

POLICY = {"files": [{"path": "/etc/chrony.conf", "actions": [{"type": "Restart",
                                                              "restart": {"serviceName": "chronyd.service"}}]}]}
ANN = {"machineconfiguration.openshift.io/node-disruption-policy": json.dumps(POLICY)}


def v1(**kw):
    return rendered_config("v1", [file_entry("/etc/chrony.conf", "server a\n"), file_entry("/etc/app.conf", "x=1\n", 0o600)],
                    [unit("app.service", SERVICE.format(name="app"), True)], keys=["ssh-ed25519 AAAA one"],
                    annotations=ANN, **kw)


class Node:
    """One node root with an agent, a memory source and reporter, and a reboot command that logs."""

    def __init__(self, tmp: Path, **settings) -> None:
        real_tool("systemctl")
        self.root = make_root(tmp / "root")
        self.log = tmp / "events.log"
        self.source = MemorySource()
        self.reporter = MemoryReporter()
        hooks = Hooks(drain=f"echo drain {{node}} >> {self.log}", uncordon=f"echo uncordon $NODE >> {self.log}")
        self.agent = Agent(AgentSettings(node="n1", root=self.root, reboot_command=reboot_command(self.root, self.log),
                                         hooks=hooks, durable=False, **settings),
                           source=self.source, reporter=self.reporter, backend=NoBackend(), runner=SubprocessRunner())

    def events(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def sync(self, config=None, **kw):
        if config is not None:
            self.source.config = config
        return self.agent.sync(**kw)


@pytest.fixture
def node(tmp_path: Path) -> Node:
    n = Node(tmp_path)
    (n.root / "etc/chrony.conf").write_text("os default\n")
    first = n.sync(v1())
    assert first.rebooting and first.state == "Working"
    after = n.sync()
    assert (after.state, after.current) == ("Done", "rendered-worker-v1"), after.message
    assert n.events() == ["drain", "n1", "reboot", "uncordon", "n1"]
    n.log.unlink()
    return n


def test_first_apply_wrote_everything(node: Node) -> None:
    r = node.root
    assert (r / "etc/chrony.conf").read_text() == "server a\n"
    assert stat.S_IMODE((r / "etc/app.conf").stat().st_mode) == 0o600
    assert os.readlink(r / "etc/systemd/system/multi-user.target.wants/app.service") == "/etc/systemd/system/app.service"
    keys = r / "home/core/.ssh/authorized_keys.d/ignition"
    assert keys.read_text() == "ssh-ed25519 AAAA one\n" and keys.stat().st_uid == 1000
    assert [(x.state, x.phase) for x in node.reporter.reports] == [
        ("Working", "prepared"), ("Working", "drained"), ("Working", "written"), ("Working", "reboot-requested"),
        ("Working", "rebooted"), ("Working", "verified"), ("Working", "uncordoned"), ("Done", "done")]
    assert node.reporter.reports[-1].pool == "worker"


def test_noop_sync_touches_nothing(node: Node) -> None:
    before = (node.root / "etc/app.conf").stat().st_mtime_ns
    result = node.sync()
    assert (result.state, result.changed, node.events()) == ("Done", False, [])
    assert (node.root / "etc/app.conf").stat().st_mtime_ns == before


def test_policy_change_applies_without_reboot(node: Node) -> None:
    v2 = rendered_config("v2", [file_entry("/etc/chrony.conf", "server b\n"), file_entry("/etc/app.conf", "x=1\n", 0o600)],
                  [unit("app.service", SERVICE.format(name="app"), True)], keys=["ssh-ed25519 AAAA one"],
                  annotations=ANN)
    result = node.sync(v2)
    assert (result.state, result.rebooting, node.events()) == ("Done", False, [])
    assert result.message == "applied rendered-worker-v2 without reboot (restart)"
    assert (node.root / "etc/chrony.conf").read_text() == "server b\n"


def test_unreconcilable_refused_nothing_changed(node: Node) -> None:
    bad = rendered_config("v3", [file_entry("/etc/chrony.conf", "changed\n")], fips=True)
    result = node.sync(bad)
    assert result.state == "Degraded"
    assert result.message == ('new machineconfig "rendered-worker-v1" is not reconcilable against "rendered-worker-v3": '
                              "detected change to FIPS flag; refusing to modify FIPS on a running cluster")
    assert (node.root / "etc/chrony.conf").read_text() == "server a\n"
    assert node.agent.state.current().name == "rendered-worker-v1" and node.agent.state.pending() is None


def test_failure_degrades_naming_the_path_and_reverts(node: Node) -> None:
    (node.root / "etc/blocked").mkdir()
    bad = rendered_config("v4", [file_entry("/etc/app.conf", "x=2\n", 0o600), file_entry("/etc/blocked", "y\n"),
                          file_entry("/etc/chrony.conf", "server a\n")],
                   [unit("app.service", SERVICE.format(name="app"), True)], keys=["ssh-ed25519 AAAA one"])
    result = node.sync(bad)
    assert result.state == "Degraded"
    assert result.message == ("failed to apply rendered-worker-v4: /etc/blocked: cannot write file: "
                              "a directory is in the way")
    assert (node.root / "etc/app.conf").read_text() == "x=1\n"  # old state intact
    assert node.agent.state.current().name == "rendered-worker-v1" and node.agent.state.pending() is None


def test_file_leaving_config_restores_original(node: Node) -> None:
    v5 = rendered_config("v5", [file_entry("/etc/app.conf", "x=1\n", 0o600)],
                  [unit("app.service", SERVICE.format(name="app"), True)], keys=["ssh-ed25519 AAAA one"])
    node.sync(v5)
    node.sync()  # after the reboot that removing an unpolicied file needs
    assert (node.root / "etc/chrony.conf").read_text() == "os default\n"


@pytest.mark.parametrize("mode,state,message", [
    ("repair", "Done", "repaired drift: file /etc/app.conf"),
    ("report", "Degraded", 'unexpected on-disk state validating against rendered-worker-v1: '
                           'content mismatch for file "/etc/app.conf"'),
], ids=["repair", "report"])
def test_drift(tmp_path: Path, mode: str, state: str, message: str) -> None:
    n = Node(tmp_path, drift=mode)
    n.sync(v1())
    n.sync()
    (n.root / "etc/app.conf").write_text("edited by hand\n")
    result = n.sync()
    assert (result.state, result.message) == (state, message)
    if mode == "report":
        assert (n.root / "etc/app.conf").read_text() == "edited by hand\n"
        fixed = n.sync(repair=True)  # `mco apply --once --repair`
        assert fixed.state == "Done"
    assert (n.root / "etc/app.conf").read_text() == "x=1\n"


def test_drift_mode_change_and_unit_drift(node: Node) -> None:
    os.chmod(node.root / "etc/app.conf", 0o644)
    (node.root / "etc/systemd/system/multi-user.target.wants/app.service").unlink()
    result = node.sync()
    assert result.message == "repaired drift: file /etc/app.conf, unit app.service"
    assert stat.S_IMODE((node.root / "etc/app.conf").stat().st_mode) == 0o600


def test_explicit_policy_overrides_annotation(tmp_path: Path) -> None:
    n = Node(tmp_path, policy=DisruptionPolicy.defaults())
    n.sync(v1())
    n.sync()
    v2 = rendered_config("v2", [file_entry("/etc/chrony.conf", "server b\n"), file_entry("/etc/app.conf", "x=1\n", 0o600)],
                  [unit("app.service", SERVICE.format(name="app"), True)], keys=["ssh-ed25519 AAAA one"],
                  annotations=ANN)
    assert n.sync(v2).rebooting  # default policies have no entry for /etc/chrony.conf


def test_first_run_adopts_what_is_on_disk(tmp_path: Path) -> None:
    n = Node(tmp_path)
    cfg = v1()
    (n.root / "etc/chrony.conf").write_text("server a\n")  # as Ignition would have written them
    (n.root / "etc/app.conf").write_text("x=1\n")
    os.chmod(n.root / "etc/app.conf", 0o600)
    d = n.root / "etc/systemd/system"
    d.mkdir(parents=True)
    (d / "app.service").write_text(SERVICE.format(name="app"))
    (d / "multi-user.target.wants").mkdir()
    os.symlink("/etc/systemd/system/app.service", d / "multi-user.target.wants/app.service")
    keys = n.root / "home/core/.ssh/authorized_keys.d"
    keys.mkdir(parents=True)
    (keys / "ignition").write_text("ssh-ed25519 AAAA one\n")
    os.chmod(keys / "ignition", 0o600)
    result = n.sync(cfg)
    assert (result.state, result.rebooting, n.events()) == ("Done", False, [])
    assert n.agent.state.noorig("/etc/chrony.conf").exists()  # adopted: deleted, not left, when it leaves


# MCO pkg/daemon/update.go deleteStaleData: a unit or drop-in of the old config that the new one lacks is deleted
# unless a `.mcdorig` backup is restored, stamp or no stamp, so one Ignition wrote at first boot (never written
# by the daemon) goes too; the agent's first run adopts it (stamps it as its own) for that.
FIRST_BOOT_UNITS = [
    ("unit", unit("app.service", SERVICE.format(name="app")), "etc/systemd/system/app.service",
     lambda d: (d / "app.service").write_text(SERVICE.format(name="app"))),
    ("masked", unit("bad.service", mask=True), "etc/systemd/system/bad.service",
     lambda d: os.symlink("/dev/null", d / "bad.service")),
    ("dropin", unit("crio.service", dropins=[{"name": "10-x.conf", "contents": "[Service]\nNice=5\n"}]),
     "etc/systemd/system/crio.service.d/10-x.conf",
     lambda d: ((d / "crio.service.d").mkdir(), (d / "crio.service.d/10-x.conf").write_text("[Service]\nNice=5\n"))),
]


@pytest.mark.parametrize("entry,path,put", [c[1:] for c in FIRST_BOOT_UNITS], ids=[c[0] for c in FIRST_BOOT_UNITS])
def test_first_boot_unit_leaving_config_is_removed(tmp_path: Path, entry: dict, path: str, put) -> None:
    n = Node(tmp_path)
    (n.root / "etc/systemd/system").mkdir(parents=True)
    put(n.root / "etc/systemd/system")  # as Ignition wrote it at first boot
    first = rendered_config("v1", [], [entry])
    assert n.sync(first).state == "Done"
    n.sync(rendered_config("v2", [], []))
    result = n.sync()  # after the reboot a unit change asks for
    assert (result.state, result.current) == ("Done", "rendered-worker-v2"), result.message
    assert not (n.root / path).exists() and not (n.root / path).is_symlink()


def passwd_config(name: str, *users: dict) -> object:
    """A rendered config whose passwd holds `users` (and an app file, so each one is an update)."""
    return rendered_config(name, config={"ignition": {"version": "3.5.0"}, "passwd": {"users": list(users)},
                                         "storage": {"files": [file_entry("/etc/app.conf", f"{name}\n")]}})


# MCO pkg/daemon/update.go SetPasswordHash (run by update() on every update): `usermod -p` gives each user of the
# config its passwordHash, or "*" when it has none; deconfigureAbsentUsers gives a user the new config lost "".
PASSWORDS = [
    ("hash", [{"name": "core", "passwordHash": "$6$s$h1"}], "$6$s$h1"),
    ("keys-only", [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA one"]}], "*"),
    ("empty-hash", [{"name": "core", "passwordHash": "", "sshAuthorizedKeys": ["ssh-ed25519 AAAA one"]}], "*"),
    ("core-dropped", [], ""),
]


@pytest.mark.parametrize("users,expected", [c[1:] for c in PASSWORDS], ids=[c[0] for c in PASSWORDS])
def test_password_hash_is_set_on_update(tmp_path: Path, users: list, expected: str) -> None:
    real_tool("usermod")
    n = Node(tmp_path)
    shadow = n.root / "etc/shadow"
    shadow.write_text("root:*:19000:0:99999:7:::\ncore:!!:19000:0:99999:7:::\n")
    os.chmod(shadow, 0)
    for name, config_users in (("v1", [{"name": "core", "passwordHash": "$6$s$old"}]), ("v2", users)):
        result = n.sync(passwd_config(name, *config_users))
        result = n.sync() if result.rebooting else result  # after the reboot a new file asks for
        assert (result.state, result.current) == ("Done", f"rendered-worker-{name}"), result.message
        if name == "v1":
            assert shadow.read_text().splitlines()[1].split(":")[1] == "$6$s$old"
    assert shadow.read_text().splitlines()[1].split(":")[1] == expected
    assert stat.S_IMODE(shadow.stat().st_mode) == 0


# MCO pkg/daemon/update.go reconcilable -> checkFIPS: the desired config's `fips` must be what the node runs
# (/proc/sys/crypto/fips_enabled, when there is one), whatever the old config said; otherwise the update is
# refused ("detected change to FIPS flag; refusing to modify FIPS on a running cluster") and nothing changes.
NODE_FIPS = [
    ("fips-node-config-off", "1", False, "Degraded"),
    ("plain-node-config-on", "0", True, "Degraded"),
    ("fips-node-config-on", "1", True, "Done"),
    ("plain-node-config-off", "0", False, "Done"),
]


@pytest.mark.parametrize("enabled,fips,state", [c[1:] for c in NODE_FIPS], ids=[c[0] for c in NODE_FIPS])
def test_update_refused_when_the_node_fips_mode_is_not_the_desired_one(tmp_path: Path, enabled: str, fips: bool,
                                                                       state: str) -> None:
    n = Node(tmp_path)
    (n.root / "etc/crypto-policies").mkdir(parents=True)
    (n.root / "etc/crypto-policies/config").write_text("FIPS\n" if enabled == "1" else "DEFAULT\n")
    assert n.sync(rendered_config("v1", [], [], fips=fips)).state == "Done"
    (n.root / "proc/sys/crypto").mkdir(parents=True)
    (n.root / "proc/sys/crypto/fips_enabled").write_text(enabled + "\n")
    result = n.sync(rendered_config("v2", [], [unit("app.service", SERVICE.format(name="app"))], fips=fips))
    result = n.sync() if result.rebooting else result
    assert result.state == state, result.message
    if state == "Degraded":
        assert result.message.endswith("detected change to FIPS flag; refusing to modify FIPS on a running cluster")
        assert not (n.root / "etc/systemd/system/app.service").exists()
