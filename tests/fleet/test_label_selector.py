"""Label selectors: Kubernetes semantics, table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from fleet.label_selector import parse_selector

ROLE = "machineconfiguration.openshift.io/role"
CASES = [
    ({"matchLabels": {ROLE: "worker"}}, {ROLE: "worker"}, True, "matchLabels-equal"),
    ({"matchLabels": {ROLE: "worker"}}, {ROLE: "infra"}, False, "matchLabels-other-value"),
    ({"matchLabels": {ROLE: "worker", "a": "b"}}, {ROLE: "worker"}, False, "matchLabels-all-must-match"),
    ({"matchExpressions": [{"key": ROLE, "operator": "In", "values": ["worker", "infra"]}]}, {ROLE: "infra"}, True,
     "in-listed"),
    ({"matchExpressions": [{"key": ROLE, "operator": "In", "values": ["worker"]}]}, {}, False, "in-absent"),
    ({"matchExpressions": [{"key": ROLE, "operator": "NotIn", "values": ["master"]}]}, {}, True, "notin-absent"),
    ({"matchExpressions": [{"key": ROLE, "operator": "NotIn", "values": ["master"]}]}, {ROLE: "master"}, False,
     "notin-listed"),
    ({"matchExpressions": [{"key": "x", "operator": "Exists"}]}, {"x": ""}, True, "exists-empty-value"),
    ({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}, {"x": "1"}, False, "doesnotexist-present"),
    ({"matchLabels": {ROLE: "worker"}, "matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]},
     {ROLE: "worker"}, True, "labels-and-expressions"),
    ({}, {ROLE: "worker"}, False, "empty-selects-nothing"),
    ({"matchLabels": {ROLE: ""}}, {ROLE: ""}, True, "matchLabels-empty-value-is-a-label-value"),
    ({"matchLabels": {"node-role.kubernetes.io/Infra_1.x": "A-b_c.9"}},
     {"node-role.kubernetes.io/Infra_1.x": "A-b_c.9"}, True, "matchLabels-mixed-case-name-and-value"),
]


@pytest.mark.parametrize(("selector", "labels", "expected"), [c[:3] for c in CASES], ids=[c[3] for c in CASES])
def test_matches(selector: dict[str, Any], labels: dict[str, str], expected: bool) -> None:
    parsed, problems = parse_selector(selector, ("spec", "machineConfigSelector"))
    assert problems == []
    assert parsed is not None and parsed.matches(labels) is expected


BAD = [
    ({"matchExpressions": [{"key": "x", "operator": "Equals", "values": ["a"]}]}, "selector-operator", "bad-operator"),
    ({"matchExpressions": [{"key": "x", "operator": "In"}]}, "selector-values", "in-without-values"),
    ({"matchExpressions": [{"key": "x", "operator": "Exists", "values": ["a"]}]}, "selector-values",
     "exists-with-values"),
    ({"matchLabels": {"x": True}}, "json-type", "boolean-label-value"),
    ({"matchExpressions": [{"operator": "Exists"}]}, "required", "missing-key"),
    # k8s LabelSelectorAsSelector (apimachinery pkg/apis/meta/v1/helpers.go) builds every matchLabels entry and
    # expression with labels.NewRequirement (pkg/labels/selector.go), which refuses a key that is not a
    # qualified name (validateLabelKey) and a value that is not a label value (validateLabelValue); the MCO's
    # render controller then fails the pool ("invalid label selector")
    ({"matchLabels": {"node role": "worker"}}, "selector-key", "matchLabels-key-with-space"),
    ({"matchLabels": {"Example.com/role": "worker"}}, "selector-key", "matchLabels-key-uppercase-prefix"),
    ({"matchLabels": {ROLE: "worker pool"}}, "selector-value", "matchLabels-value-with-space"),
    ({"matchLabels": {ROLE: "-worker"}}, "selector-value", "matchLabels-value-starting-with-dash"),
    ({"matchExpressions": [{"key": "a/b/c", "operator": "Exists"}]}, "selector-key", "expression-key-two-slashes"),
    ({"matchExpressions": [{"key": ROLE, "operator": "In", "values": ["worker", "x" * 64]}]}, "selector-value",
     "expression-value-too-long"),
]


@pytest.mark.parametrize(("selector", "code"), [b[:2] for b in BAD], ids=[b[2] for b in BAD])
def test_invalid_selectors(selector: dict[str, Any], code: str) -> None:
    parsed, problems = parse_selector(selector, ("spec", "machineConfigSelector"))
    assert parsed is None
    assert [p[1] for p in problems] == [code]


def test_nil_selector_is_none_and_empty_is_flagged() -> None:
    assert parse_selector(None, ()) == (None, [])
    empty, _ = parse_selector({}, ())
    assert empty is not None and empty.is_empty


def test_describe_like_kubectl() -> None:
    parsed, _ = parse_selector({"matchLabels": {ROLE: "worker"},
                                "matchExpressions": [{"key": ROLE, "operator": "In", "values": ["worker", "infra"]}]},
                               ())
    assert parsed is not None
    assert parsed.describe() == f"{ROLE}=worker,{ROLE} in (infra,worker)"
