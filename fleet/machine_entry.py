"""What a pool record keeps of each machine document (fleet/machines.py has the rules that use it).

Pure data with its JSON form; it imports nothing of ours, so the rendered-config model (fleet/rendered.py)
can hold it in a pool record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MachineEntry:
    """What a pool record keeps of one machine document: how to recognise it and what it is served.

    `rendered` is the machine's config on the pool's current target (`rendered-<pool>-<pool hash>-<overlay
    hash>`, fleet/rendered.py machine_config_name), `overlay` the spec merged over the pool's config (kept so
    that a config served to a booting machine while the pool holds its target back gets the same overlay),
    `source` the document's file:line.
    """

    name: str
    selector: Mapping[str, str]
    rendered: str
    overlay: Mapping[str, Any]  # a MachineConfig `spec` (fleet/rendered.py MachineConfigSpec.to_dict)
    overlay_hash: str
    source: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    provenance: Mapping[str, str] = field(default_factory=dict)

    @property
    def node(self) -> str:
        """The node this machine is on day 2 (its `hostname` selector; "" for a first-boot-only document)."""
        return self.selector.get("hostname", "")

    def matches(self, facts: Mapping[str, str]) -> bool:
        """Every selector key equals the fact of the same key."""
        return all(facts.get(k) == v for k, v in self.selector.items())

    def to_dict(self) -> dict[str, Any]:
        """JSON form inside the pool record."""
        return {"name": self.name, "selector": dict(self.selector), "rendered": self.rendered,
                "overlay": dict(self.overlay), "overlayHash": self.overlay_hash, "source": self.source,
                "labels": dict(self.labels), "provenance": dict(self.provenance)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MachineEntry:
        """Read the stored JSON form."""
        return cls(name=str(data["name"]), selector={str(k): str(v) for k, v in (data.get("selector") or {}).items()},
                   rendered=str(data.get("rendered", "")),
                   overlay=dict(data.get("overlay") or {}),
                   overlay_hash=str(data.get("overlayHash", "")), source=str(data.get("source", "")),
                   labels=dict(data.get("labels") or {}), provenance=dict(data.get("provenance") or {}))
