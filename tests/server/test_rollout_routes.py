"""The rollout steering routes: only the administrator token opens them; resume, revert and plan answer what
`mco rollout --store` does; a refused revert or an unknown pool writes nothing. And `mco rollout --server` against
a real `mco serve --admin-token-file`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from fleet.node_status import NodeStatus
from fleet.rendered import HistoryEntry, PoolRecord
from fleet.store import MemoryStore, StoreError
from server.auth import AccessPolicy, node_token
from tests.builders import rendered_config
from tests.server.conftest import MakeClient
from tests.server.helpers import ignition_config

SECRET = b"0123456789abcdef-node-secret"
ADMIN = {"Authorization": "Bearer admin-token"}
POLICY = AccessPolicy(tokens={"worker": ("pool-token",)}, node_secret=SECRET, admin_tokens=("admin-token",))
GOOD = rendered_config("good", config=ignition_config("3.4.0", files=1))
BAD = rendered_config("bad", config=ignition_config("3.4.0", files=2))


def _store(*, every_node_ran_good: bool = True) -> MemoryStore:
    store = MemoryStore()
    for config in (GOOD, BAD):
        store.put_rendered(config)
    store.put_pool(PoolRecord("worker", current=BAD.name, max_unavailable=1,
                              history=(HistoryEntry(GOOD.name, "t1"), HistoryEntry(BAD.name, "t2"))))
    store.put_node_status(NodeStatus("a", "worker", GOOD.name, BAD.name, "Degraded", "health check app failed",
                                     "2026-12-04T10:00:00Z"))
    store.put_node_status(NodeStatus("b", "worker", GOOD.name if every_node_ran_good else BAD.name, GOOD.name
                                     if every_node_ran_good else BAD.name, "Done", "", "2026-12-04T09:00:00Z"))
    return store


ROUTES = [("POST", "/pools/worker/rollout/resume"), ("POST", "/pools/worker/rollout/revert"),
          ("GET", "/pools/worker/rollout/plan")]


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=["resume", "revert", "plan"])
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer pool-token"},
                                     {"Authorization": f"Bearer {node_token(SECRET, 'a')}"},
                                     {"Authorization": "Bearer wrong"}], ids=["none", "pool", "node", "wrong"])
async def test_only_the_admin_token_opens_them(make_client: MakeClient, method: str, path: str,
                                               headers: dict[str, str]) -> None:
    store = _store()
    client = await make_client(store, policy=POLICY)
    assert (await client.request(method, path, headers=headers)).status == 403
    assert store.get_pool("worker").current == BAD.name and not store.get_pool("worker").resumed_at
    assert (await client.request(method, path, headers=ADMIN)).status == 200


async def test_resume_revert_and_plan(make_client: MakeClient) -> None:
    store = _store()
    client = await make_client(store, policy=POLICY)
    state: dict[str, Any] = await (await client.post("/pools/worker/rollout/resume", headers=ADMIN)).json()
    assert state["rolloutPause"] is None and state["resumedAt"]
    plan = await (await client.get("/pools/worker/rollout/plan", headers=ADMIN)).json()
    assert plan["target"] == BAD.name and {m["node"] for m in plan["machines"]} == {"a", "b"}
    state = await (await client.post("/pools/worker/rollout/revert", headers=ADMIN)).json()
    assert (state["target"], state["revertedFrom"]) == (GOOD.name, BAD.name)
    assert store.get_pool("worker").current == GOOD.name


class _FailsAfterRevert(MemoryStore):
    """A store whose pool records cannot be read once the revert has written the pool's record."""

    reverted = False

    def put_pool(self, record: PoolRecord) -> None:
        super().put_pool(record)
        self.reverted = self.reverted or bool(record.reverted_from)

    def get_pool(self, name: str) -> PoolRecord:
        if self.reverted:
            raise StoreError(name, "etcd unreachable")
        return super().get_pool(name)


async def test_a_revert_stored_is_answered_though_the_store_fails_right_after(make_client: MakeClient) -> None:
    store = _FailsAfterRevert()
    model = _store()
    for config in (GOOD, BAD):
        store.put_rendered(config)
    for name in ("a", "b"):
        store.put_node_status(model.get_node_status(name))
    store.put_pool(model.get_pool("worker"))
    client = await make_client(store, policy=POLICY)
    answer = await client.post("/pools/worker/rollout/revert", headers=ADMIN)  # not a 500: the revert is stored
    assert answer.status == 200 and (await answer.json())["target"] == GOOD.name


@pytest.mark.parametrize(("path", "status"), [("/pools/nosuch/rollout/revert", 404), ("/pools/Bad_Name/rollout/revert", 400),
                                              ("/pools/worker/rollout/revert", 409)], ids=["unknown", "bad-name", "refused"])
async def test_refusals_write_nothing(make_client: MakeClient, path: str, status: int) -> None:
    store = _store(every_node_ran_good=False)
    client = await make_client(store, policy=POLICY)
    answer = await client.post(path, headers=ADMIN)
    assert answer.status == status
    if status == 409:
        assert "no earlier config" in (await answer.json())["message"]
    assert store.get_pool("worker").current == BAD.name


