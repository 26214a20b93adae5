"""The typed machine document: this project's own kind `Machine` (`machine-config.io/v1`).

Which machines it selects (fleet/machines.py: `mac`, `uuid`, `serial`, `hostname`, normalised here so a
selector and a request compare alike), the labels its machines carry (their pool follows from them,
fleet/membership.py), the machine templates that make its overlay and the variables they see
(renderer/machine_render.py). Only the shape is checked here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet.machines import FactError, normalise
from fleet.names import is_dns_label
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


def _machine(check: Checker, data: Mapping[str, Any]) -> Machine:
    name, _, _ = read_metadata(check, data)
    spec = check.mapping(data, "spec", ())
    for key in spec:
        if key not in _SPEC_KEYS:
            check.add("unused-key", ("spec", key), f"unused key {key}", severity="warning")
    selector: dict[str, str] = {}
    for key, value in check.mapping(spec, "selector", ("spec",)).items():
        try:
            selector[str(key)] = normalise(str(key), value)
        except FactError as exc:
            check.add("machine-selector", ("spec", "selector", str(key)), exc.message)
    templates = check.strings(spec, "templates", ("spec",))
    for i, template in enumerate(templates):
        if not is_dns_label(template):
            check.add("invalid-name", ("spec", "templates", i), f"template {template!r} is not a lowercase DNS label")
    return Machine(name=name, selector=selector, labels=check.string_map(spec, "labels", ("spec",)),
                   templates=templates, variables=dict(check.mapping(spec, "variables", ("spec",))),
                   origin=origin_of(check.doc), doc=check.doc)


KINDS: dict[tuple[str, str], Callable[[Checker, Mapping[str, Any]], Machine]] = {(MACHINE_API, "Machine"): _machine}
