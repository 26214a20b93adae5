"""docs/alerts.yaml against the series the server really exports: `promtool check rules`, every series an
expression names present in a real scrape of `/metrics`, and `promtool test rules` on that scrape's series
(every alert fires on a fleet in trouble, none on a healthy one).

promtool is Debian's `prometheus` package (scripts/debian-packages.txt: CI installs it); where it is absent the
promtool steps skip saying so, and the check of the names against the scrape still runs."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from fleet.etcd_mirror import Health
from fleet.phases import PhaseEntry
from fleet.rendered import Condition, HistoryEntry
from fleet.store import MemoryStore
from server.fleet_metrics import fleet_families
from tests.server.conftest import MakeClient
from tests.server.fleetpage.fleet import mid_rollout

ALERTS = Path(__file__).resolve().parents[2] / "docs" / "alerts.yaml"
LONG_AGO = "2026-01-01T00:00:00Z"


def _rules() -> list[dict[str, Any]]:
    return [r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]]


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool not installed (Debian package prometheus, in scripts/debian-packages.txt)")
    return found


def _troubled(store: MemoryStore) -> None:
    """worker mid-rollout with a degraded node, its target changed long ago, one node long in a drain; master's
    render failed."""
    rollout = mid_rollout(store)
    worker = store.get_pool("worker")
    store.put_pool(replace(worker, history=(HistoryEntry(rollout.new.name, LONG_AGO),)))
    node = store.get_node_status("worker-1")
    store.put_node_status(replace(node, timeline=(PhaseEntry("drained", LONG_AGO, rollout.new.name),)))
    master = store.get_pool("master")
    store.put_pool(replace(master, conditions=(Condition("RenderDegraded", "True", message="broken"),)))


async def _scrape(make_client: MakeClient, store: MemoryStore) -> dict[str, list[tuple[dict[str, str], float]]]:
    client = await make_client(store)
    text = await (await client.get("/metrics")).text()
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return found


def _store_series(current: bool) -> dict[str, list[tuple[dict[str, str], float]]]:
    """An etcd replica's store gauges, from the exporter itself (a replica's mirror health)."""
    health = Health(current, 10, 10 if current else 15, 0.5, 0)
    families = fleet_families([], [], datetime.now(UTC), health)
    return {s.name: [(dict(s.labels), s.value)] for f in families for s in f.samples if s.name.startswith("mco_store")}


def _names(expr: str) -> set[str]:
    return set(re.findall(r"\bmco_[a-z_]+\b", expr))


def test_rules_pass_promtool_check() -> None:
    proc = subprocess.run([_promtool(), "check", "rules", str(ALERTS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


async def test_every_series_an_alert_names_is_exported(make_client: MakeClient) -> None:
    store = MemoryStore()
    _troubled(store)
    exported = {**await _scrape(make_client, store), **_store_series(False)}
    for rule in _rules():
        assert _names(rule["expr"]) <= exported.keys(), (rule["alert"], _names(rule["expr"]) - exported.keys())


def _series(scrape: dict[str, list[tuple[dict[str, str], float]]], names: set[str]) -> list[dict[str, str]]:
    """promtool input series: each scraped sample of `names`, constant for the test's hour."""
    out = []
    for name in sorted(names):
        for labels, value in scrape.get(name, []):
            shown = ",".join(f'{k}="{v}"' for k, v in sorted({**labels, "instance": "mco-1"}.items()))
            out.append({"series": f"{name}{{{shown}}}", "values": f"{value:g}x60"})
    return out


def _annotations(rule: dict[str, Any], labels: dict[str, str]) -> dict[str, str]:
    """The rule's annotations with `{{ $labels.X }}` filled in (the rules use no other template)."""
    filled = {}
    for key, text in rule["annotations"].items():
        for name, value in labels.items():
            text = text.replace(f"{{{{ $labels.{name} }}}}", value)
        assert "{{" not in text, (rule["alert"], text)
        filled[key] = text
    return filled


@pytest.mark.parametrize("trouble", [True, False], ids=["troubled-fleet", "healthy-fleet"])
async def test_promtool_unit_tests_on_the_scraped_series(make_client: MakeClient, tmp_path: Path,
                                                         trouble: bool) -> None:
    promtool = _promtool()
    store = MemoryStore()
    if trouble:
        _troubled(store)
    else:
        rollout = mid_rollout(store, done_old=0)
        for name in ("worker-1", "worker-2"):
            node = store.get_node_status(name)
            store.put_node_status(replace(node, current_config=rollout.new.name, state="Done", message=""))
    scrape = {**await _scrape(make_client, store), **_store_series(not trouble)}
    names = set().union(*(_names(r["expr"]) for r in _rules()))
    firing = {"MachineConfigPoolDegraded": [{"pool": "worker"}],
              "MachineConfigRolloutStalled": [{"pool": "worker"}],
              "MachineConfigNodeStuckInPhase": [{"pool": "worker", "phase": "drained"}],
              "MachineConfigReplicaBehindStore": [{"instance": "mco-1"}],
              "MachineConfigRenderDegraded": [{"pool": "master"}]}
    tests = {"rule_files": [str(ALERTS)], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": _series(scrape, names),
        "alert_rule_test": [{"eval_time": "45m", "alertname": rule["alert"],
                              "exp_alerts": [{"exp_labels": {**labels, "severity": rule["labels"]["severity"]},
                                              "exp_annotations": _annotations(rule, labels)}
                                             for labels in firing[rule["alert"]]] if trouble else []}
                             for rule in _rules()]}]}
    (tmp_path / "alerts.test.yaml").write_text(yaml.safe_dump(tests))
    proc = subprocess.run([promtool, "test", "rules", str(tmp_path / "alerts.test.yaml")], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr

