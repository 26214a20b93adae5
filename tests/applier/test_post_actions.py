"""The post-config actions an update runs on a live system, in the order the disruption lists them and with its
repeats: MCO `pkg/daemon/update.go` performPostConfigChangeNodeDisruptionAction walks the action list once, in
order, running each (Special: `systemctl reload crio.service`); openshift/api `operator/v1`
NodeDisruptionPolicySpecFile.actions: "Actions will be applied in the order that they are set in this list";
MCO `docs/NodeDisruptionPolicy.md`: "There is no dedup of the final actions list"."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from applier.agent import Agent, AgentSettings
from applier.backends.none import NoBackend
from fleet.diff import diff_rendered
from fleet.disruption import disruption
from fleet.disruption_policy import DisruptionPolicy
from fleet.registries_conf import REGISTRIES_CONF
from fleet.rendered import MachineConfigSpec
from tests.applier.doubles import MemoryReporter, MemorySource, RecordingRunner
from tests.applier.helpers import make_root, reboot_command


def _restart(svc: str) -> dict[str, Any]:
    return {"type": "Restart", "restart": {"serviceName": svc}}


def _reload(svc: str) -> dict[str, Any]:
    return {"type": "Reload", "reload": {"serviceName": svc}}


def _spec(paths: dict[str, str]) -> MachineConfigSpec:
    files = [{"path": p, "mode": 0o644, "contents": {"source": "data:;base64," + base64.b64encode(t.encode()).decode()}}
             for p, t in paths.items()]
    return MachineConfigSpec(config={"ignition": {"version": "3.4.0"}, "storage": {"files": files}})


CASES = [
    # id, the user's file policies, the files changed, the systemctl calls in order
    ("restart-before-reload", [{"path": "/etc/gen.conf", "actions": [_restart("gen.service"), _reload("web.service")]}],
     ["/etc/gen.conf"], [("restart", "gen.service"), ("reload", "web.service")]),
    ("daemon-reload-where-listed", [{"path": "/etc/gen.conf", "actions": [_restart("gen.service"),
                                                                         {"type": "DaemonReload"}]}],
     ["/etc/gen.conf"], [("restart", "gen.service"), ("daemon-reload",)]),
    ("repeats-kept", [{"path": "/etc/a", "actions": [_restart("app.service")]},
                      {"path": "/etc/b", "actions": [_reload("web.service"), _restart("app.service")]}],
     ["/etc/a/x", "/etc/b/y"], [("restart", "app.service"), ("reload", "web.service"), ("restart", "app.service")]),
    ("special-in-its-place", [{"path": "/etc/z", "actions": [_restart("z.service")]}],
     [REGISTRIES_CONF, "/etc/z/z.conf"], [("reload", "crio.service"), ("restart", "z.service")]),
    ("drain-and-none-run-nothing", [{"path": "/etc/d", "actions": [{"type": "Drain"}]},
                                    {"path": "/etc/n", "actions": [{"type": "None"}]}],
     ["/etc/d/x", "/etc/n/y"], []),
]


@pytest.mark.parametrize(("files", "changed", "calls"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_post_actions_run_in_list_order(tmp_path: Path, files: list, changed: list[str], calls: list[tuple]) -> None:
    policy = DisruptionPolicy.from_dict({"nodeDisruptionPolicy": {"files": files}})
    decided = disruption(diff_rendered(_spec({}), _spec({p: "x\n" for p in changed})), policy)
    assert not decided.reboot
    runner = RecordingRunner()
    root = make_root(tmp_path / "root")
    agent = Agent(AgentSettings(node="n1", root=root, durable=False, reboot_command=reboot_command(root)),
                  source=MemorySource(), reporter=MemoryReporter(), backend=NoBackend(), runner=runner)
    agent.systemctl.live = True  # what a node root of / is: systemctl acts on the running system
    done = agent.writer.post_actions(decided)
    assert runner.calls == [("systemctl", *c) for c in calls]
    assert done == [" ".join(c) for c in calls]
