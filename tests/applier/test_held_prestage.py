"""The real agent (`mco apply --server`, interval 60 s) holding its claim against the real `mco serve`: the pool's
target moves to a config with a new OS image while another node holds the one slot. The agent hears of the image at
once (not when its 60 s hold ends), stages it and reports it, claims again at once (held, not an interval later),
and takes the slot as soon as it frees, the image staged first (applier/agent.py `run`, server/handout_wait.py
`offer_pulls`)."""

from __future__ import annotations

import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import requests
import yaml

from fleet.directory_store import DirectoryStore
from fleet.node_status import NodeStatus
from fleet.store import NotFound
from tests.applier.helpers import make_root, reboot_command
from tests.builders import machine_config_manifest
from tests.server.scale_out import ROLLOUT_POOL, until
from tests.serving import env, mco, serving

INTERVAL = 60  # the agent's interval, so its claims are held up to 60 s
PROMPT = 15    # seconds: well inside one interval, however busy the machine


def _worker(cluster: Path, generation: str) -> None:
    (cluster / "manifests" / "10-worker.yaml").write_text(machine_config_manifest(
        "10-worker", "worker", files={"/etc/generation": f"data:,{generation}"}, mode=0o644,
        os_image=f"registry.pulls.test/os:{generation}"))


def _held(url: str, count: int) -> bool:
    """Whether the server holds `count` claims now."""
    return f"mco_held_claims {count:.1f}" in requests.get(f"{url}/metrics", timeout=5).text


def test_an_agent_stages_the_new_os_image_at_once_and_claims_its_slot_again_at_once(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    (cluster / "manifests").mkdir(parents=True)
    (cluster / "cluster.yaml").write_text("name: pulls\nbaseDomain: pulls.test\n")
    pool = yaml.safe_load(ROLLOUT_POOL)
    pool["spec"]["maxUnavailable"] = 1
    (cluster / "manifests" / "00-pool.yaml").write_text(yaml.safe_dump(pool))
    _worker(cluster, "old")
    store = DirectoryStore(tmp_path / "store")

    def record(node: str) -> NodeStatus | None:
        try:
            return store.get_node_status(node)
        except NotFound:
            return None

    with serving(cluster, tmp_path / "store", log=tmp_path / "serve.log") as url:
        old = requests.get(f"{url}/pools/worker", timeout=5).json()["spec"]["configuration"]["name"]
        busy = {"pool": "worker", "currentConfig": old, "desiredConfig": old, "state": "Done"}
        assert requests.post(f"{url}/nodes/node-0/status", json=busy, timeout=5).status_code == 200  # first
        root = make_root(tmp_path / "root")
        with open(tmp_path / "agent.log", "ab") as out:  # (its first update, to `old`, needs the free slot)
            agent = subprocess.Popen(mco("apply", "--node", "node-1", "--server", url, "--pool", "worker", "--root",
                                         str(root), "--interval", str(INTERVAL), "--reboot-command",
                                         reboot_command(root)), env=env(), stdout=out, stderr=out)
        try:
            until(lambda: (r := record("node-1")) is not None and r.state == "Done" and r.current_config == old
                  and _held(url, 1), 120)
            with requests.Session() as session:
                # node-0 comes first (registered first, or in the same second, by name): it takes the one slot when
                # the target moves, and keeps it
                taken: list[dict[str, object]] = []
                holder = threading.Thread(target=lambda: taken.append(session.post(
                    f"{url}/nodes/node-0/desired", params={"pool": "worker", "wait": "120"}, timeout=180).json()))
                holder.start()
                until(lambda: _held(url, 2), 60)
                moved = time.monotonic()
                _worker(cluster, "new")
                holder.join(timeout=120)
                new = taken[0]["desiredConfig"]
                assert new != old
                staged = until(lambda: (r := record("node-1")) is not None and r.staged == new and r)
                late = time.monotonic() - moved
                assert late < PROMPT, f"the agent staged the new OS image {late:.1f} s after the move"
                assert isinstance(staged, NodeStatus) and staged.current_config == old  # no slot taken
                freed = datetime.now(UTC)  # node-0's update is over: the slot frees
                done = {"pool": "worker", "currentConfig": new, "desiredConfig": new, "state": "Done"}
                assert requests.post(f"{url}/nodes/node-0/status", json=done, timeout=5).status_code == 200

                def update() -> object:  # node-1's timeline of the move to `new` (its current one, or an earlier one)
                    r = record("node-1")
                    for timeline in (r.timeline, *r.updates) if r is not None else ():
                        entered = {e.phase: e.at for e in timeline if e.config == new}
                        if "reboot-requested" in entered:
                            return [e.phase for e in timeline], entered
                    return None

                found = until(update, 120)
                assert isinstance(found, tuple)
                phases, entered = found
                assert phases[:2] == ["image-staged", "prepared"], phases  # staged before the slot
                took = (datetime.fromisoformat(entered["prepared"]) - freed).total_seconds()
                assert took < PROMPT, f"the agent took the freed slot {took:.0f} s after it freed"
        finally:
            agent.terminate()
            agent.wait(timeout=60)
