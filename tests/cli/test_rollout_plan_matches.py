"""`mco rollout plan` against the rollout it predicts: the real `mco serve` hands the new target to simulated nodes
(claims and status reports over HTTP, asked in a shuffled order every time), each taking, in virtual time, the
duration the plan states for its action; the machines, actions, waves and starts are the plan's. Scenarios: canaries,
a machine being provisioned, a paused pool (then unpaused), machines already unavailable, machines unavailable
that fill maxUnavailable (the rollout stalls until the one the plan names is available), and a new OS image, which
the nodes pull before their slot when told to (`prestage=1`, as the agent), three at a time."""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from cli.main import main
from fleet.directory_store import DirectoryStore
from fleet.node_status import NodeStatus, with_report
from renderer.render import render_cluster
from tests.builders import machine_config_manifest
from tests.serving import serving

ROOT = Path(__file__).resolve().parents[2]
POOL_HEADER = "  name: worker\n  labels:"
CANARY = ('  name: worker\n  annotations:\n    rollout.machine-config.io/canaries: "2"\n'
          '    rollout.machine-config.io/soak: "0"\n  labels:')
POOLS = "manifests/00-pools.yaml"
WORKER_SPEC = "  maxUnavailable: 25%\n---"  # the worker pool's last spec line in examples/cluster


def _change(cluster: Path, generation: str) -> None:
    (cluster / "manifests" / "71-worker-extra.yaml").write_text(machine_config_manifest(
        "71-worker-extra", "worker", files={"/etc/extra.conf": f"data:,{generation}"}))


def _worker_spec(cluster: Path, lines: str) -> None:
    """Set the worker pool's maxUnavailable and other spec fields (`lines`, indented as spec fields)."""
    pools = cluster / POOLS
    assert WORKER_SPEC in pools.read_text()
    pools.write_text(pools.read_text().replace(WORKER_SPEC, lines + "\n---", 1))


def _put(store: DirectoryStore, name: str, current: str, desired: str, state: str, at: str, message: str = "") -> None:
    store.put_node_status(with_report(None, NodeStatus(name, "worker", current, desired, state, message, at)))


Setup = Callable[[Path, DirectoryStore, str], None]


def _canaries(cluster: Path, store: DirectoryStore, first: str) -> None:
    """Eight machines at the first config, two canaries."""


def _provisioning(cluster: Path, store: DirectoryStore, first: str) -> None:
    """A machine on its first update (it never ran a config), the oldest: a canary."""
    _put(store, "fresh", "", first, "Working", "2025-12-31T00:00:00Z")


def _paused(cluster: Path, store: DirectoryStore, first: str) -> None:
    """spec.paused, and a machine being provisioned, which is handed the target all the same."""
    _provisioning(cluster, store, first)
    _worker_spec(cluster, "  maxUnavailable: 25%\n  paused: true")


def _unavailable(cluster: Path, store: DirectoryStore, first: str) -> None:
    """maxUnavailable 4 of 8; w2 Degraded at its config, w5 updating at it, w6 on its way to the config the pool
    was rolling out when the change comes: three slots held, the first wave gets one."""
    _worker_spec(cluster, "  maxUnavailable: 50%")
    _change(cluster, "mid")
    render_cluster(cluster, store=store)
    mid = store.get_pool("worker").current
    assert mid and mid != first
    _put(store, "w2", first, first, "Degraded", "2026-01-03T00:00:00Z", "disk full")
    _put(store, "w5", first, first, "Working", "2026-01-06T00:00:00Z")
    _put(store, "w6", first, mid, "Working", "2026-01-07T00:00:00Z")


def _stalled(cluster: Path, store: DirectoryStore, first: str) -> None:
    """maxUnavailable 2 of 8 and two machines Degraded at their config: nothing is handed out until one is
    available again."""
    _put(store, "w2", first, first, "Degraded", "2026-01-03T00:00:00Z", "disk full")
    _put(store, "w5", first, first, "Degraded", "2026-01-06T00:00:00Z", "disk full")


def _os_image(cluster: Path, store: DirectoryStore, first: str) -> None:
    """The change moves the OS image too; the pool lets three machines pull at once."""
    (cluster / "manifests" / "72-worker-os.yaml").write_text(machine_config_manifest(
        "72-worker-os", "worker", os_image="quay.io/example/os@sha256:" + "2" * 64))
    pools = cluster / POOLS
    soak = '    rollout.machine-config.io/soak: "0"\n'
    pools.write_text(pools.read_text().replace(
        soak, soak + '    rollout.machine-config.io/max-concurrent-pulls: "3"\n', 1))


