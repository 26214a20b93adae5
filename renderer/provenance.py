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
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import accumulate, compress, repeat
from typing import Any

from ignition.spec2 import spec2_version
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


# the values of the keys entries are keyed by ("path": "/etc/x", "name": "a.service", "device": ...).
# Possessive: the same matches as `"(?:path|name|device)"\s*:\s*"((?:[^"\\\n]|\\.)*)"` (a value splits
# into its characters and escapes one way only, so backtracking never finds another) at a third of the cost.
_STRING = re.compile(r'"(?:path|name|device)"\s*:\s*"([^"\\\n]*+(?:\\.[^"\\\n]*+)*+)"')
_start, _group = re.Match.start, re.Match.group


def _string_lines(doc: Any) -> dict[str, int]:
    """First line of every entry key value (path, name, device) of a JSON manifest (one pass, kept on the
    document as `key_lines`: a module-level memo would keep documents, and their data, alive past a render)."""
    cached: dict[str, int] | None = doc.key_lines
    if cached is None:
        cached = doc.key_lines = _key_lines(doc.text)
    return cached


def _key_lines(text: str) -> dict[str, int]:
    """`_string_lines`' table by the regex: starts, values and line numbers are taken from the matches with
    `map`/`accumulate` (no Python code per match); a value with an escape is decoded as before, one by one."""
    matches = list(_STRING.finditer(text))
    starts = [0, *map(_start, matches)]
    values = list(map(_group, matches, repeat(1)))
    # line of match k: 1 + the newlines between the starts of the matches before it
    lines = list(accumulate(map(text.count, repeat("\n"), starts, starts[1:])))
    table: dict[str, int]
    if "\\" not in "".join(values):
        return dict(zip(reversed(values), map((1).__add__, reversed(lines)), strict=True))  # first one wins
    table = {}
    for raw, line in zip(values, lines, strict=True):
        if "\\" in raw:
            try:
                raw = json.loads(f'"{raw}"')
            except ValueError:
                continue
        table.setdefault(raw, line + 1)
    return table


def _where(mc: MachineConfig, key: str, path: tuple[str | int, ...], key_value: str | None) -> str:
    origin = mc.entry_origins.get(key)
    if origin is None:
        origin = _line(mc, path, key_value)
    return f"{mc.name} ({origin})"


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
    keys, _paths, values = _config_entries(mc.spec.config) if mc.has_config else ([], [], [])
    for key, value in zip(keys, values, strict=True):
        line = find(value, ("path:", "name:", "device:"))
        if line is not None:
            out[key] = f"{source}:{line}"
    for arg in mc.spec.kernel_arguments + mc.spec.extensions:
        line = find(arg, ("",))
        if line is not None:
            out[f"kernelArguments[{arg}]" if arg in mc.spec.kernel_arguments else f"extensions[{arg}]"] = \
                f"{source}:{line}"
    return out


# _KEYED grouped by section, with each key's prefix: one lookup of `storage` for its seven lists
_SECTIONS = tuple((section, tuple((name, key, f"{section}.{name}[") for s, name, key in _KEYED if s == section))
                  for section in dict.fromkeys(s for s, _n, _k in _KEYED))
_Path = tuple[str | int, ...]


def _config_entries(config: Mapping[str, Any]) -> tuple[list[str], list[_Path], list[str]]:
    """The provenance key, path inside the config and key value of every keyed entry of one config, in
    `_KEYED` order (a unit's dropins after it), as three lists built a list at a time."""
    keys: list[str] = []
    paths: list[_Path] = []
    values: list[str] = []
    for section, lists in _SECTIONS:
        block = config.get(section)
        if not (type(block) is dict or isinstance(block, Mapping)):
            continue
        for name, key, prefix in lists:
            entries = block.get(name)
            if not entries:
                continue
            if name != "units":
                found = [i for i, entry in enumerate(entries)
                         if (type(entry) is dict or isinstance(entry, Mapping)) and isinstance(entry.get(key), str)]
                named = [entries[i][key] for i in found]
                keys += [f"{prefix}{value}]" for value in named]
                paths += [(section, name, i) for i in found]
                values += named
                continue
            for i, entry in enumerate(entries):
                if not (type(entry) is dict or isinstance(entry, Mapping)) or not isinstance(entry.get(key), str):
                    continue
                value = entry[key]
                keys.append(f"{prefix}{value}]")
                paths.append((section, name, i))
                values.append(value)
                for j, dropin in enumerate(entry.get("dropins") or ()):
                    if isinstance(dropin, Mapping) and isinstance(dropin.get("name"), str):
                        keys.append(f"systemd.units[{value}].dropins[{dropin['name']}]")
                        paths.append((section, name, i, "dropins", j))
                        values.append(dropin["name"])
    return keys, paths, values


