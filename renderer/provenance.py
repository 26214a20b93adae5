"""Which MachineConfig (and manifest file:line) set each file, unit, dropin, user, kernel argument and image.

Computed beside the merge from the same ordered MachineConfigs: every MachineConfig that sets an
entry is recorded in order; the last one wins (it is what the merge keeps) and the earlier ones are
what it overrode. Kernel arguments and extensions are concatenated, not overridden, so every
MachineConfig that adds one is listed. Keys:

    storage.files[/etc/chrony.conf]   storage.directories[P]   storage.links[P]
    systemd.units[chronyd.service]    systemd.units[kubelet.service].dropins[10-env.conf]
    passwd.users[core]                passwd.groups[G]          storage.disks[D] (filesystems, raid, luks)
    kernelArguments[nosmt]            extensions[usbguard]      osImageURL   baseOSExtensionsContainerImage
    kernelType   fips

Values: `50-chrony (manifests/50-chrony.yaml:7); overrode 00-worker (templates/worker/00-worker/files/chrony.yaml:1)`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from renderer.model import MachineConfig

_KEYED = (("storage", "files", "path"), ("storage", "directories", "path"), ("storage", "links", "path"),
          ("storage", "disks", "device"), ("storage", "filesystems", "device"), ("storage", "raid", "name"),
          ("storage", "luks", "name"), ("passwd", "users", "name"), ("passwd", "groups", "name"),
          ("systemd", "units", "name"))
_CONCATENATED = ("kernelArguments[", "extensions[")


def _line(mc: MachineConfig, path: tuple[str | int, ...], key_value: str | None) -> str:
    """`file:line` of the entry at `path` inside `mc`'s manifest (best effort, cheap for JSON manifests)."""
    doc = mc.doc
    if doc is None:
        return str(mc.origin)
    if doc._node is not None:
        where = doc.locate(path)
        return f"{doc.source}:{where[0]}" if where else doc.source
    if key_value is not None and doc.text:
        line = _string_lines(doc).get(key_value)
        if line is not None:
            return f"{doc.source}:{line}"
    return str(mc.origin)


# the values of the keys entries are keyed by ("path": "/etc/x", "name": "a.service", "device": ...)
_STRING = re.compile(r'"(?:path|name|device)"\s*:\s*"((?:[^"\\\n]|\\.)*)"')
_lines_cache: dict[int, tuple[Any, dict[str, int]]] = {}


def _string_lines(doc: Any) -> dict[str, int]:
    """First line of every entry key value (path, name, device) of a JSON manifest (one pass, cached)."""
    cached = _lines_cache.get(id(doc))
    if cached is not None and cached[0] is doc:
        return cached[1]
    text = doc.text
    table: dict[str, int] = {}
    line, last = 1, 0
    for m in _STRING.finditer(text):
        start = m.start()
        line += text.count("\n", last, start)
        last = start
        raw = m.group(1)
        if "\\" in raw:
            try:
                raw = json.loads(f'"{raw}"')
            except ValueError:
                continue
        table.setdefault(raw, line)
    if len(_lines_cache) > 4096:
        _lines_cache.clear()
    _lines_cache[id(doc)] = (doc, table)
    return table


def _where(mc: MachineConfig, key: str, path: tuple[str | int, ...], key_value: str | None) -> str:
    origin = mc.entry_origins.get(key)
    if origin is None:
        origin = _line(mc, path, key_value)
    return f"{mc.name} ({origin})"


def _config_entries(config: Mapping[str, Any]) -> list[tuple[str, tuple[str | int, ...], str]]:
    """(key, path inside the config, key value) of every keyed entry of one config."""
    out: list[tuple[str, tuple[str | int, ...], str]] = []
    for section, name, key in _KEYED:
        block = config.get(section)
        if not isinstance(block, Mapping):
            continue
        for i, entry in enumerate(block.get(name) or ()):
            if not isinstance(entry, Mapping) or not isinstance(entry.get(key), str):
                continue
            value = entry[key]
            out.append((f"{section}.{name}[{value}]", (section, name, i), value))
            if name == "units":
                for j, dropin in enumerate(entry.get("dropins") or ()):
                    if isinstance(dropin, Mapping) and isinstance(dropin.get("name"), str):
                        out.append((f"systemd.units[{value}].dropins[{dropin['name']}]",
                                    (section, name, i, "dropins", j), dropin["name"]))
    return out


