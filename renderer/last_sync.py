"""The generated MachineConfig of a refused KubeletConfig, ContainerRuntimeConfig or image-registry
document's last successful sync, taken back from the pool's current rendered config.

In the MCO a refused KubeletConfig gets a `Failure` condition and its generated MachineConfig stays as
the last successful sync left it, so the pool keeps rendering with it. Here the generated MachineConfigs
are not stored apart, but the pool's current rendered config holds their files and its provenance names
which MachineConfig set each one last: the files `99-<pool>-generated-<kind>[-N]` set are that
MachineConfig again (None when it set nothing, e.g. the first sync already failed).
"""

from __future__ import annotations

from collections.abc import Sequence

from fleet.rendered import Condition, RenderedConfig
from renderer.generated import FAILURE_CONDITIONS, Failure, generated_machine_config
from renderer.model import MachineConfig, Origin


def _setter(provenance_value: str) -> str:
    """`99-worker-generated-kubelet (manifests/k.yaml:3); overrode ...` -> `99-worker-generated-kubelet`."""
    return provenance_value.split(" (", 1)[0].split(";", 1)[0].strip()


def last_synced(failures: Sequence[Failure], pool: str, current: RenderedConfig | None) -> list[MachineConfig]:
    """For each failure, its generated MachineConfig as the pool's current rendered config has it."""
    if current is None or not failures:
        return []
    files = {f.get("path"): f for f in (current.spec.config.get("storage") or {}).get("files") or ()}
    out = []
    done: set[str] = set()
    for failure in failures:
        if failure.machine_config in done:  # several refused documents feed one registries MachineConfig
            continue
        done.add(failure.machine_config)
        kept = [dict(files[key[len("storage.files["):-1]])
                for key, value in current.provenance.items()
                if key.startswith("storage.files[") and _setter(value) == failure.machine_config
                and key[len("storage.files["):-1] in files]
        if kept:
            origin = Origin(f"{current.name} (last successful sync of {failure.kind} {failure.name})")
            out.append(generated_machine_config(failure.machine_config, pool, kept, origin))
    return out


def failure_conditions(conditions: dict[str, Condition], failures: Sequence[Failure], now: str) -> None:
    """Set the pool's `KubeletConfigFailure` / `ContainerRuntimeConfigFailure` / `ImageConfigFailure`
    conditions: True naming each refused object with its errors (file:line and field); False again once none
    is refused (a condition never set stays absent)."""
    for type_ in FAILURE_CONDITIONS:
        mine = [f for f in failures if f.condition_type == type_]
        if mine:
            new = Condition(type_, "True", reason=",".join(f.name for f in mine),
                            message="; ".join(f.message() for f in mine))
        elif type_ in conditions:
            new = Condition(type_, "False")
        else:
            continue
        old = conditions.get(type_)
        since = old.last_transition_time if old is not None and old.status == new.status else now
        conditions[type_] = Condition(new.type, new.status, new.reason, new.message, since)
