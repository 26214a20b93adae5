"""Plain files and directories: the common entry shape, recognised in one cheap test.

A rendered cluster holds tens of thousands of files like `{"path": "/etc/x", "mode": 420, "overwrite": true,
"contents": {"source": "data:,..."}}`. Decoding each (ignition/decode.py) and running every per-entry rule on
it (rules/nodes.py, rules/resources.py, rules/dups.py) costs several microseconds; this module decides in one
pass that an entry needs none of that: it decodes to itself (known field names spelt exactly, no nulls, the
right JSON types) and every per-entry rule passes with no entry at all, errors and warnings alike.

It is a conservative *acceptor*: anything it is not sure of (a link, `append`, `verification`, HTTP headers,
a special mode bit, a non-data URL, an odd path) answers False and takes the full route, so it never changes
a verdict, only skips work (tests/ignition/test_plain.py checks that against the full rules). It holds for
every spec version 3.0.0-3.7.0-experimental: the fields it admits exist, with the same types and rules, in all.
Whole-config rules (duplicates, paths through links, systemd path conflicts) still see every entry.
"""

from __future__ import annotations

import re
from typing import Any

from ignition.rules.dataurls import PLAIN_DATA_URL

_FILE_KEYS = frozenset({"path", "mode", "overwrite", "contents", "user", "group"})
_DIRECTORY_KEYS = frozenset({"path", "mode", "overwrite", "user", "group"})
_CONTENTS_KEYS = frozenset({"source", "compression"})
_OWNER_KEYS = frozenset({"id", "name"})
# absolute and fully simplified (Go's path.Clean leaves it as it is): no empty, "." or ".." element
_CLEAN_ABSOLUTE = re.compile(r"(?:/(?!\.\.?(?:/|\Z))[^/]+)+")
_INT_MAX = 2**63 - 1


def _plain_owner(owner: Any) -> bool:
    """`user`/`group`: an id or a name (not both, which Ignition refuses)."""
    if type(owner) is not dict or not _OWNER_KEYS.issuperset(owner) or len(owner) != 1 or None in owner.values():
        return False
    value = owner.get("name")
    if value is not None:
        return type(value) is str
    value = owner.get("id")
    return type(value) is int and -_INT_MAX - 1 <= value <= _INT_MAX


def _plain_node(entry: dict[str, Any]) -> bool:
    """The members files and directories share: path, mode without special bits, overwrite, owners.

    A null anywhere fails a type test below (decode would drop or zero it: not the same object any more)."""
    path = entry.get("path")
    if type(path) is not str or path[:1] != "/" or (
            ("//" in path or "/." in path or path[-1] == "/") and _CLEAN_ABSOLUTE.fullmatch(path) is None):
        return False
    mode = entry.get("mode", 0)
    if type(mode) is not int or mode < 0 or mode > 0o777:
        return False
    if type(entry.get("overwrite", False)) is not bool:
        return False
    if "user" in entry and not _plain_owner(entry["user"]):
        return False
    return "group" not in entry or _plain_owner(entry["group"])


_ABSENT = object()


def plain_file(entry: dict[str, Any]) -> bool:
    """True when a `storage.files` entry decodes to itself and passes every File rule without an entry."""
    if not _FILE_KEYS.issuperset(entry) or not _plain_node(entry):
        return False
    contents = entry.get("contents", _ABSENT)
    if contents is _ABSENT:
        return entry.get("overwrite") is not True  # overwrite needs a source
    if type(contents) is not dict or not _CONTENTS_KEYS.issuperset(contents):
        return False
    source = contents.get("source", _ABSENT)
    if source is _ABSENT:
        if entry.get("overwrite") is True:
            return False
    elif type(source) is not str or (source and PLAIN_DATA_URL.fullmatch(source) is None):
        return False
    compression = contents.get("compression", "")
    return compression == "" or compression == "gzip"


def plain_directory(entry: dict[str, Any]) -> bool:
    """True when a `storage.directories` entry decodes to itself and passes every Directory rule."""
    return _DIRECTORY_KEYS.issuperset(entry) and _plain_node(entry)
