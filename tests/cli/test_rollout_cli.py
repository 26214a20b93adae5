"""`mco rollout resume|revert|plan` on a directory store, with the renderer's pin and the rollout rules
(fleet/rollout_control.py, fleet/rollout_plan.py, fleet/rollout.py). The plan against the rollout it predicts, through
the real `mco serve`: tests/cli/test_rollout_plan_matches.py."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cli.main import main
from fleet.directory_store import DirectoryStore
from fleet.node_status import NodeStatus, with_report
from fleet.rollout import desired_for
from renderer.render import render_cluster
from tests.builders import machine_config_manifest

ROOT = Path(__file__).resolve().parents[2]
POOL_HEADER = "  name: worker\n  labels:"
CANARY = ('  name: worker\n  annotations:\n    rollout.machine-config.io/canaries: "2"\n'
          '    rollout.machine-config.io/soak: "0"\n  labels:')


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Path, DirectoryStore]:
    cluster = tmp_path / "cluster"
    shutil.copytree(ROOT / "examples" / "cluster", cluster)
    pools = cluster / "manifests" / "00-pools.yaml"
    pools.write_text(pools.read_text().replace(POOL_HEADER, CANARY, 1))
    store = DirectoryStore(tmp_path / "store")
    render_cluster(cluster, store=store)
    first = store.get_pool("worker").current
    assert first
    for i in range(8):
        at = f"2026-01-{i + 1:02d}T00:00:00Z"
        store.put_node_status(with_report(None, NodeStatus(f"w{i}", "worker", first, first, "Done", "", at)))
    return cluster, store


def _change(cluster: Path, generation: str) -> None:
    (cluster / "manifests" / "71-worker-extra.yaml").write_text(machine_config_manifest(
        "71-worker-extra", "worker", files={"/etc/extra.conf": f"data:,{generation}"}))


def _mco(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_pause_resume_revert_pin(fleet: tuple[Path, DirectoryStore], capsys: pytest.CaptureFixture[str]) -> None:
    cluster, store = fleet
    good = store.get_pool("worker").current
    _change(cluster, "bad")
    render_cluster(cluster, store=store)
    bad = store.get_pool("worker").current
    assert bad != good
    failed = store.get_node_status("w0")
    store.put_node_status(with_report(failed, NodeStatus("w0", "worker", good, bad, "Degraded", "health check failed",
                                                         "2026-01-09T00:00:00Z")))
    record = store.get_pool("worker")
    now = datetime(2026, 6, 1, tzinfo=UTC)
    assert desired_for("w5", record, store.list_node_status(), now=now) == good  # paused

    assert _mco("rollout", "resume", "worker", "--store", str(store.root), capsys=capsys)[0] == 0
    record = store.get_pool("worker")
    assert record.resumed_at
    assert desired_for("w1", record, store.list_node_status(), now=now) == bad  # a canary may go on

    code, out, _ = _mco("rollout", "revert", "worker", "--store", str(store.root), capsys=capsys)
    assert code == 0 and f"-> {good}" in out
    record = store.get_pool("worker")
    assert (record.current, record.reverted_from) == (good, bad)
    assert desired_for("w0", record, store.list_node_status(), now=now) == good

    render_cluster(cluster, store=store)  # the manifests still render the bad config: pinned
    record = store.get_pool("worker")
    assert (record.current, record.reverted_from) == (good, bad)
    pinned = record.condition("RolloutPinned")
    assert pinned is not None and pinned.status == "True" and bad in pinned.message

    _change(cluster, "fixed")
    render_cluster(cluster, store=store)
    record = store.get_pool("worker")
    assert record.current not in (good, bad) and not record.reverted_from
    unpinned = record.condition("RolloutPinned")
    assert unpinned is not None and unpinned.status == "False"


def test_revert_refused_without_a_config_every_machine_reached(fleet: tuple[Path, DirectoryStore],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _, store = fleet
    code, _, err = _mco("rollout", "revert", "worker", "--store", str(store.root), capsys=capsys)
    assert code == 1 and "no earlier config" in err
    code, _, err = _mco("rollout", "resume", "nosuch", "--store", str(store.root), capsys=capsys)
    assert code == 1 and "no pool 'nosuch'" in err


def _policy_change(cluster: Path, generation: str) -> None:
    """A change the default disruption policies reload crio for (MCO pkg/apihelpers: policy.json), no drain."""
    (cluster / "manifests" / "71-worker-extra.yaml").write_text(machine_config_manifest(
        "71-worker-extra", "worker", files={"/etc/containers/policy.json": f"data:,%7B%7D{generation}"}))


# (change, --fail-on flags, exit code): non-zero exactly when some machine would do what one flag names
FAIL_ON = [
    ("reboot-change", _change, ("drain",), 1),
    ("reboot-change", _change, ("reboot",), 1),
    ("reload-change", _policy_change, ("drain",), 0),
    ("reload-change", _policy_change, ("reboot",), 0),
    ("reload-change", _policy_change, (), 0),
    ("twice-either-met", _change, ("reboot", "drain"), 1),
    ("twice-none-met", _policy_change, ("drain", "reboot"), 0),
]


@pytest.mark.parametrize(("change", "flags", "code"), [c[1:] for c in FAIL_ON],
                         ids=[f"{c[0]}-{'-'.join(c[2]) or 'none'}" for c in FAIL_ON])
def test_fail_on(fleet: tuple[Path, DirectoryStore], capsys: pytest.CaptureFixture[str],
                 change: Callable[[Path, str], None], flags: tuple[str, ...], code: int) -> None:
    cluster, store = fleet
    change(cluster, "one")
    argv = ["rollout", "plan", "worker", str(cluster), "--store", str(store.root), "-o", "json"]
    for flag in flags:
        argv += ["--fail-on", flag]
    got, out, err = _mco(*argv, capsys=capsys)
    assert got == code, err
    moving = [m for m in json.loads(out)["machines"] if m["wave"] is not None]
    assert len(moving) == 8
    for flag in flags:
        assert (f"would {flag}:" in err) is any(m[flag] for m in moving)


def test_fail_on_unknown_value_is_a_usage_error(fleet: tuple[Path, DirectoryStore]) -> None:
    cluster, store = fleet
    with pytest.raises(SystemExit) as exit_:
        main(["rollout", "plan", "worker", str(cluster), "--store", str(store.root), "--fail-on", "restart"])
    assert exit_.value.code == 2


def test_resume_refused_when_not_paused(fleet: tuple[Path, DirectoryStore], capsys: pytest.CaptureFixture[str]) -> None:
    """As `kubectl rollout resume` of a rollout that is not paused: exit 1, nothing written."""
    _, store = fleet
    before = store.get_pool("worker")
    code, _, err = _mco("rollout", "resume", "worker", "--store", str(store.root), capsys=capsys)
    assert code == 1 and "not paused" in err
    assert store.get_pool("worker") == before


@pytest.mark.parametrize("verb", ["resume", "revert", "plan"])
@pytest.mark.parametrize("pool", ["nosuch", "No_Such"], ids=["unknown", "not-a-name"])
def test_unknown_pool_exits_1(fleet: tuple[Path, DirectoryStore], capsys: pytest.CaptureFixture[str], verb: str,
                              pool: str) -> None:
    """An unknown pool is a refusal (exit 1), however it is spelt: kubectl answers NotFound for a malformed name."""
    _, store = fleet
    code, _, err = _mco("rollout", verb, pool, "--store", str(store.root), capsys=capsys)
    assert code == 1 and f"no pool {pool!r}" in err


def test_plan_output_file(fleet: tuple[Path, DirectoryStore], capsys: pytest.CaptureFixture[str],
                          tmp_path: Path) -> None:
    """`-o json --output-file F` (cli/output_flags.py, as every command): the plan in F, nothing on stdout, the
    `--fail-on` verdict and exit code unchanged."""
    cluster, store = fleet
    _change(cluster, "one")
    argv = ("rollout", "plan", "worker", str(cluster), "--store", str(store.root), "-o", "json")
    code, printed, _ = _mco(*argv, capsys=capsys)
    out = tmp_path / "plan.json"
    again, nothing, err = _mco(*argv, "--output-file", str(out), "--fail-on", "reboot", capsys=capsys)
    assert (code, again, nothing) == (0, 1, "") and "would reboot" in err
    written, expected = json.loads(out.read_text()), json.loads(printed)
    assert written["machines"] == expected["machines"] and written["target"] == expected["target"]
