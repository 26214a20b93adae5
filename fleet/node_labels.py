"""Node labels: their syntax, the `k=v,k2=v2` list a node registers with, and the `k=v` / `k-` edits of
`mco nodes label`. Pure; the membership rule that reads them is fleet/membership.py.

Syntax (Kubernetes `IsQualifiedName` / `IsValidLabelValue`): a key is `[PREFIX/]NAME`, NAME 1-63 characters
of `[A-Za-z0-9._-]` beginning and ending with a letter or digit, PREFIX a DNS subdomain (fleet/names.py); a
value is empty or like NAME. Checked character by character (no pattern that could backtrack on hostile input). A node keeps at most MAX_LABELS labels.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping

from fleet.errors import PathError
from fleet.names import is_dns_subdomain

MAX_LABELS = 64
_NAME_CHARS = frozenset(string.ascii_letters + string.digits + "-_.")
_ALNUM = frozenset(string.ascii_letters + string.digits)


class LabelError(PathError, ValueError):
    """A label key, value or edit that is not one; `path` names it."""


def _name_problem(text: str, what: str) -> str | None:
    if not text or len(text) > 63:
        return f"{what} must be 1-63 characters"
    if not set(text) <= _NAME_CHARS or text[0] not in _ALNUM or text[-1] not in _ALNUM:
        return f"{what} must be letters, digits, '-', '_' or '.', beginning and ending with a letter or digit"
    return None


def key_problem(key: object) -> str | None:
    """Why `key` is not a label key, or None."""
    if not isinstance(key, str):
        return "a label key must be a string"
    prefix, slash, name = key.rpartition("/")
    if slash and not is_dns_subdomain(prefix):
        return "a label key's prefix must be a lowercase DNS subdomain of at most 253 characters"
    return _name_problem(name, "a label key's name")


def value_problem(value: object) -> str | None:
    """Why `value` is not a label value, or None."""
    if not isinstance(value, str):
        return "a label value must be a string"
    return None if value == "" else _name_problem(value, "a label value")


def check_labels(labels: object, path: str) -> dict[str, str]:
    """`labels` (a JSON object of strings) as a dict; LabelError naming the first bad key or value."""
    if not isinstance(labels, Mapping):
        raise LabelError(path, "must be an object of label keys to values")
    if len(labels) > MAX_LABELS:
        raise LabelError(path, f"at most {MAX_LABELS} labels")
    checked: dict[str, str] = {}
    for key, value in labels.items():
        if (problem := key_problem(key)) is not None:
            raise LabelError(f"{path}[{str(key)[:80]!r}]", problem)
        if (problem := value_problem(value)) is not None:
            raise LabelError(f"{path}[{key!r}]", problem)
        checked[key] = value
    return checked


def parse_label_list(text: str, *, path: str = "--node-labels") -> dict[str, str]:
    """`k=v,k2=,k3=v3` (the kubelet's `--node-labels`) as labels."""
    labels: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, eq, value = item.strip().partition("=")
        if not eq:
            raise LabelError(path, f"{item.strip()[:80]!r} is not KEY=VALUE")
        labels[key] = value
    return check_labels(labels, path)


def parse_edits(args: Iterable[str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """`k=v` (set) and `k-` (remove) arguments, as `kubectl label` takes them: (labels to set, keys to remove)."""
    put: dict[str, str] = {}
    remove: list[str] = []
    for arg in args:
        if "=" in arg:
            key, _, value = arg.partition("=")
            put[key] = value
        elif arg.endswith("-") and len(arg) > 1:
            remove.append(arg[:-1])
        else:
            raise LabelError(arg[:80], "a label edit is KEY=VALUE (set) or KEY- (remove)")
    check_labels(put, "labels")
    for key in remove:
        if (problem := key_problem(key)) is not None:
            raise LabelError(key[:80], problem)
        if key in put:
            raise LabelError(key[:80], "both set and removed")
    return put, tuple(remove)


def relabelled(labels: Mapping[str, str], put: Mapping[str, str], remove: Iterable[str]) -> dict[str, str]:
    """`labels` with `put` set and `remove` taken off (removing an absent key is not an error, as in kubectl)."""
    result = {k: v for k, v in labels.items() if k not in set(remove)}
    result.update(put)
    if len(result) > MAX_LABELS:
        raise LabelError("labels", f"at most {MAX_LABELS} labels")
    return dict(sorted(result.items()))
