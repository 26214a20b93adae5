"""Every drift is an event the fleet sees: the real agent reports each one (the same path tampered with again and
again too), the server keeps a bounded list in the node record and counts them in /metrics, `mco drift list`
prints the fleet's inventory, and `mco drift export NODE` turns a node's unrepaired drift into a MachineConfig that
renders like any other manifest."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import requests

from fleet.directory_store import DirectoryStore
from fleet.drift_events import DRIFT_LIMIT, DriftEvent, DriftEventError, kept, parse_events
from tests.applier.drift_lab import NODE, RULES, WATCH_ONLY, drift_lab
from tests.serving import env, mco
from tests.tools import real_tool


def _events(lab) -> list[dict]:
    return DirectoryStore(lab.store).get_node_status(NODE).to_dict().get("drift", [])


def test_each_repair_is_an_event_even_when_it_repeats(tmp_path: Path) -> None:
    real_tool("systemctl")
    with drift_lab(tmp_path, interval=WATCH_ONLY) as lab:
        for trial in range(3):
            (lab.root / RULES).write_text("-D\n")
            lab.until(lab.rules_ok, 60, f"trial {trial}")
            lab.until(lambda n=trial: len(_events(lab)) > n, 60, f"event {trial} reported")
        events = _events(lab)
        assert [(e["kind"], e["path"], e["repaired"]) for e in events] == [("file", "/" + RULES, True)] * 3
        assert events[0]["found"].startswith("sha256:") and events[0]["found"] != events[0]["expected"]
        metrics = requests.get(f"{lab.url}/metrics", timeout=10).text
        assert [line for line in metrics.splitlines() if line.startswith("mco_drift")] == [
            'mco_drift_events_total{kind="file",pool="worker",repaired="true"} 3.0']
        listed = subprocess.run(mco("drift", "list", "--store", str(lab.store), "--pool", "worker", "-o", "json"),
                                env=env(), capture_output=True, text=True, check=True)
        assert [(r["node"], r["path"]) for r in json.loads(listed.stdout)] == [(NODE, "/" + RULES)] * 3


def test_unrepaired_drift_exported_as_a_machineconfig_that_renders(tmp_path: Path) -> None:
    real_tool("systemctl")
    with drift_lab(tmp_path, interval=WATCH_ONLY, extra=("--drift", "report")) as lab:
        (lab.root / RULES).write_text("-w /etc/passwd -p wa -k identity\n")
        lab.until(lambda: lab.node().get("state") == "Degraded", 60, "reported Degraded")
        lab.until(lambda: bool(_events(lab)), 60, "event reported")
        assert _events(lab)[0]["repaired"] is False
        out = tmp_path / "99-drift.yaml"
        subprocess.run(mco("drift", "export", NODE, "--store", str(lab.store), "--output-file", str(out)),
                       env=env(), check=True, capture_output=True)
        text = out.read_text()
        assert "name: 99-worker-node-1-drift" in text and "machineconfiguration.openshift.io/role: worker" in text
        (lab.cluster / "manifests" / out.name).write_text(text)
        printed = subprocess.run(mco("render", str(lab.cluster), "--pool", "worker", "--print"), env=env(),
                                 capture_output=True, text=True, check=True).stdout
        assert "%2Fetc%2Fpasswd" in printed or "/etc/passwd -p wa" in printed or "L2V0Yy9wYXNzd2Q" in printed
    refused = subprocess.run(mco("drift", "export", "no-such-node", "--store", str(lab.store)), env=env(),
                             capture_output=True, text=True)
    assert refused.returncode == 1 and "no node 'no-such-node'" in refused.stderr


def _event(i: int, **kw) -> DriftEvent:
    return DriftEvent(**{"kind": "file", "path": f"/etc/{i}", "expected": "a", "found": "b",
                         "at": "2026-01-01T00:00:00Z", "repaired": True, **kw})


def test_record_keeps_the_newest_events_up_to_its_limit() -> None:
    old = tuple(_event(i) for i in range(DRIFT_LIMIT))
    new = (_event(100), _event(101))
    assert kept(new, old)[:3] == (_event(101), _event(100), _event(0)) and len(kept(new, old)) == DRIFT_LIMIT


BAD = [
    ("not-a-list", {"x": 1}, "$.drift"),
    ("unknown-kind", [{**_event(1).to_dict(), "kind": "mood"}], "$.drift[0].kind"),
    ("repaired-not-bool", [{**_event(1).to_dict(), "repaired": "yes"}], "$.drift[0].repaired"),
    ("mode-out-of-range", [{**_event(1).to_dict(), "mode": 70000}], "$.drift[0].mode"),
    ("path-missing", [{k: v for k, v in _event(1).to_dict().items() if k != "path"}], "$.drift[0].path"),
    ("too-many", [_event(1).to_dict()] * 51, "$.drift"),
]


@pytest.mark.parametrize(("body", "path"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_malformed_events_are_refused_naming_the_field(body, path: str) -> None:
    with pytest.raises(DriftEventError) as caught:
        parse_events(body)
    assert caught.value.path == path
