"""Pool membership from node labels: the cases of MCO `pkg/helpers/helpers.go` GetPoolsForNode and its tests."""

from __future__ import annotations

from typing import Any

import pytest

from fleet.label_selector import parse_selector
from fleet.membership import PoolSelectors, pools_for_labels
from fleet.rendered import PoolRecord

ROLE = "node-role.kubernetes.io/"
MASTER = ("master", {"matchLabels": {f"{ROLE}master": ""}})
WORKER = ("worker", {"matchLabels": {f"{ROLE}worker": ""}})
INFRA = ("infra", {"matchLabels": {f"{ROLE}infra": ""}})
STORAGE = ("storage", {"matchLabels": {f"{ROLE}storage": ""}})
GPU_EXPR = ("gpu", {"matchExpressions": [{"key": "accelerator", "operator": "In", "values": ["a100", "h100"]}]})
EMPTY = ("empty", {})


def _roles(*names: str) -> dict[str, str]:
    return {f"{ROLE}{n}": "" for n in names}


CASES: list[tuple[str, list[tuple[str, dict[str, Any]]], dict[str, str], tuple[str, ...], str]] = [
    ("worker-only", [WORKER], _roles("worker"), ("worker",), ""),
    ("custom-over-worker", [WORKER, INFRA], _roles("worker", "infra"), ("infra", "worker"), ""),
    ("custom-alone", [WORKER, INFRA], _roles("infra"), ("infra",), ""),
    ("master-over-custom", [MASTER, INFRA], _roles("master", "infra"), ("master",), ""),
    ("compact-master-and-worker", [MASTER, WORKER], _roles("master", "worker"), ("master",), ""),
    ("two-custom-roles", [WORKER, INFRA, STORAGE], _roles("worker", "infra", "storage"), (),
     "node n1 belongs to 2 custom roles, cannot proceed with this Node"),
    ("no-matching-pool", [WORKER], _roles("master"), (), "node n1 matches no pool's nodeSelector"),
    ("empty-selector-matches-nothing", [EMPTY], _roles("worker"), (), "node n1 matches no pool's nodeSelector"),
    ("match-expressions", [WORKER, GPU_EXPR], {**_roles("worker"), "accelerator": "h100"}, ("gpu", "worker"), ""),
    ("match-expressions-no-match", [WORKER, GPU_EXPR], {**_roles("worker"), "accelerator": "t4"}, ("worker",), ""),
    ("windows-not-managed", [WORKER], {**_roles("worker"), "kubernetes.io/os": "windows"}, (),
     "node n1 is a windows node so won't be managed by MCO"),
]


@pytest.mark.parametrize(("pools", "labels", "expected", "reason"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pools_for_node(pools: list[tuple[str, dict[str, Any]]], labels: dict[str, str], expected: tuple[str, ...],
                        reason: str) -> None:
    records = []
    for name, selector in pools:
        parsed, problems = parse_selector(selector, ("spec", "nodeSelector"))
        assert not problems and parsed is not None
        records.append(PoolRecord(name, node_selector=parsed))
    membership = pools_for_labels(labels, [(r.name, r.selector) for r in records])
    assert membership.pools == expected
    assert membership.pool == (expected[0] if expected else "")
    assert membership.reason("n1") == reason
    assert PoolSelectors(records).of(labels) == membership  # the memoised route answers alike


def test_master_over_custom_carries_the_mcos_message() -> None:
    records = [PoolRecord("master"), PoolRecord("infra")]
    note = PoolSelectors(records).of(_roles("master", "infra")).note()
    assert note.startswith("Found master node that matches selector for custom pool infra, defaulting to master.")
    assert PoolSelectors(records).of(_roles("master")).note() == ""


def test_a_record_without_a_selector_selects_its_role_label() -> None:
    assert PoolRecord("gpu").selector.matches(_roles("gpu"))
    assert pools_for_labels(_roles("gpu"), [("gpu", PoolRecord("gpu").selector)]).pool == "gpu"


def test_memo_is_bounded() -> None:
    selectors = PoolSelectors([PoolRecord("worker")])
    for i in range(5000):
        selectors.of({f"{ROLE}worker": "", "n": str(i)})
    assert len(selectors._memo) <= 4096
