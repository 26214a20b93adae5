"""Label syntax (Kubernetes' qualified names and label values), `--node-labels` lists and `k=v` / `k-` edits."""

from __future__ import annotations

import pytest

from fleet.node_labels import LabelError, check_labels, parse_edits, parse_label_list, relabelled

GOOD = [
    ("node-role.kubernetes.io/gpu", ""),
    ("accelerator", "h100"),
    ("example.com/Rack_1.a", "A-1_b.c"),
    ("a" * 63, "b" * 63),
]
BAD = [
    ("", "x", "empty-key"),
    ("-a", "x", "key-begins-with-dash"),
    ("a" * 64, "x", "key-name-too-long"),
    ("Example.com/a", "x", "uppercase-prefix"),
    ("/a", "x", "empty-prefix"),
    ("a..b/c", "x", "prefix-double-dot"),
    ("a", "b" * 64, "value-too-long"),
    ("a", "-b", "value-begins-with-dash"),
    ("a", "b c", "value-with-space"),
    ("a", "ü", "non-ascii-value"),
]


@pytest.mark.parametrize(("key", "value"), GOOD)
def test_valid_labels(key: str, value: str) -> None:
    assert check_labels({key: value}, "labels") == {key: value}


@pytest.mark.parametrize(("key", "value"), [b[:2] for b in BAD], ids=[b[2] for b in BAD])
def test_invalid_labels(key: str, value: str) -> None:
    with pytest.raises(LabelError) as info:
        check_labels({key: value}, "$.labels")
    assert info.value.path.startswith("$.labels[")


def test_not_an_object_of_strings() -> None:
    for bad in (["a"], {"a": 1}, {"a": None}):
        with pytest.raises(LabelError):
            check_labels(bad, "$.labels")


def test_node_labels_list() -> None:
    assert parse_label_list("node-role.kubernetes.io/worker=,node-role.kubernetes.io/gpu=, zone=a") == {
        "node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/gpu": "", "zone": "a"}
    assert parse_label_list("") == {}
    with pytest.raises(LabelError, match="KEY=VALUE"):
        parse_label_list("justakey")


def test_edits() -> None:
    put, remove = parse_edits(["node-role.kubernetes.io/gpu=", "zone=b", "old-"])
    assert put == {"node-role.kubernetes.io/gpu": "", "zone": "b"} and remove == ("old",)
    assert relabelled({"old": "1", "zone": "a"}, put, remove) == {"node-role.kubernetes.io/gpu": "", "zone": "b"}
    assert relabelled({"a": "1"}, {}, ("absent",)) == {"a": "1"}  # as kubectl: removing an absent label is no error
    for bad in (["k"], ["-"], ["k=v", "k-"], ["Bad Key=v"]):
        with pytest.raises(LabelError):
            parse_edits(bad)
