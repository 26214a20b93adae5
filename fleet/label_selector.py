"""Kubernetes label selectors (`metav1.LabelSelector`), as pools use them to pick MachineConfigs and nodes.

Semantics (`LabelSelectorAsSelector`): `matchLabels` is an AND of key == value; `matchExpressions` are
AND-ed with it; `In` needs the label present with one of `values`, `NotIn` is true when the label is
absent or has none of them, `Exists` / `DoesNotExist` test presence only. `In`/`NotIn` need a non-empty
`values`, `Exists`/`DoesNotExist` must have none; every key must be a label key and every value a label value
(`labels.NewRequirement`: validateLabelKey, validateLabelValue; fleet/node_labels.py owns that syntax). A nil selector matches nothing; the MCO refuses to
render a pool whose selector is `{}` (it would select everything), and so do we (`is_empty`); a pool's
`nodeSelector` that is empty or absent matches no node (MCO `pkg/helpers/helpers.go`: ListPools).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fleet.node_labels import key_problem, value_problem

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
Path = tuple[str | int, ...]  # a field path, as problems name it
ROLE_PREFIX = "node-role.kubernetes.io/"


@dataclass(frozen=True)
class Requirement:
    """One `matchExpressions` entry."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether `labels` satisfy this requirement."""
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist

    def describe(self) -> str:
        """`role in (worker,infra)`, as kubectl prints it."""
        if self.operator == "Exists":
            return self.key
        if self.operator == "DoesNotExist":
            return f"!{self.key}"
        op = "in" if self.operator == "In" else "notin"
        return f"{self.key} {op} ({','.join(sorted(self.values))})"

    def to_dict(self) -> dict[str, Any]:
        """The `matchExpressions` entry as a manifest writes it."""
        return {"key": self.key, "operator": self.operator, **({"values": list(self.values)} if self.values else {})}


@dataclass(frozen=True)
class LabelSelector:
    """matchLabels + matchExpressions."""

    match_labels: Mapping[str, str]
    match_expressions: tuple[Requirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        """`{}`: would select everything."""
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether an object with `labels` is selected (an empty selector matches nothing here)."""
        expressions = self.match_expressions
        if not self.match_labels and not expressions:
            return False
        for key, value in self.match_labels.items():
            if labels.get(key) != value:
                return False
        return not expressions or all(req.matches(labels) for req in expressions)  # (most pools: labels only)

    def describe(self) -> str:
        """kubectl's string form: `machineconfiguration.openshift.io/role=worker,env in (a,b)`."""
        parts = [f"{k}={v}" for k, v in sorted(self.match_labels.items())]
        parts += [r.describe() for r in self.match_expressions]
        return ",".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The `metav1.LabelSelector` object (`matchExpressions` only when there are some)."""
        data: dict[str, Any] = {"matchLabels": dict(self.match_labels)}
        if self.match_expressions:
            data["matchExpressions"] = [r.to_dict() for r in self.match_expressions]
        return data


NOTHING = LabelSelector(match_labels={})  # an absent or empty selector: matches no node, no MachineConfig


def role_labels(pool: str) -> dict[str, str]:
    """`node-role.kubernetes.io/<pool>: ""` (none for no pool): the role label a machine provisioned from the pool's
    config registers with when it gives no labels of its own, as the kubelet sets it."""
    return {f"{ROLE_PREFIX}{pool}": ""} if pool else {}


def role_selector(pool: str) -> LabelSelector:
    """The pool's role label as a selector: the nodeSelector of the MCO's built-in pools."""
    return LabelSelector(match_labels=role_labels(pool))


def _label_value(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    return None


def _syntax_problem(key: object, value: str) -> tuple[str, str] | None:
    """(code, message) when `key` is not a label key or `value` not a label value: LabelSelectorAsSelector
    refuses such a selector (labels.NewRequirement), and the MCO's render controller fails the pool."""
    if (problem := key_problem(key)) is not None:
        return "selector-key", f"invalid label key {str(key)[:80]!r}: {problem}"
    if (problem := value_problem(value)) is not None:
        return "selector-value", f"invalid label value {value[:80]!r} for key {key!r}: {problem}"
    return None


def parse_selector(data: Any, path: Path) -> tuple[LabelSelector | None, list[tuple[Path, str, str]]]:
    """Read a LabelSelector object; returns the selector (None if absent or broken) and (path, code, message) problems."""
    problems: list[tuple[Path, str, str]] = []
    if data is None:
        return None, problems
    if not isinstance(data, Mapping):
        return None, [(path, "json-type", "a label selector must be an object")]
    labels: dict[str, str] = {}
    raw_labels = data.get("matchLabels") or {}
    if not isinstance(raw_labels, Mapping):
        problems.append(((*path, "matchLabels"), "json-type", "matchLabels must be an object of strings"))
    else:
        for key, value in raw_labels.items():
            text = _label_value(value)
            if text is None:
                problems.append(((*path, "matchLabels", key), "json-type",
                                 f"label value must be a string, got {type(value).__name__} {value!r}"))
            elif (problem := _syntax_problem(key, text)) is not None:
                problems.append(((*path, "matchLabels", key), *problem))
            else:
                labels[str(key)] = text
    requirements: list[Requirement] = []
    raw_exprs = data.get("matchExpressions") or []
    if not isinstance(raw_exprs, list):
        problems.append(((*path, "matchExpressions"), "json-type", "matchExpressions must be a list"))
        raw_exprs = []
    for i, expr in enumerate(raw_exprs):
        epath = (*path, "matchExpressions", i)
        if not isinstance(expr, Mapping):
            problems.append((epath, "json-type", "must be an object with key, operator, values"))
            continue
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values")
        if not isinstance(key, str) or not key:
            problems.append(((*epath, "key"), "required", "key is required"))
            continue
        if (problem := _syntax_problem(key, "")) is not None:
            problems.append(((*epath, "key"), *problem))
            continue
        if op not in OPERATORS:
            problems.append(((*epath, "operator"), "selector-operator",
                             f"operator {op!r} is not one of {', '.join(OPERATORS)}"))
            continue
        if values is not None and not isinstance(values, list):
            problems.append(((*epath, "values"), "json-type", "values must be a list of strings"))
            continue
        texts: list[str] = []
        for j, v in enumerate(values or []):
            text = _label_value(v)
            if text is None:
                problems.append(((*epath, "values", j), "json-type",
                                 f"values must be strings, got {type(v).__name__} {v!r}"))
            elif (problem := _syntax_problem(key, text)) is not None:
                problems.append(((*epath, "values", j), *problem))
            else:
                texts.append(text)
        if op in ("In", "NotIn") and not values:
            problems.append(((*epath, "values"), "selector-values",
                             f"values must be non-empty for operator {op}"))
            continue
        if op in ("Exists", "DoesNotExist") and values:
            problems.append(((*epath, "values"), "selector-values",
                             f"values must be empty for operator {op}"))
            continue
        requirements.append(Requirement(key=key, operator=str(op), values=tuple(texts)))
    if problems:
        return None, problems
    return LabelSelector(match_labels=labels, match_expressions=tuple(requirements)), problems
