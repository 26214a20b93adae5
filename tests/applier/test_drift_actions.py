"""A repair is a small update: after writing back what drifted, the agent runs what the node disruption policy
names for those paths and units (daemon-reload, reload, restart), never the reboot an update would take for a path
no policy names, and reboots only for a policy that asks for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from applier.agent import Agent, AgentSettings
from applier.backends.none import NoBackend
from applier.repairing import Repair
from tests.applier.doubles import MemoryReporter, MemorySource, RecordingRunner
from tests.applier.helpers import file_entry, make_root, new_boot, reboot_command
from tests.builders import rendered_config

POLICY = {"files": [{"path": "/etc/audit/rules.d", "actions": [{"type": "Restart",
                                                                "restart": {"serviceName": "auditd.service"}}]},
                    {"path": "/etc/app", "actions": [{"type": "Reload", "reload": {"serviceName": "app.service"}}]},
                    {"path": "/etc/quiet", "actions": [{"type": "None"}]},
                    {"path": "/etc/kernel-ish", "actions": [{"type": "Reboot"}]}],
          "units": [{"name": "auditd.service", "actions": [{"type": "DaemonReload"},
                                                           {"type": "Restart",
                                                            "restart": {"serviceName": "auditd.service"}}]}]}
FILES = {"/etc/audit/rules.d/99.rules": "-w /etc/shadow\n", "/etc/app/app.conf": "level=1\n",
         "/etc/quiet/q.conf": "q\n", "/etc/unnamed.conf": "u\n", "/etc/kernel-ish/k.conf": "k\n"}


def config(name: str = "v1"):
    return rendered_config(name, [file_entry(p, t) for p, t in FILES.items()],
                    annotations={"machineconfiguration.openshift.io/node-disruption-policy": json.dumps(POLICY)})


def agent(tmp_path: Path, runner: RecordingRunner | None = None) -> Agent:
    root = make_root(tmp_path / "root")
    node = Agent(AgentSettings(node="n1", root=root, durable=False, reboot_command=reboot_command(root)),
                 source=MemorySource(config()), reporter=MemoryReporter(), backend=NoBackend(),
                 runner=runner or RecordingRunner())
    first = node.sync()
    if first.rebooting:  # a first run of files with a Reboot policy: through its (simulated) reboot
        first = node.sync()
    assert first.state == "Done", first
    return node


CASES = [
    ("restart-policy", ["/etc/audit/rules.d/99.rules"], [], "restart", ["Restart auditd.service"]),
    ("reload-policy", ["/etc/app/app.conf"], [], "reload", ["Reload app.service"]),
    ("none-policy", ["/etc/quiet/q.conf"], [], "none", ["None"]),
    ("no-policy-no-reboot", ["/etc/unnamed.conf"], [], "none", ["None"]),
    ("unit-policy", [], ["auditd.service"], "restart", ["DaemonReload", "Restart auditd.service"]),
    ("reboot-policy", ["/etc/kernel-ish/k.conf"], [], "reboot", ["Reboot"]),
    ("several", ["/etc/app/app.conf", "/etc/unnamed.conf"], ["auditd.service"], "restart",
     ["Reload app.service", "DaemonReload", "Restart auditd.service"]),
]


@pytest.mark.parametrize(("files", "units", "verdict", "actions"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_what_a_repair_asks_for(tmp_path: Path, files, units, verdict, actions) -> None:
    decided = agent(tmp_path).planner.repair_disruption(config(), Repair(files, units, []))
    assert (decided.verdict, [str(a) for a in decided.actions]) == (verdict, actions)


def test_repair_runs_the_policy_actions_on_a_live_system(tmp_path: Path) -> None:
    runner = RecordingRunner()
    node = agent(tmp_path, runner)
    node.systemctl.live = True  # what a node root of / is: systemctl acts on the running system
    (node.root / "etc/audit/rules.d/99.rules").write_text("-D\n")
    runner.calls.clear()
    result = node.sync()
    assert (result.state, result.message) == (
        "Done", "repaired drift: file /etc/audit/rules.d/99.rules; actions: restart auditd.service")
    assert runner.calls == [("systemctl", "restart", "auditd.service")]


def test_repair_under_a_directory_root_says_what_it_could_not_run(tmp_path: Path) -> None:
    node = agent(tmp_path)
    (node.root / "etc/app/app.conf").write_text("level=0\n")
    result = node.sync()
    assert result.message == "repaired drift: file /etc/app/app.conf; no live system to reload"


def test_reboot_only_when_the_policy_asks(tmp_path: Path) -> None:
    node = agent(tmp_path)
    (node.root / "etc/unnamed.conf").write_text("changed\n")
    assert node.sync().message == "repaired drift: file /etc/unnamed.conf"  # an update would reboot for it
    (node.root / "etc/kernel-ish/k.conf").write_text("changed\n")
    asked = node.sync()
    assert asked.rebooting and node.state.pending().config.name == "rendered-worker-v1"
    new_boot(node.root)
    after = node.sync()
    assert (after.state, after.message) == ("Done", "rebooted into rendered-worker-v1; verification passed")