def _spec_entries(mc: MachineConfig) -> list[tuple[str, tuple[str | int, ...], str | None]]:
    """(key, path in the manifest, key value) of what `spec` sets beside its config, in provenance order."""
    spec = mc.spec
    out: list[tuple[str, tuple[str | int, ...], str | None]] = []
    if spec.kernel_arguments:
        out += [(f"kernelArguments[{arg}]", ("spec", "kernelArguments", i), arg)
                for i, arg in enumerate(spec.kernel_arguments)]
    if spec.extensions:
        out += [(f"extensions[{ext}]", ("spec", "extensions", i), ext) for i, ext in enumerate(spec.extensions)]
    if spec.os_image_url:  # from any MachineConfig, as the merge takes it
        out.append(("osImageURL", ("spec", "osImageURL"), spec.os_image_url))
    if spec.base_os_extensions_container_image:
        out.append(("baseOSExtensionsContainerImage", ("spec", "baseOSExtensionsContainerImage"),
                    spec.base_os_extensions_container_image))
    if spec.kernel_type in ("realtime", "64k-pages"):
        out.append(("kernelType", ("spec", "kernelType"), spec.kernel_type))
    if spec.fips:
        out.append(("fips", ("spec", "fips"), None))
    return out


def _setters(mc: MachineConfig) -> tuple[list[str], list[str]]:
    """Every provenance key `mc` sets, in order, and the `name (file:line)` it is set by.

    The per-entry `_where` only for YAML manifests (their lines come from the composed nodes); otherwise
    the line of every key value comes from one dictionary and the strings from one format each."""
    doc = mc.doc
    if doc is not None and doc._node is not None:
        entries: list[tuple[str, _Path, str | None]] = []
        if mc.has_config:
            names, paths, named = _config_entries(mc.spec.config)
            entries += zip(names, [(*mc.config_path, *path) for path in paths], named, strict=True)
        entries += _spec_entries(mc)
        return [e[0] for e in entries], [_where(mc, *e) for e in entries]
    keys, _paths, found = _config_entries(mc.spec.config) if mc.has_config else ([], [], [])
    values: list[str | None] = [*found]
    for key, _path, value in _spec_entries(mc):
        keys.append(key)
        values.append(value)
    name = mc.name
    if doc is None or not doc.text or not keys:
        whos = [f"{name} ({mc.origin})"] * len(keys)
    else:  # `name (source:line)` from the manifest's line table; `name (origin)` for a value not in it
        prefix = f"{name} ({doc.source}:"
        lines = list(map(_string_lines(doc).get, values))  # type: ignore[arg-type]  # None: not in the table
        if None in lines:
            default = f"{name} ({mc.origin})"
            whos = [default if line is None else f"{prefix}{line})" for line in lines]
        else:
            whos = [f"{prefix}{line})" for line in lines]
    origins = mc.entry_origins
    if origins:
        for i, key in enumerate(keys):
            origin = origins.get(key)
            if origin is not None:
                whos[i] = f"{name} ({origin})"
    return keys, whos


def compute_provenance(configs: Sequence[MachineConfig]) -> dict[str, str]:
    """Provenance of every entry of the merged result of `configs` (in merge order), keys in the order they
    are first set (not sorted: the stored JSON and `explain` sort them anyway).

    Every (key, setter) in order goes into two flat lists; one dict of them keeps each key's last setter,
    and only the keys set more than once (a Counter finds them) get their setters listed."""
    keys: list[str] = []
    whos: list[str] = []
    for mc in configs:
        mc_keys, mc_whos = _setters(mc)
        converted = spec2_version(mc.spec.config) if mc.has_config else None
        if converted:  # said wherever the MachineConfig is named (MCO ParseAndConvertConfig converts it)
            mc_whos = [f"{who} [Ignition {converted} config converted to spec 3]" for who in mc_whos]
        keys += mc_keys
        whos += mc_whos
    out = dict(zip(keys, whos, strict=True))
    if len(out) < len(keys):
        twice = {key for key, count in Counter(keys).items() if count > 1}
        setters: dict[str, list[str]] = {key: [] for key in twice}
        for key, who in compress(zip(keys, whos, strict=True), map(twice.__contains__, keys)):
            setters[key].append(who)
        for key, listed in setters.items():
            if key.startswith(_CONCATENATED) or key == "fips":
                out[key] = f"{listed[0]}; also from {', '.join(listed[1:])}"
            else:
                out[key] = f"{listed[-1]}; overrode {', '.join(reversed(listed[:-1]))}"
    out.setdefault("osImageURL", "cluster.yaml (default)")
    return out  # keys in merge order: whoever shows or stores them sorts them (explain, to_json_bytes)


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