def butane_origins(mc: MachineConfig, text: str, source: str) -> dict[str, str]:
    """`file:line` in a Butane document for each entry and kernel argument its MachineConfig sets.

    Butane output has no positions, so the line is that of the first `path: X` / `name: X` / `- X` naming
    the entry's key in the .bu text (quoted or not)."""
    lines = text.splitlines()

    def find(value: str, keys: tuple[str, ...]) -> int | None:
        quoted = (value, f'"{value}"', f"'{value}'")
        for number, line in enumerate(lines, 1):
            stripped = line.split(" #", 1)[0].strip().removeprefix("- ").strip()
            for key in keys:
                if stripped.startswith(key) and stripped[len(key):].strip() in quoted:
                    return number
        return None

    out: dict[str, str] = {}
    for key, _path, value in _config_entries(mc.spec.config) if mc.has_config else ():
        line = find(value, ("path:", "name:", "device:"))
        if line is not None:
            out[key] = f"{source}:{line}"
    for arg in mc.spec.kernel_arguments + mc.spec.extensions:
        line = find(arg, ("",))
        if line is not None:
            out[f"kernelArguments[{arg}]" if arg in mc.spec.kernel_arguments else f"extensions[{arg}]"] = \
                f"{source}:{line}"
    return out


def compute_provenance(configs: Sequence[MachineConfig], *, default_source: str = "cluster.yaml") -> dict[str, str]:
    """Provenance of every entry of the merged result of `configs` (in merge order)."""
    setters: dict[str, list[str]] = {}
    for mc in configs:
        if mc.has_config:
            for key, path, value in _config_entries(mc.spec.config):
                setters.setdefault(key, []).append(_where(mc, key, (*mc.config_path, *path), value))
        spec = mc.spec
        for i, arg in enumerate(spec.kernel_arguments):
            setters.setdefault(f"kernelArguments[{arg}]", []).append(
                _where(mc, f"kernelArguments[{arg}]", ("spec", "kernelArguments", i), arg))
        for i, ext in enumerate(spec.extensions):
            setters.setdefault(f"extensions[{ext}]", []).append(
                _where(mc, f"extensions[{ext}]", ("spec", "extensions", i), ext))
        if not mc.generated:
            if spec.os_image_url:
                setters.setdefault("osImageURL", []).append(_where(mc, "osImageURL", ("spec", "osImageURL"),
                                                                   spec.os_image_url))
            if spec.base_os_extensions_container_image:
                setters.setdefault("baseOSExtensionsContainerImage", []).append(
                    _where(mc, "baseOSExtensionsContainerImage", ("spec", "baseOSExtensionsContainerImage"),
                           spec.base_os_extensions_container_image))
        if spec.kernel_type in ("realtime", "64k-pages"):
            setters.setdefault("kernelType", []).append(_where(mc, "kernelType", ("spec", "kernelType"),
                                                               spec.kernel_type))
        if spec.fips:
            setters.setdefault("fips", []).append(_where(mc, "fips", ("spec", "fips"), None))
    out: dict[str, str] = {}
    for key, who in setters.items():
        if key.startswith(_CONCATENATED) or key == "fips":
            out[key] = who[0] if len(who) == 1 else f"{who[0]}; also from {', '.join(who[1:])}"
        else:
            last, earlier = who[-1], who[:-1]
            out[key] = last if not earlier else f"{last}; overrode {', '.join(reversed(earlier))}"
    out.setdefault("osImageURL", f"{default_source} (default)")
    return dict(sorted(out.items()))


def _names(key: str) -> list[str]:
    """The names inside a key's brackets: `systemd.units[k.service].dropins[10.conf]` -> [k.service, 10.conf]."""
    names, depth, current = [], 0, ""
    for ch in key:
        if ch == "[":
            if depth:
                current += ch
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth:
                current += ch
            else:
                names.append(current)
                current = ""
        elif depth:
            current += ch
    return names


def explain(provenance: Mapping[str, str], query: str | None = None) -> list[tuple[str, str]]:
    """Provenance lines matching `query`: a path (file, directory, link; a directory also matches what is
    under it), a unit (with its dropins) or dropin name, a kernel argument (`nosmt`, or `audit` for
    `audit=1`), or any provenance key; all of them without a query."""
    items = sorted(provenance.items())
    if not query:
        return items
    if query in provenance:
        return [(query, provenance[query])]
    under = query.rstrip("/") + "/"
    out = []
    for key, value in items:
        names = _names(key)
        if not names:
            continue
        if query in names or (query.startswith("/") and names[0].startswith(under)):
            out.append((key, value))
        elif key.startswith("kernelArguments[") and names[0].split("=", 1)[0] == query:
            out.append((key, value))
    return out
