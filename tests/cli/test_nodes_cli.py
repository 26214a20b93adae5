"""`mco nodes list|get|label` on a store (directory, etcd) and through a running server with the admin token."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cli.main import main
from fleet.directory_store import DirectoryStore
from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.store import Store
from fleet.store_open import close_store, open_store
from server.auth import AccessPolicy
from server.settings import ServerSettings
from tests.etcd_cluster import etcd_cluster  # noqa: F401 - pytest fixture
from tests.server.live import LiveServer

GPU = "node-role.kubernetes.io/gpu"
WORKER = "node-role.kubernetes.io/worker"


def _fleet(store: Store) -> None:
    store.put_pool(PoolRecord("worker", current="rendered-worker-a"))
    store.put_pool(PoolRecord("gpu", current="rendered-gpu-a"))
    store.put_pool(PoolRecord("infra"))
    for name in ("n1", "n2"):
        store.put_node_status(NodeStatus(name, "worker", "rendered-worker-a", "rendered-worker-a", "Done", "", "t0"))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@contextmanager
def _where(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, list[str]]]:
    if kind == "directory":
        store = DirectoryStore(tmp_path / "store")
        yield store, ["--store", str(tmp_path / "store")]
    elif kind == "etcd":
        url = request.getfixturevalue("etcd_cluster").url(f"nodes-cli-{tmp_path.name}")
        store = open_store(url)
        try:
            yield store, ["--store", url]
        finally:
            close_store(store)
    else:
        store = DirectoryStore(tmp_path / "store")
        _fleet(store)
        (tmp_path / "admin").write_text("admin-token\n")
        settings = ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), poll_interval=0.05,
                                  policy=AccessPolicy(admin_tokens=("admin-token",)))
        with LiveServer(settings, store) as live:
            yield store, ["--server", f"http://127.0.0.1:{live.port()}", "--token-file", str(tmp_path / "admin")]


@pytest.mark.parametrize("kind", ["directory", "etcd", "server"])
def test_label_list_get(kind: str, request: pytest.FixtureRequest, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    with _where(kind, request, tmp_path) as (store, where):
        if kind != "server":
            _fleet(store)
        code, out, _ = _run(capsys, "nodes", "label", "n1", f"{GPU}=", "zone=a", *where)
        assert code == 0 and "pool:     gpu" in out
        assert store.get_node_status("n1").pool == "gpu"
        code, out, _ = _run(capsys, "nodes", "list", *where, "-o", "json")
        listed = json.loads(out)
        assert {n["name"]: n["pool"] for n in listed["items"]} == {"n1": "gpu", "n2": "worker"}
        code, out, _ = _run(capsys, "nodes", "list", *where)
        assert out.splitlines()[0].split() == ["NAME", "POOL", "STATE", "PHASE", "LABELS"]
        assert f"n1    gpu     Done   -      {GPU}=,{WORKER}=,zone=a" in out
        code, out, _ = _run(capsys, "nodes", "label", "n1", "node-role.kubernetes.io/infra=", *where, "-o", "json")
        assert json.loads(out)["membership"]["reason"] == (
            "node n1 belongs to 2 custom roles, cannot proceed with this Node")
        code, out, _ = _run(capsys, "nodes", "get", "n1", *where)
        assert "unpooled: node n1 belongs to 2 custom roles" in out and "pool:     (none)" in out
        code, out, _ = _run(capsys, "nodes", "label", "n1", f"{GPU}-", "node-role.kubernetes.io/infra-", *where)
        assert code == 0 and store.get_node_status("n1").pool == "worker"
        code, _, err = _run(capsys, "nodes", "get", "ghost", *where)
        assert code == 1 and "ghost" in err


def test_server_refuses_other_tokens(request: pytest.FixtureRequest, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    with _where("server", request, tmp_path) as (_, where):
        (tmp_path / "admin").write_text("not-the-admin-token\n")
        code, _, err = _run(capsys, "nodes", "label", "n1", f"{GPU}=", *where)
        assert code == 1 and "403" in err


USAGE = [
    (["nodes", "list"], "give one of --store or --server"),
    (["nodes", "list", "--server", "http://x"], "--server needs --token-file"),
    (["nodes", "label", "n1", "bad", "--store", "."], "KEY=VALUE"),
]


@pytest.mark.parametrize(("argv", "message"), USAGE, ids=["no-target", "no-token", "bad-edit"])
def test_usage(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, *argv)
    assert code == 2 and message in err
