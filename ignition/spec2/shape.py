"""The shape of an Ignition spec 2.x config (2.0.0, 2.1.0, 2.2.0), read the way Go's encoding/json reads it.

Ignition's own spec-2 parser (`config/v2_2`, which reads 2.0 and 2.1 by translating them up) decodes the
JSON into the 2.2 structs: a value of the wrong JSON type is fatal, an unknown key is ignored. The 2.2
structs are the union of what 2.0 and 2.1 say, so one shape serves the three versions here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ignition.decode import json_kind
from ignition.report import Path, Report

SPEC2_VERSIONS: tuple[str, ...] = ("2.0.0", "2.1.0", "2.2.0")

# Leaf kinds: "str", "int", "bool"; a dict is an object, a one-element list a list of that element.
_REF: dict[str, Any] = {"source": "str", "verification": {"hash": "str"}}
_NODE_OWNER: dict[str, Any] = {"id": "int", "name": "str"}
_NODE: dict[str, Any] = {"filesystem": "str", "path": "str", "overwrite": "bool", "user": _NODE_OWNER,
                         "group": _NODE_OWNER}
_CREATE_USER: dict[str, Any] = {"uid": "int", "gecos": "str", "homeDir": "str", "noCreateHome": "bool",
                                "primaryGroup": "str", "groups": ["str"], "noUserGroup": "bool",
                                "system": "bool", "noLogInit": "bool", "shell": "str"}
SHAPE: dict[str, Any] = {
    "ignition": {
        "version": "str",
        "config": {"append": [_REF], "replace": _REF},
        "timeouts": {"httpResponseHeaders": "int", "httpTotal": "int"},
        "security": {"tls": {"certificateAuthorities": [_REF]}},
    },
    "storage": {
        "disks": [{"device": "str", "wipeTable": "bool",
                   "partitions": [{"label": "str", "number": "int", "size": "int", "start": "int",
                                   "typeGuid": "str", "guid": "str"}]}],
        "raid": [{"name": "str", "level": "str", "devices": ["str"], "spares": "int", "options": ["str"]}],
        "filesystems": [{"name": "str", "path": "str",
                         "mount": {"device": "str", "format": "str", "wipeFilesystem": "bool", "label": "str",
                                   "uuid": "str", "options": ["str"],
                                   "create": {"force": "bool", "options": ["str"]}}}],
        "files": [{**_NODE, "mode": "int", "append": "bool",
                   "contents": {"compression": "str", "source": "str", "verification": {"hash": "str"}}}],
        "directories": [{**_NODE, "mode": "int"}],
        "links": [{**_NODE, "target": "str", "hard": "bool"}],
    },
    "systemd": {"units": [{"name": "str", "enable": "bool", "enabled": "bool", "mask": "bool", "contents": "str",
                           "dropins": [{"name": "str", "contents": "str"}]}]},
    "networkd": {"units": [{"name": "str", "contents": "str"}]},
    "passwd": {
        "users": [{"name": "str", "passwordHash": "str", "sshAuthorizedKeys": ["str"], **_CREATE_USER,
                   "create": _CREATE_USER}],
        "groups": [{"name": "str", "gid": "int", "passwordHash": "str", "system": "bool"}],
    },
}
_GO_TYPES = {"str": "string", "int": "int", "bool": "bool"}


def _mismatch(report: Report, path: Path, value: Any, want: str) -> None:
    report.error("json-type", path, f"json: cannot unmarshal {json_kind(value)} into Go value of type {want}")


def read(config: Mapping[str, Any], report: Report) -> dict[str, Any] | None:
    """The config with unknown keys and nulls left out (each unknown key a warning), or None after a type
    error (the error is in `report`)."""
    before = len(report.errors)
    out = _read(config, SHAPE, (), report)
    return out if len(report.errors) == before and isinstance(out, dict) else None


def _zero(shape: Any) -> Any:
    """What Go leaves in a list element given as `null`: the zero value."""
    return {} if isinstance(shape, dict) else [] if isinstance(shape, list) else {"str": "", "int": 0, "bool": False}[shape]


def _read(value: Any, shape: Any, path: Path, report: Report) -> Any:
    if isinstance(shape, dict):
        if not isinstance(value, Mapping):
            _mismatch(report, path, value, "struct")
            return None
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key not in shape:
                report.warning("unused-key", (*path, key), f"unused key {key}")
                continue
            if item is None:
                continue
            read_item = _read(item, shape[key], (*path, key), report)
            if read_item is not None:
                out[key] = read_item
        return out
    if isinstance(shape, list):
        if not isinstance(value, list):
            _mismatch(report, path, value, "slice")
            return None
        return [_read(item, shape[0], (*path, i), report) if item is not None else _zero(shape[0])
                for i, item in enumerate(value)]
    ok = {"str": isinstance(value, str),
          "int": isinstance(value, int) and not isinstance(value, bool) or (
              isinstance(value, float) and value.is_integer()),
          "bool": isinstance(value, bool)}[shape]
    if not ok:
        _mismatch(report, path, value, _GO_TYPES[shape])
        return None
    return int(value) if shape == "int" else value
