"""Which machine document a request is: matchbox's selector rules (all keys must match, the most specific
wins), with ties an error naming both, and the normalised forms of MACs, UUIDs and hostnames."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from fleet.machine_entry import MachineEntry
from fleet.machines import FactError, MachineIndex, MachineTie, machine_of_node, normalise, query_facts
from fleet.rendered import PoolRecord, machine_config_name, pool_config_of, pool_of_name

POOL_CONFIG = "rendered-worker-" + "a" * 32
OVERLAY = "b" * 32


def entry(name: str, **selector: str) -> MachineEntry:
    return MachineEntry(name=name, selector=query_facts(selector.items()),
                        rendered=machine_config_name(POOL_CONFIG, OVERLAY), overlay={}, overlay_hash=OVERLAY)


# matchbox's own cases (poseidon/matchbox matchbox/storage/storagepb/group_test.go, server_test.go SelectGroup):
# a group matches when every selector it gives matches; the group with the most selectors wins; an empty
# selector is the default.
DOCS = [
    entry("default"),
    entry("by-mac", mac="52:54:00:89:d8:10"),
    entry("by-uuid", uuid="a1b2c3d4-0000-4000-8000-000000000001"),
    entry("by-mac-and-host", mac="52:54:00:89:d8:10", hostname="node1"),
    entry("by-serial", serial="SN-0042"),
]

SELECT_CASES: list[tuple[str, Mapping[str, str], str | None]] = [
    ("no facts: the default", {}, "default"),
    ("mac alone", {"mac": "52:54:00:89:d8:10"}, "by-mac"),
    ("mac written with hyphens and capitals (normalised)", {"mac": "52-54-00-89-D8-10"}, "by-mac"),
    ("mac in dotted form", {"mac": "5254.0089.d810"}, "by-mac"),
    ("mac and hostname: the more specific", {"mac": "52:54:00:89:d8:10", "hostname": "node1"}, "by-mac-and-host"),
    ("hostname case does not matter", {"mac": "52:54:00:89:d8:10", "hostname": "NODE1"}, "by-mac-and-host"),
    ("hostname alone: no document needs only it", {"hostname": "node1"}, "default"),
    ("unknown mac: the default", {"mac": "52:54:00:00:00:01"}, "default"),
    ("uuid in capitals", {"uuid": "A1B2C3D4-0000-4000-8000-000000000001"}, "by-uuid"),
    ("uuid without hyphens", {"uuid": "a1b2c3d4000040008000000000000001"}, "by-uuid"),
    ("serial is compared as written", {"serial": "SN-0042"}, "by-serial"),
    ("serial in another case is another serial", {"serial": "sn-0042"}, "default"),
]


@pytest.mark.parametrize(("facts", "expected"), [(f, e) for _, f, e in SELECT_CASES],
                         ids=[c[0] for c in SELECT_CASES])
def test_most_specific_match_wins(facts: Mapping[str, str], expected: str | None) -> None:
    chosen = MachineIndex(DOCS).select(query_facts(facts.items()))
    assert (chosen.name if chosen else None) == expected


def test_no_default_no_match() -> None:
    assert MachineIndex(DOCS[1:]).select(query_facts({"mac": "52:54:00:00:00:01"}.items())) is None


TIE_CASES = [
    ("mac and uuid documents, both facts given", [entry("m", mac="52:54:00:89:d8:10"),
                                                  entry("u", uuid="a1b2c3d4-0000-4000-8000-000000000001")],
     {"mac": "52:54:00:89:d8:10", "uuid": "a1b2c3d4-0000-4000-8000-000000000001"}, ("m", "u")),
    ("two empty selectors", [entry("zz-default"), entry("a-default")], {}, ("a-default", "zz-default")),
    ("same selector written two ways", [entry("one", mac="52:54:00:89:d8:10"), entry("two", mac="52-54-00-89-D8-10")],
     {"mac": "52:54:00:89:d8:10"}, ("one", "two")),
]


@pytest.mark.parametrize(("docs", "facts", "names"), [c[1:] for c in TIE_CASES], ids=[c[0] for c in TIE_CASES])
def test_a_tie_is_an_error_naming_both(docs: list[MachineEntry], facts: Mapping[str, str],
                                       names: tuple[str, str]) -> None:
    with pytest.raises(MachineTie) as caught:
        MachineIndex(docs).select(query_facts(facts.items()))
    assert caught.value.names == names
    assert names[0] in str(caught.value) and names[1] in str(caught.value)


def test_a_more_specific_match_breaks_a_lower_tie() -> None:
    docs = [entry("m", mac="52:54:00:89:d8:10"), entry("u", uuid="a1b2c3d4-0000-4000-8000-000000000001"),
            entry("both", mac="52:54:00:89:d8:10", uuid="a1b2c3d4-0000-4000-8000-000000000001")]
    facts = query_facts({"mac": "52:54:00:89:d8:10", "uuid": "a1b2c3d4-0000-4000-8000-000000000001"}.items())
    chosen = MachineIndex(docs).select(facts)
    assert chosen is not None and chosen.name == "both"


BAD_FACTS = [
    ("mac", "52:54:00:89:d8"), ("mac", "52:54:00:89:d8:1g"), ("mac", "52:54-00:89:d8:10"), ("mac", "5254.0089.d8100"),
    ("mac", ""), ("mac", "+2:54:00:89:d8:10"), ("uuid", "not-a-uuid"),
    ("uuid", "x" * 4000), ("hostname", "Bad_Host"), ("hostname", "a" * 300), ("serial", ""), ("serial", "a\nb"),
    ("hostname", "node-\u212a"),  # KELVIN SIGN, which str.lower() turns into an ASCII 'k'
    ("hostname", "\u0130stanbul"),  # LATIN CAPITAL I WITH DOT ABOVE
    ("rack", "r1"),
]


@pytest.mark.parametrize(("key", "value"), BAD_FACTS, ids=[f"{k}={v[:20]!r}" for k, v in BAD_FACTS])
def test_unreadable_values_name_their_key(key: str, value: str) -> None:
    with pytest.raises(FactError) as caught:
        normalise(key, value)
    assert caught.value.key == key


# Go's net.ParseMAC, which matchbox normalises `mac` with (matchbox/storage/storagepb/group.go Normalize,
# matchbox/http/parse.go labelsFromRequest): EUI-48, EUI-64 and 20-octet IP-over-InfiniBand addresses, in the
# colon, hyphen or dotted form, printed lowercase with colons (HardwareAddr.String). The expected values are
# what go1.19 `net.ParseMAC(s)` returns for each input (cases from Go's net/mac_test.go parseMACTests, and
# matchbox's TestNormalize / TestLabelsFromRequest); None: ParseMAC returns an error.
PARSE_MAC_CASES: list[tuple[str, str | None]] = [
    ("52:54:00:89:d8:10", "52:54:00:89:d8:10"),
    ("52-54-00-89-D8-10", "52:54:00:89:d8:10"),
    ("52:DA:00:89:d8:10", "52:da:00:89:d8:10"),
    ("5254.0089.d810", "52:54:00:89:d8:10"),
    ("02:00:5e:10:00:00:00:01", "02:00:5e:10:00:00:00:01"),
    ("02-00-5E-10-00-00-00-01", "02:00:5e:10:00:00:00:01"),
    ("0200.5e10.0000.0001", "02:00:5e:10:00:00:00:01"),
    ("00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01",
     "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01"),
    ("00-00-00-00-fe-80-00-00-00-00-00-00-02-00-5e-10-00-00-00-01",
     "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01"),
    ("0000.0000.fe80.0000.0000.0000.0200.5e10.0000.0001",
     "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01"),
    ("0200.5e10.0000", "02:00:5e:10:00:00"),
    ("52:54:00:89:d8", None), ("52:54:00:89:d8:1g", None), ("52:54-00:89:d8:10", None), ("5254.0089.d8100", None),
    ("", None), ("+2:54:00:89:d8:10", None), ("x:x:x:x:x:x", None), ("52:54:00:89:d8:10:aa", None),
    ("52:54:00:89:d8:10:aa:bb:cc", None), ("5254:0089:d810", None), ("52.54.00.89.d8.10", None),
    ("5254-0089-d810", None), ("52:54:00:89:d8:10 ", None), (" 52:54:00:89:d8:10", None), ("52:54:00:89:d8:1", None),
    ("052:54:00:89:d8:10", None), ("0200.5e10.0000.0001.0002", None), ("52545-0089-d810", None),
    ("52:54:00:89:d8:10:00:00:00:00:00:00:00:00:00:00:00:00:00", None),
    ("\uff15\uff12:54:00:89:d8:10", None), ("52:54:00:89:d8:1\uff10", None), ("52:54:00:89:d8:10" * 1000, None),
]


def test_an_infiniband_mac_selects_its_machine() -> None:
    ib = "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01"
    docs = [entry("default"), entry("ib-node", mac=ib)]
    chosen = MachineIndex(docs).select(query_facts([("mac", "0000.0000.FE80.0000.0000.0000.0200.5E10.0000.0001")]))
    assert chosen is not None and chosen.name == "ib-node"


# A UUID is compared in its canonical text form (RFC 4122 section 3: 8-4-4-4-12 hex digits, case-insensitive
# on input), or as its 32 hex digits. Python's uuid.UUID is laxer than that (braces, `urn:uuid:`, hyphens
# anywhere, a `+` read as a digit), so text that is not a UUID must not be read as one, least of all as another.
UUID_CASES: list[tuple[str, str | None]] = [
    ("a1b2c3d4-0000-4000-8000-000000000001", "a1b2c3d4-0000-4000-8000-000000000001"),
    ("A1B2C3D4-0000-4000-8000-00000000000F", "a1b2c3d4-0000-4000-8000-00000000000f"),
    ("a1b2c3d4000040008000000000000001", "a1b2c3d4-0000-4000-8000-000000000001"),
    ("{a1b2c3d4-0000-4000-8000-000000000001}", None),
    ("urn:uuid:a1b2c3d4-0000-4000-8000-000000000001", None),
    ("a-1-b-2c3d4000040008000000000000001", None),
    ("+1b2c3d4000040008000000000000001", None),
    ("a1b2c3d4-0000-4000-8000_000000000001", None),
    ("a1b2c3d4-0000-4000-8000-00000000000g", None),
    ("a1b2c3d40-000-4000-8000-000000000001", None),
    ("a1b2c3d4-0000-4000-8000-000000000001 ", None),
    ("\uff41" + "1b2c3d4-0000-4000-8000-000000000001", None),
]


READ_CASES = [("mac", *c) for c in PARSE_MAC_CASES] + [("uuid", *c) for c in UUID_CASES]


@pytest.mark.parametrize(("key", "text", "expected"), READ_CASES,
                         ids=[f"{k}={t[:40] or 'empty'}" for k, t, _ in READ_CASES])
def test_a_fact_is_read_as_upstream_reads_it(key: str, text: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(FactError) as caught:
            normalise(key, text)
        assert caught.value.key == key
    else:
        assert normalise(key, text) == expected
        assert query_facts([(key, text)]) == {key: expected}


def test_day_two_identity_is_the_hostname_selector() -> None:
    docs = [entry("a", mac="52:54:00:89:d8:10", hostname="node-a"), entry("b", hostname="node-b"),
            entry("boot-only", mac="52:54:00:89:d8:11")]
    assert machine_of_node(docs, "node-a") is docs[0]
    assert machine_of_node(docs, "node-b") is docs[1]
    assert machine_of_node(docs, "node-c") is None
    record = PoolRecord(name="worker", current=POOL_CONFIG, machines=tuple(docs))
    assert record.target_for("node-a") == docs[0].rendered
    assert record.target_for("node-c") == POOL_CONFIG


NAME_CASES = [
    (POOL_CONFIG, POOL_CONFIG, "worker"),
    (machine_config_name(POOL_CONFIG, OVERLAY), POOL_CONFIG, "worker"),
    ("rendered-my-pool-" + "c" * 32 + "-" + "d" * 32, "rendered-my-pool-" + "c" * 32, "my-pool"),
    ("rendered-infra-3d8c", "rendered-infra-3d8c", "infra"),
    ("something-else", "something-else", ""),
]


@pytest.mark.parametrize(("name", "base", "pool"), NAME_CASES, ids=[c[0][:30] for c in NAME_CASES])
def test_machine_config_names(name: str, base: str, pool: str) -> None:
    assert pool_config_of(name) == base
    assert pool_of_name(name) == pool


def test_pool_record_round_trip_keeps_machines() -> None:
    record = PoolRecord(name="worker", current=POOL_CONFIG, machines=(entry("a", hostname="node-a"),))
    assert PoolRecord.from_dict(record.to_dict()) == record
    assert "machines" not in PoolRecord(name="worker").to_dict()