SCENARIOS: dict[str, Setup] = {"canaries": _canaries, "provisioning": _provisioning, "paused": _paused,
                               "unavailable": _unavailable, "stalled": _stalled, "os-image": _os_image}


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    cluster = tmp_path / "cluster"
    shutil.copytree(ROOT / "examples" / "cluster", cluster)
    pools = cluster / POOLS
    pools.write_text(pools.read_text().replace(POOL_HEADER, CANARY, 1))
    return cluster


def _fleet(cluster: Path, store: DirectoryStore, setup: Setup) -> str:
    render_cluster(cluster, store=store)
    first = store.get_pool("worker").current
    assert first
    for i in range(8):
        _put(store, f"w{i}", first, first, "Done", f"2026-01-{i + 1:02d}T00:00:00Z")
    setup(cluster, store, first)
    return first


def _plan(cluster: Path, store: DirectoryStore, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str]:
    code = main(["rollout", "plan", "worker", str(cluster), "--store", str(store.root), *flags])
    out, err = capsys.readouterr()
    return code, out + err


class Nodes:
    """Simulated nodes of the worker pool at a real `mco serve`: they claim (`POST /nodes/N/desired`) and report."""

    def __init__(self, url: str, plan: dict[str, Any]) -> None:
        self.url, self.target = url, plan["target"]
        self.current = {m["node"]: m["currentConfig"] for m in plan["machines"]}
        self.handed: dict[str, float] = {}  # node -> when (virtual seconds) it was handed the target
        self.pulls: dict[str, tuple[float, float]] = {}  # node -> when it was told to pull the image, and done
        self.staged: set[str] = set()
        self.pull_took = float(plan["durations"]["pull"]["seconds"])
        self.rng = random.Random(29)

    def claim(self, node: str, at: float = 0.0) -> str:
        """The node's claim, as the agent's (`prestage=1`): told `prefetch`, it pulls for the plan's pull time."""
        answer = requests.post(f"{self.url}/nodes/{node}/desired", params={"pool": "worker", "prestage": "1"},
                               timeout=30)
        assert answer.status_code == 200, answer.text
        if answer.json().get("prefetch") == self.target:
            self.pulls[node] = (at, at + self.pull_took)
        return str(answer.json()["desiredConfig"])

    def report(self, node: str, current: str, desired: str, state: str, **more: str) -> None:
        body = {"pool": "worker", "currentConfig": current, "desiredConfig": desired, "state": state, **more}
        answer = requests.post(f"{self.url}/nodes/{node}/status", json=body, timeout=30)
        assert answer.status_code == 200, answer.text

    def waiting(self) -> list[str]:
        """Waiting and not pulling: the nodes that claim now."""
        return [n for n, c in self.current.items() if c != self.target and n not in self.handed
                and (n not in self.pulls or n in self.staged)]

    def claim_all(self, at: float) -> set[str]:
        """Every waiting node asks, in a shuffled order, again until none more is handed the target; those handed
        it report that they are updating (as the agent does at once)."""
        handed: set[str] = set()
        while True:
            got = set()
            for node in self.rng.sample(self.waiting(), len(self.waiting())):
                if self.claim(node, at) == self.target:
                    self.handed[node] = at
                    self.report(node, self.current[node], self.target, "Working")
                    got.add(node)
            if not got:
                return handed
            handed |= got

    def roll_out(self, took: dict[str, float]) -> None:
        """In virtual time: at each moment, the nodes whose update ends report Done at the target, then every
        waiting node asks; each update takes `took[node]` seconds."""
        at, done = 0.0, set[str]()
        while True:
            for node, start in self.handed.items():
                if node not in done and start + took[node] <= at:
                    self.report(node, self.target, self.target, "Done")
                    done.add(node)
            for node, (_, end) in self.pulls.items():
                if node not in self.staged and end <= at:  # the image pulled: reported staged, as the agent does
                    self.report(node, self.current[node], self.current[node], "Done", staged=self.target,
                                phase="image-staged")
                    self.staged.add(node)
            self.claim_all(at)
            ends = [start + took[n] for n, start in self.handed.items() if n not in done]
            ends += [end for n, (_, end) in self.pulls.items() if n not in self.staged]
            if not ends:
                return
            at = min(ends)


