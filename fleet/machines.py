"""Per-machine configuration: which machine a request is, and what the pool record keeps of each machine.

A machine document (`kind: Machine`, renderer/machines.py) selects machines by the facts a booting machine
presents, as matchbox groups do (`poseidon/matchbox` `matchbox/storage/storagepb/group.go`: `Matches`,
`Normalize`, `ByReqs`):

- The selector keys are `mac`, `uuid`, `serial` and `hostname`. Every key a selector gives must equal the
  request's fact (an empty selector matches every machine of the pool: a default).
- The most specific selector wins: the one with the most keys. matchbox breaks a tie by the order of
  the selectors' `key=value` text (storagepb group_test.go TestGroupSort, server.go SelectGroup); here two
  matching selectors with the same number of keys are an error naming both (`MachineTie`), so adding a
  document can never silently move a machine to another one.
- Values are normalised before they are compared: a MAC as Go's `net.ParseMAC` reads it and
  `HardwareAddr.String` prints it (6, 8 or 20 octets, lowercase, colon-separated; written `52:54:00:ab:cd:ef`,
  `52-54-00-AB-CD-EF` or `5254.00ab.cdef`), a UUID in its
  lowercase hyphenated form, a hostname in lowercase; a serial is compared as written.

On day 2 a node is known by its name alone (proven by its node token, server/auth.py): the machine of node
`N` is the document whose selector has `hostname: N`. The facts of a booting machine are identifiers, never
credentials: a per-machine answer is served only where the pool's own token and address rules allow, and once
the node has registered only to its own token (server/machine_choice.py).
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterable, Mapping
from itertools import combinations

from fleet.errors import FleetError
from fleet.machine_entry import MachineEntry
from fleet.names import valid_name
from fleet.rendered import pool_config_of

SELECTOR_KEYS = ("mac", "uuid", "serial", "hostname")
MAX_SERIAL = 128


class FactError(FleetError, ValueError):
    """A selector value or a request fact that cannot be read; `key` names it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


class MachineTie(FleetError):
    """Two machine documents match equally specifically: neither is chosen."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(f"machine documents {first} and {second} match equally specifically")
        self.names = (first, second)


_HEX = frozenset("0123456789abcdefABCDEF")
MAC_SIZES = (6, 8, 20)  # EUI-48, EUI-64, IP over InfiniBand: what Go's net.ParseMAC accepts
_NOT_A_MAC = "not a MAC address (6, 8 or 20 two-digit hex octets separated by ':' or '-', or 4-digit groups by '.')"


def _mac(value: str) -> str:
    """The address as Go's net.ParseMAC reads it (6, 8 or 20 octets; colon, hyphen or dotted form, one separator
    throughout), printed as HardwareAddr.String prints it: lowercase octets joined by colons. Checked character
    by character, the length first, so hostile text costs nothing."""
    size = len(value)
    if size < 14 or size > 3 * max(MAC_SIZES) - 1:
        raise FactError("mac", _NOT_A_MAC)
    if value[2] in ":-":
        width, sep = 3, value[2]       # "52:54:..." : two digits, then the separator
    elif value[4] == ".":
        width, sep = 5, "."            # "5254.00ab...": four digits, then a dot
    else:
        raise FactError("mac", _NOT_A_MAC)
    digits = width - 1
    if (size + 1) % width or (size + 1) // width * digits // 2 not in MAC_SIZES:
        raise FactError("mac", _NOT_A_MAC)
    groups = [value[i:i + digits] for i in range(0, size, width)]
    if any(value[i] != sep for i in range(digits, size, width)) or not all(set(g) <= _HEX for g in groups):
        raise FactError("mac", _NOT_A_MAC)
    text = "".join(groups).lower()
    return ":".join(text[i:i + 2] for i in range(0, len(text), 2))


_UUID_HYPHENS = (8, 13, 18, 23)  # 8-4-4-4-12


def _uuid(value: str) -> str:
    """The canonical lowercase 8-4-4-4-12 form of a UUID written that way in any case, or as its 32 hex digits
    (RFC 4122 section 3); not uuid.UUID's laxer reading (braces, `urn:uuid:`, hyphens anywhere, a `+`)."""
    if len(value) == 36 and all(value[i] == "-" for i in _UUID_HYPHENS):
        digits = value.replace("-", "")
    elif len(value) == 32:
        digits = value
    else:
        raise FactError("uuid", "not a UUID (8-4-4-4-12 hex digits)")
    if len(digits) != 32 or not set(digits) <= _HEX:
        raise FactError("uuid", "not a UUID (8-4-4-4-12 hex digits)")
    return str(uuidlib.UUID(hex=digits))