async def test_resume_of_a_pool_not_paused_is_a_409(make_client: MakeClient) -> None:
    store = _store()
    store.put_node_status(NodeStatus("a", "worker", GOOD.name, GOOD.name, "Done", "", "2026-12-04T10:00:00Z"))
    client = await make_client(store, policy=POLICY)
    answer = await client.post("/pools/worker/rollout/resume", headers=ADMIN)
    assert answer.status == 409 and "not paused" in (await answer.json())["message"]
    assert not store.get_pool("worker").resumed_at


def test_mco_rollout_through_a_server(tmp_path: Path) -> None:
    """The real `mco serve --admin-token-file` and `mco rollout ... --server URL --token-file F`."""
    import shutil

    from fleet.directory_store import DirectoryStore
    from fleet.node_status import with_report
    from tests.serving import env, mco, serving

    cluster = tmp_path / "cluster"
    shutil.copytree(Path(__file__).resolve().parents[1] / "applier" / "cluster_small", cluster)
    (tmp_path / "admin").write_text("admin-token\n")
    with serving(cluster, tmp_path / "store", extra=("--admin-token-file", str(tmp_path / "admin"))) as url:
        store = DirectoryStore(tmp_path / "store")
        first = store.get_pool("worker").current
        assert first
        store.put_node_status(with_report(None, NodeStatus("a", "worker", first, first, "Done", "", "t0")))

        def rollout(*argv: str, token: str = "admin") -> subprocess.CompletedProcess[str]:
            return subprocess.run(mco("rollout", *argv, "--server", url, "--token-file", str(tmp_path / token)),
                                  env=env(), capture_output=True, text=True)

        plan = rollout("plan", "worker", "-o", "json")
        assert plan.returncode == 0, plan.stderr
        assert '"target": "' + first in plan.stdout
        not_paused = rollout("resume", "worker")  # as kubectl rollout resume: "is not paused", exit 1, nothing written
        assert not_paused.returncode == 1 and "not paused" in not_paused.stderr and "409" in not_paused.stderr
        assert not store.get_pool("worker").resumed_at
        store.put_node_status(NodeStatus("b", "worker", "", first, "Degraded", "broke", "t1"))  # failed on its way
        assert rollout("resume", "worker").returncode == 0
        assert store.get_pool("worker").resumed_at
        refused = rollout("revert", "worker")
        assert refused.returncode == 1 and "409" in refused.stderr  # no earlier config: nothing written
        (tmp_path / "wrong").write_text("wrong\n")
        assert rollout("resume", "worker", token="wrong").returncode == 1
        usage = subprocess.run(mco("rollout", "plan", "worker", str(cluster), "--server", url, "--token-file",
                                   str(tmp_path / "admin")), env=env(), capture_output=True, text=True)
        assert usage.returncode == 2 and "--store" in usage.stderr



def test_config_follows_a_revert_at_once(tmp_path: Path) -> None:
    """Every node runs the bad config (Done there, after the good one), so the real `mco serve` serves it at
    `/config/worker`; once `mco rollout revert --server` has answered, `/config/worker` serves the config reverted
    to (the next booting machine gets it), though no node has gone back yet."""
    import shutil
    import time

    import requests

    from fleet.directory_store import DirectoryStore
    from fleet.node_status import with_report
    from tests.builders import machine_config_manifest
    from tests.serving import env, mco, serving

    cluster = tmp_path / "cluster"
    shutil.copytree(Path(__file__).resolve().parents[1] / "applier" / "cluster_small", cluster)
    (tmp_path / "admin").write_text("admin-token\n")
    boot = {"Accept": "application/vnd.coreos.ignition+json;version=3.4.0"}
    with serving(cluster, tmp_path / "store", extra=("--admin-token-file", str(tmp_path / "admin"))) as url:
        store = DirectoryStore(tmp_path / "store")
        good = store.get_pool("worker").current
        assert good
        ran = with_report(None, NodeStatus("a", "worker", good, good, "Done", "", "2026-12-04T08:00:00Z"))
        store.put_node_status(ran)
        (cluster / "manifests" / "71-bad.yaml").write_text(machine_config_manifest(
            "71-bad", "worker", files={"/etc/bad.conf": "data:,bad"}))

        def served() -> str:
            return requests.get(f"{url}/config/worker", headers=boot, timeout=10).headers["X-Rendered-Config"]

        deadline = time.monotonic() + 30
        while store.get_pool("worker").current == good and time.monotonic() < deadline:
            time.sleep(0.1)
        bad = store.get_pool("worker").current
        assert bad != good
        store.put_node_status(with_report(ran, NodeStatus("a", "worker", bad, bad, "Done", "", "2026-12-04T09:00:00Z")))
        while served() != bad and time.monotonic() < deadline:
            time.sleep(0.1)
        assert served() == bad
        revert = subprocess.run(mco("rollout", "revert", "worker", "--server", url, "--token-file",
                                    str(tmp_path / "admin")), env=env(), capture_output=True, text=True)
        assert revert.returncode == 0, revert.stderr
        assert served() == good