def _pool(url: str) -> dict[str, Any]:
    return dict(requests.get(f"{url}/pools/worker", timeout=30).json())


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _waves(starts: dict[str, float]) -> list[set[str]]:
    waves: dict[float, set[str]] = {}
    for node, at in starts.items():
        waves.setdefault(at, set()).add(node)
    return [waves[at] for at in sorted(waves)]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_plan_matches_the_rollout(cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  scenario: str) -> None:
    """The plan's machines, actions, waves and starts are what the real rollout then does; nothing written."""
    store = DirectoryStore(tmp_path / "store")
    first = _fleet(cluster, store, SCENARIOS[scenario])
    _change(cluster, "one")
    before = {p: p.read_bytes() for p in Path(store.root).rglob("*") if p.is_file()}
    code, out = _plan(cluster, store, capsys, "-o", "json")
    assert code == 0, out
    assert {p: p.read_bytes() for p in Path(store.root).rglob("*") if p.is_file()} == before
    plan = json.loads(out)
    code, text = _plan(cluster, store, capsys, "--fail-on", "drain")
    assert code == 1 and "would drain" in text
    machines = {m["node"]: m for m in plan["machines"]}
    # a new file no disruption policy names: the applier reboots (fleet/disruption.py), with a drain; a machine
    # being provisioned takes the target without a slot
    update = "os-image" if scenario == "os-image" else "reboot"  # (a new OS image: a reboot into it)
    assert {n: (m["action"], m["drain"], m["wave"] is None) for n, m in machines.items()} == {
        n: (("provision", False, True) if m["currentConfig"] == "" else (update, True, False))
        for n, m in machines.items()}
    assert (plan["hold"] or {}).get("kind") == ("paused" if scenario == "paused" else None)
    assert plan["waitsFor"] == (["w2"] if scenario == "stalled" else [])
    took = {n: plan["durations"][m["action"]]["seconds"] for n, m in machines.items()}

    with serving(cluster, store.root, log=tmp_path / "serve.log") as url:
        pool = _pool(url)
        assert pool["spec"]["configuration"]["name"] == plan["target"] != first
        assert {n["name"] for n in pool["status"]["nodes"]} == set(machines)
        nodes = Nodes(url, plan)
        if scenario == "paused":  # held: only the machine being provisioned is handed the target
            assert "is held (paused): spec.paused is true" in text
            assert nodes.claim_all(0.0) == {"fresh"}
            pools = cluster / POOLS
            pools.write_text(pools.read_text().replace("  paused: true\n", "", 1))
            _until(lambda: not _pool(url)["spec"]["paused"], "the pool unpaused")
        if scenario == "stalled":  # nothing until the machine the plan waits for is available again
            assert "stalls until w2 is available" in text
            assert nodes.claim_all(0.0) == set()
            for node in plan["waitsFor"]:
                nodes.report(node, first, first, "Done")
        nodes.roll_out(took)

    planned = {n: m["start"] for n, m in machines.items() if m["wave"] is not None}
    assert {n: nodes.handed[n] for n in planned} == planned  # each machine handed the target when the plan said
    assert _waves({n: nodes.handed[n] for n in planned}) == _waves(planned)
    by_wave: dict[int, set[str]] = {}
    for n, m in machines.items():
        if m["wave"] is not None:
            by_wave.setdefault(m["wave"], set()).add(n)
    assert [by_wave[w] for w in sorted(by_wave)] == _waves(planned)
    assert set(nodes.handed) == {n for n, m in machines.items() if m["action"] != "none"}
    assert nodes.pulls == {n: (m["pull"]["start"], m["pull"]["end"]) for n, m in machines.items() if m["pull"]}
    if scenario == "os-image":  # the canaries pulled first, the others three at a time after the canary wave
        assert len(nodes.pulls) == 8 and max(sum(s <= t < e for s, e in nodes.pulls.values())
                                              for t, _ in nodes.pulls.values()) == 3
    for node, m in machines.items():
        if m["action"] == "provision":
            assert nodes.handed[node] == 0.0 == m["start"]  # at once, without a slot
    if scenario == "canaries":
        assert by_wave[0] == {"w0", "w1"}  # the two canaries: the oldest two machines
    if scenario == "unavailable":
        assert by_wave[0] == {"w0"}  # 4 slots, 3 held: one for the first canary