def _hostname(value: str) -> str:
    lowered = value.lower() if value.isascii() else ""  # (str.lower maps some non-ASCII letters to ASCII ones)
    if not valid_name(lowered):
        raise FactError("hostname", "not a hostname (a DNS name of at most 236 characters)")
    return lowered


def _serial(value: str) -> str:
    if not value or len(value) > MAX_SERIAL or not value.isprintable():
        raise FactError("serial", f"not a serial number (1 to {MAX_SERIAL} printable characters)")
    return value


_NORMALISE = {"mac": _mac, "uuid": _uuid, "serial": _serial, "hostname": _hostname}


def normalise(key: str, value: object) -> str:
    """The value of selector key `key` in the form it is compared in; FactError names the key."""
    if key not in _NORMALISE:
        raise FactError(key, f"not a selector key (one of {', '.join(SELECTOR_KEYS)})")
    if not isinstance(value, str):
        raise FactError(key, "must be a string")
    return _NORMALISE[key](value)


def query_facts(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """A booting machine's facts from a parsed query string's (key, value) pairs: the selector keys, each at most
    once, normalised (other keys are ignored); FactError names the key. An empty value is a fact not given, as
    matchbox reads one: its own iPXE URL sends `hostname=${hostname}&serial=${serial}`, empty on many machines."""
    facts: dict[str, str] = {}
    given: set[str] = set()
    for key, value in pairs:
        if key in _NORMALISE:
            if key in given:
                raise FactError(key, "given more than once")
            given.add(key)
            if value:
                facts[key] = _NORMALISE[key](value)
    return facts


class MachineIndex:
    """The machine entries of one pool, indexed by selector, so choosing one costs the subsets of a request's
    facts (at most 16 lookups), not a pass over every machine."""

    def __init__(self, entries: Iterable[MachineEntry]) -> None:
        self._by_selector: dict[frozenset[tuple[str, str]], list[MachineEntry]] = {}
        for entry in entries:
            self._by_selector.setdefault(frozenset(entry.selector.items()), []).append(entry)
        self._sizes = sorted({len(k) for k in self._by_selector}, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._by_selector)

    def entries(self) -> Iterable[list[MachineEntry]]:
        """The entries, grouped by selector."""
        return self._by_selector.values()

    def select(self, facts: Mapping[str, str]) -> MachineEntry | None:
        """The most specific entry matching `facts` (normalised), None when none does; MachineTie on a tie."""
        if not self._by_selector:
            return None
        items = sorted(facts.items())
        for size in self._sizes:
            if size > len(items):
                continue
            found: list[MachineEntry] = []
            for subset in combinations(items, size):
                found.extend(self._by_selector.get(frozenset(subset), ()))
            if len(found) > 1:
                first, second = sorted(e.name for e in found)[:2]
                raise MachineTie(first, second)
            if found:
                return found[0]
        return None


def config_parts(name: str) -> dict[str, str]:
    """What a machine's config name is made of, `{"poolConfig", "overlay"}` (empty for a pool's config): what
    `GET /nodes`, `mco nodes` and the fleet page show beside a node's current config."""
    base = pool_config_of(name)
    return {} if base == name else {"poolConfig": base, "overlay": name[len(base) + 1:]}


def machine_of_node(entries: Iterable[MachineEntry], node: str) -> MachineEntry | None:
    """The entry of node `node` on day 2: the one whose `hostname` selector is the node's name."""
    return next((e for e in entries if e.node == node), None)
