"""The typed machine document: this project's own kind `Machine` (`machine-config.io/v1`).

Which machines it selects (fleet/machines.py: `mac`, `uuid`, `serial`, `hostname`, normalised here so a
selector and a request compare alike), the labels its machines carry (their pool follows from them,
fleet/membership.py), the machine templates that make its overlay and the variables they see
(renderer/machine_render.py). Only the shape is checked here, and the labels' syntax (they are a node's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet.machines import SELECTOR_KEYS, FactError, normalise
from fleet.names import is_dns_label
from fleet.node_labels import MAX_LABELS, key_problem, value_problem
from renderer.load import Document
from renderer.shape import Checker, Origin, origin_of, read_metadata

MACHINE_API = "machine-config.io/v1"
_SPEC_KEYS = ("selector", "labels", "templates", "variables")


@dataclass(frozen=True)
class Machine:
    """A machine document: which machines it selects, their labels, the machine templates that make their
    overlay, and the variables those templates see."""

    name: str
    selector: Mapping[str, str]           # normalised (fleet/machines.py normalise)
    labels: Mapping[str, str]
    templates: tuple[str, ...]
    variables: Mapping[str, Any]
    origin: Origin
    doc: Document | None = field(default=None, compare=False, repr=False)


def _labels(check: Checker, spec: Mapping[str, Any]) -> dict[str, str]:
    """The machine's labels: its node's labels, so Kubernetes label syntax (fleet/node_labels.py), each bad key or
    value an error naming it, as the API server refuses such a Node."""
    labels = check.string_map(spec, "labels", ("spec",))
    if len(labels) > MAX_LABELS:
        check.add("invalid-label", ("spec", "labels"), f"at most {MAX_LABELS} labels")
    for key, value in labels.items():
        problem = key_problem(key) or value_problem(value)
        if problem is not None:
            check.add("invalid-label", ("spec", "labels", key), problem)
    return labels


def _machine(check: Checker, data: Mapping[str, Any]) -> Machine:
    name, _, _ = read_metadata(check, data)
    spec = check.mapping(data, "spec", ())
    for key in spec:
        if key not in _SPEC_KEYS:
            check.add("unused-key", ("spec", key), f"unused key {key}", severity="warning")
    selector: dict[str, str] = {}
    for key, value in check.mapping(spec, "selector", ("spec",)).items():
        if key in SELECTOR_KEYS and not isinstance(value, str):  # (says what YAML 1.1 read: a MAC as a number)
            check.type_error(("spec", "selector", str(key)), "a string", value)
            continue
        try:
            selector[str(key)] = normalise(str(key), value)
        except FactError as exc:
            check.add("machine-selector", ("spec", "selector", str(key)), exc.message)
    templates = check.strings(spec, "templates", ("spec",))
    for i, template in enumerate(templates):
        if not is_dns_label(template):
            check.add("invalid-name", ("spec", "templates", i), f"template {template!r} is not a lowercase DNS label")
    return Machine(name=name, selector=selector, labels=_labels(check, spec),
                   templates=templates, variables=dict(check.mapping(spec, "variables", ("spec",))),
                   origin=origin_of(check.doc), doc=check.doc)


KINDS: dict[tuple[str, str], Callable[[Checker, Mapping[str, Any]], Machine]] = {(MACHINE_API, "Machine"): _machine}
