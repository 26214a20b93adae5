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
from itertools import repeat
from typing import Any

from ignition.rules.dataurls import PLAIN_DATA_URL

_FILE_KEYS = frozenset({"path", "mode", "overwrite", "contents", "user", "group"})
_DIRECTORY_KEYS = frozenset({"path", "mode", "overwrite", "user", "group"})
_CONTENTS_KEYS = frozenset({"source", "compression"})
_OWNER_KEYS = frozenset({"id", "name"})
# absolute and fully simplified (Go's path.Clean leaves it as it is): no empty, "." or ".." element
_CLEAN_ABSOLUTE = re.compile(r"(?:/(?!\.\.?(?:/|\Z))[^/]+)+")
_INT_MAX = 2**63 - 1
# The batch tests (`plain_files`, `plain_directories`) join a list's strings with this separator and test them
# in one regex pass. No pattern below matches it and a string holding it is refused (the count test), so the
# joined text splits back into exactly the list's strings: the one match holds iff each string matches alone.
_SEP = "\n"
# `_CLEAN_ABSOLUTE` for one path, the end of a path being the separator or the end of the text
_CLEAN_ONE = r"(?:/(?!\.\.?(?:/|\n|\Z))[^/\n]+)+"
_CLEAN_ABSOLUTE_LINES = re.compile(rf"{_CLEAN_ONE}(?:\n{_CLEAN_ONE})*")
# PLAIN_DATA_URL admits ASCII letters, digits and punctuation only (never "\n"); "" is a plain source too.
# Each source is tried first as the commonest shape, `data:,` and text (the same text pattern PLAIN_DATA_URL
# has after its bare `data:,`, so a subset of it): same language, half the regex steps for those sources.
_PLAIN_TEXT = PLAIN_DATA_URL.pattern[PLAIN_DATA_URL.pattern.index("(?:,") + 4:PLAIN_DATA_URL.pattern.index("|;base64,")]
_ONE_SOURCE = f"(?:data:,{_PLAIN_TEXT}|{PLAIN_DATA_URL.pattern})?"
_PLAIN_SOURCE_LINES = re.compile(rf"{_ONE_SOURCE}(?:\n{_ONE_SOURCE})*")
# The commonest sources, `data:,` and text, checked without a regex step per character (`_plain_sources`)
_TEXT_CHARS = ("!$&'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~" + _SEP).encode()
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_DICT = frozenset({dict})
_STR = frozenset({str})
_INT = frozenset({int})
_BOOL = frozenset({bool})
_MODES = frozenset(range(0o1000))  # with the type test (True == 1 in a set)
_COMPRESSIONS = frozenset({"", "gzip"})


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


# --- whole lists at once -----------------------------------------------------------------------------------
# A config's files are tested as one list with C-level passes (map, set, str methods, one regex match) instead
# of one Python call per entry: the per-entry frames were most of the cost. These are sound, not complete:
# True means every entry passes the per-entry test above; False means "not sure", and the caller asks the
# per-entry test one entry at a time (tests/ignition/test_plain_lists.py checks both against it).


def _plain_paths(paths: list[Any]) -> bool:
    """Every path is a str, absolute and fully simplified (`_plain_node`'s path test), none holding `_SEP`."""
    if set(map(type, paths)) != _STR:
        return False
    joined = _SEP.join(paths)
    if joined.count(_SEP) != len(paths) - 1:
        return False  # a path holds the separator: the pieces would not be the paths
    if joined[:1] != "/" or joined.count(_SEP + "/") != len(paths) - 1:
        return False  # one does not start with "/" (an empty path among them)
    if "//" in joined or "/." in joined or "/" + _SEP in joined or joined[-1] == "/":
        # something to look at more closely (a hidden directory's "/." is common): the exact pattern, once
        return _CLEAN_ABSOLUTE_LINES.fullmatch(joined) is not None
    return True


def _plain_owners(entries: list[dict[str, Any]], key: str) -> bool:
    """`_plain_owner` for the entries that set `key` (`user` or `group`): few do, so one call each is fine."""
    return all(_plain_owner(e[key]) for e in entries if key in e)


def _plain_nodes(entries: list[dict[str, Any]], keys: set[str]) -> bool:
    """`_plain_node` for every entry of a list of dicts (True only when each passes it); `keys`: all their keys."""
    if not _plain_paths(list(map(dict.get, entries, repeat("path")))):
        return False
    if "mode" in keys:
        modes = list(map(dict.get, entries, repeat("mode"), repeat(0)))
        if set(map(type, modes)) != _INT or not _MODES.issuperset(modes):
            return False  # (bool is not int here: a `true` mode fails the type test)
    if "overwrite" in keys and set(map(type, map(dict.get, entries, repeat("overwrite"), repeat(False)))) != _BOOL:
        return False
    return ("user" not in keys or _plain_owners(entries, "user")) and (
        "group" not in keys or _plain_owners(entries, "group"))


def _plain_sources(sources: list[Any]) -> bool:
    """Every source is "" or matches PLAIN_DATA_URL (`plain_file`'s test of a str source)."""
    joined = _SEP.join(sources)
    n = len(sources) - 1
    if joined.count(_SEP) != n:
        return False  # a source holds the separator: the pieces would not be the sources
    # `data:,` then text: characters of PLAIN_DATA_URL's text part (_TEXT_CHARS; the UTF-8 bytes of anything
    # else outlive the translate) and escapes of 2 hex digits (which cannot cross a separator), so each piece
    # matches PLAIN_DATA_URL's `data:,` + text branch
    if (joined.startswith("data:,") and joined.count(_SEP + "data:,") == n
            and not joined.encode().translate(None, _TEXT_CHARS).strip(b"%") and _BAD_ESCAPE.search(joined) is None):
        return True
    return _PLAIN_SOURCE_LINES.fullmatch(joined) is not None


# Up to this many entries the per-entry test is quicker than the list's ~30 passes (1 file: ~1.4 vs ~5 us)
_FEW = 4


def plain_files(entries: list[Any]) -> bool:
    """True only when `plain_file` holds for every entry (all dicts); False: test them one by one."""
    if len(entries) <= _FEW:
        return all([type(e) is dict and plain_file(e) for e in entries])
    return files_together(entries)


def files_together(entries: list[Any]) -> bool:
    """`plain_files` by C-level passes over the whole list, whatever its length.

    Files without contents, or contents without a source, are left to the per-entry test (the overwrite
    rule then depends on the entry); so are sources or paths holding a newline."""
    if not entries:
        return True
    if set(map(type, entries)) != _DICT:
        return False
    keys = set().union(*entries)
    if not _FILE_KEYS.issuperset(keys) or not _plain_nodes(entries, keys):
        return False
    contents: list[Any] = list(map(dict.get, entries, repeat("contents")))
    if set(map(type, contents)) != _DICT:
        return False  # (an absent or null `contents` is None here)
    keys = set().union(*contents)
    if not _CONTENTS_KEYS.issuperset(keys):
        return False
    sources: list[Any] = list(map(dict.get, contents, repeat("source")))
    if set(map(type, sources)) != _STR:
        return False
    if not _plain_sources(sources):
        return False
    if "compression" not in keys:
        return True
    compressions = list(map(dict.get, contents, repeat("compression"), repeat("")))
    return set(map(type, compressions)) == _STR and _COMPRESSIONS.issuperset(compressions)


def plain_directories(entries: list[Any]) -> bool:
    """True only when `plain_directory` holds for every entry (all dicts); False: test them one by one."""
    if len(entries) <= _FEW:
        return all([type(e) is dict and plain_directory(e) for e in entries])
    return directories_together(entries)


def directories_together(entries: list[Any]) -> bool:
    """`plain_directories` by C-level passes over the whole list, whatever its length."""
    if not entries:
        return True
    if set(map(type, entries)) != _DICT:
        return False
    keys = set().union(*entries)
    return _DIRECTORY_KEYS.issuperset(keys) and _plain_nodes(entries, keys)
