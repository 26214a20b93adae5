"""registries.conf as the MCO writes it: the cases of MCO `pkg/controller/container-runtime-config/helpers_test.go`
TestUpdateRegistriesConfig and `openshift/runtime-utils` `pkg/registries/registries_test.go` TestMergedMirrorSets,
TestEditRegistriesConfig. Each case checks the MCO's expected structure (transcribed from the upstream test) on
the parsed output, and the bytes against a golden file (tests/renderer/golden/registries/, MCO_UPDATE_GOLDEN=1
to refresh)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from renderer.mirror_sets import merge, topo_sorted
from renderer.registries_generated import DEFAULT_REGISTRIES, Plan, pool_files
from renderer.registries_toml import read_registries_conf, write_registries_conf
from tests.golden import assert_golden
from tests.renderer.registries_cases import icsp, idms, itms

GOLDEN = Path(__file__).parent / "golden" / "registries"
SEARCH = ["registry.access.redhat.com", "docker.io"]
D, T = "digest-only", "tag-only"


def m(location: str, pull: str = D, insecure: bool = False) -> dict[str, Any]:
    return {"location": location, "pull-from-mirror": pull, **({"insecure": True} if insecure else {})}


def reg(scope: str, *mirrors: dict[str, Any], blocked: bool = False, insecure: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"prefix": scope} if scope.startswith("*.") else {"location": scope}
    if insecure:
        out["insecure"] = True
    if blocked:
        out["blocked"] = True
    if mirrors:
        out["mirror"] = list(mirrors)
    return out


ICSP_RULES = (("insecure.com/ns-i1", ["blocked.com/ns-b1", "other.com/ns-o1"]),
              ("blocked.com/ns-b/ns2-b", ["other.com/ns-o2", "insecure.com/ns-i2"]),
              ("other.com/ns-o3", ["insecure.com/ns-i2", "blocked.com/ns-b/ns3-b", "foo.insecure-example.com/bar"]))
WILDCARD_WANT = [
    reg("blocked.com/ns-b/ns2-b", m("other.com/ns-o2"), m("insecure.com/ns-i2", insecure=True), blocked=True),
    reg("insecure.com/ns-i1", m("blocked.com/ns-b1"), m("other.com/ns-o1"), insecure=True),
    reg("other.com/ns-o3", m("insecure.com/ns-i2", insecure=True), m("blocked.com/ns-b/ns3-b"),
        m("foo.insecure-example.com/bar", insecure=True)),
    reg("blocked.com", blocked=True),
    reg("*.blocked.insecure-example.com", blocked=True, insecure=True),
    reg("*.blocked-example.com", blocked=True),
    reg("insecure.com", insecure=True),
    reg("*.insecure-example.com", insecure=True),
    reg("*.insecure.blocked-example.com", blocked=True, insecure=True),
]
AB = ("registry-a.com", ["mirror-digest-1.registry-a.com", "mirror-digest-2.registry-a.com"])
BB = ("registry-b.com", ["mirror-digest-1.registry-b.com", "mirror-digest-2.registry-b.com"])
AT = ("registry-a.com", ["mirror-tag-1.registry-a.com", "mirror-tag-2.registry-a.com"])
BT = ("registry-b.com", ["mirror-tag-1.registry-b.com", "mirror-tag-2.registry-b.com"])

# (id, insecure, blocked, sets, MCO's expected registries)
CASES: list[tuple[str, Any, Any, list[Any], list[dict[str, Any]]]] = [
    ("unchanged", None, (), [], []),
    ("insecure+blocked", ["registry.access.redhat.com", "insecure.com", "common.com"],
     ["blocked.com", "common.com", "docker.io"], [],
     [reg("blocked.com", blocked=True), reg("common.com", blocked=True, insecure=True),
      reg("docker.io", blocked=True), reg("registry.access.redhat.com", insecure=True),
      reg("insecure.com", insecure=True)]),
    ("imageContentSourcePolicy", ["insecure.com", "*.insecure-example.com", "*.insecure.blocked-example.com"],
     ["blocked.com", "*.blocked.insecure-example.com", "*.blocked-example.com"], [icsp(*ICSP_RULES)], WILDCARD_WANT),
    ("insecure+blocked prefixes with wildcard entries",
     ["insecure.com", "*.insecure-example.com", "*.insecure.blocked-example.com"],
     ["blocked.com", "*.blocked.insecure-example.com", "*.blocked-example.com"], [idms(*ICSP_RULES)], WILDCARD_WANT),
    ("imageTagMirrorSet", None, (),
     [itms(("registry-a.com", ["mirror-tag-1.registry-a.com"]), ("registry-b.com", ["mirror-tag-1.registry-b.com"]))],
     [reg("registry-a.com", m("mirror-tag-1.registry-a.com", T)),
      reg("registry-b.com", m("mirror-tag-1.registry-b.com", T))]),
    ("imageDigestMirrorSet + imageTagMirrorSet", None, (), [idms(AB, BB), itms(AT, BT)],
     [reg("registry-a.com", *(m(x) for x in AB[1]), *(m(x, T) for x in AT[1])),
      reg("registry-b.com", *(m(x) for x in BB[1]), *(m(x, T) for x in BT[1]))]),
    ("imageDigestMirrorSet + imageTagMirrorSet + imageContentSourcePolicy merging", None, (),
     [idms(AB, BB), itms(AT, BT),
      icsp(("registry-a.com", [*AB[1], "mirror-icsp-1.registry-a.com"]),
           ("registry-b.com", [*BB[1], "mirror-icsp-1.registry-b.com"]),
           ("registry-c.com", ["mirror-icsp-1.registry-c.com", "mirror-icsp-2.registry-c.com"]))],
     [reg("registry-a.com", *(m(x) for x in AB[1]), m("mirror-icsp-1.registry-a.com"), *(m(x, T) for x in AT[1])),
      reg("registry-b.com", *(m(x) for x in BB[1]), m("mirror-icsp-1.registry-b.com"), *(m(x, T) for x in BT[1])),
      reg("registry-c.com", m("mirror-icsp-1.registry-c.com"), m("mirror-icsp-2.registry-c.com"))]),
    # not upstream: NeverContactSource blocks the source; a nested entry without mirrors inherits them
    ("never contact source and a nested scope", None, ["quay.io/team/app"],
     [idms(("quay.io/team", ["mirror.example.net/team"], "NeverContactSource"))],
     [reg("quay.io/team", m("mirror.example.net/team"), blocked=True),
      reg("quay.io/team/app", m("mirror.example.net/team/app"), blocked=True)]),
]


def _slug(name: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in name).split())


@pytest.mark.parametrize(("name", "insecure", "blocked", "sets", "want"), CASES, ids=[c[0] for c in CASES])
def test_update_registries_config(name: str, insecure: Any, blocked: Any, sets: list[Any],
                                  want: list[dict[str, Any]]) -> None:
    plan = Plan(None if insecure is None else tuple(insecure), tuple(blocked), (), (), None, None)
    files, dropped = pool_files(plan, sets, {})
    assert dropped == []
    if insecure is None and not blocked and not sets:
        assert files == []  # the MCO writes no registries.conf then
        data = write_registries_conf(read_registries_conf(DEFAULT_REGISTRIES.decode())[0])
    else:
        assert [path for path, _ in files] == ["/etc/containers/registries.conf"]
        data = files[0][1]
    parsed = tomllib.loads(data.decode())
    assert parsed["unqualified-search-registries"] == SEARCH
    got = [{k: v for k, v in r.items() if not (k == "prefix" and v == "")} for r in parsed.get("registry", [])]
    assert got == want
    golden = GOLDEN / f"{_slug(name)}.conf"
    assert_golden(golden, data)


MERGE = [  # runtime-utils TestMergedMirrorSets: (name, rule lists, {source: mirrors})
    ("Empty", [], {}),
    ("Irrelevant singletons", [[("a.example.com", []), ("b.example.com", [])]], {}),
    ("Separate mirror sets", [[("source.example.net", ["z1.example.net", "y2.example.net", "x3.example.net"])],
                              [("source.example.com", ["z1.example.com", "y2.example.com", "x3.example.com"])]],
     {"source.example.com": ["z1.example.com", "y2.example.com", "x3.example.com"],
      "source.example.net": ["z1.example.net", "y2.example.net", "x3.example.net"]}),
    ("Sets with a shared element - strict order",
     [[("source.example.net", ["z1.example.net", "y2.example.net"]),
       ("source.example.com", ["z1.example.com", "y2.example.com"])],
      [("source.example.net", ["y2.example.net", "x3.example.net"]),
       ("source.example.com", ["y2.example.com", "x3.example.com"])]],
     {"source.example.com": ["z1.example.com", "y2.example.com", "x3.example.com"],
      "source.example.net": ["z1.example.net", "y2.example.net", "x3.example.net"]}),
    ("Source included in mirrors",
     [[("source.example.com", ["z1.example.com", "source.example.com", "y2.example.com"]),
       ("source.example.com", ["source.example.com", "y2.example.com", "x3.example.com"])]],
     {"source.example.com": ["z1.example.com", "source.example.com", "y2.example.com", "x3.example.com"]}),
    ("Mirrors includes only source",
     [[("source.example.com", ["source.example.com"]),
       ("source.example.net", ["source.example.net", "source.example.net", "source.example.net"])]], {}),
    ("Example", [[("source.vendor.com", ["registry2.vendor.com"])],
                 [("source.vendor2.com", ["registry1.vendor2.com", "registry2.vendor2.com"])],
                 [("source.vendor.com", ["local-mirror.example.com"]),
                  ("source.vendor2.com", ["local-mirror2.example.com", "registry2.vendor2.com",
                                          "registry1.vendor2.com"])]],
     {"source.vendor.com": ["local-mirror.example.com", "registry2.vendor.com"],
      "source.vendor2.com": ["local-mirror2.example.com", "registry1.vendor2.com", "registry2.vendor2.com"]}),
]


@pytest.mark.parametrize(("name", "lists", "want"), MERGE, ids=[c[0] for c in MERGE])
def test_merged_mirror_sets(name: str, lists: list[Any], want: dict[str, list[str]]) -> None:
    merged = merge([icsp(*rules, name=f"icsp-{i}") for i, rules in enumerate(lists)])
    assert {item.source: list(item.mirrors) for item in merged} == want
    assert [item.source for item in merged] == sorted(want)


def test_topological_order_breaks_cycles_in_byte_order() -> None:
    # c first (no predecessor), then the loop a <-> b is broken at its first node in byte order
    assert topo_sorted([("b", "a"), ("a", "b"), ("c", "b")]) == ["c", "a", "b"]
    assert topo_sorted([("z", "y"), ("y", "x")]) == ["z", "y", "x"]


def test_template_fields_the_mco_keeps_and_drops() -> None:
    text = ('unqualified-search-registries = ["a.io"]\nshort-name-mode = "enforcing"\nfoo = 1\n'
            '[[registry]]\nprefix = "q.io/x"\nlocation = "q.io/x"\nbar = true\n[aliases]\n"my app" = "q.io/x/app"\n')
    conf, dropped = read_registries_conf(text)
    assert dropped == ["foo", "registry[0].bar"]
    assert write_registries_conf(conf).decode() == (
        'unqualified-search-registries = ["a.io"]\nshort-name-mode = "enforcing"\n'
        'additional-layer-store-auth-helper = ""\n\n[[registry]]\n'
        '  prefix = "q.io/x"\n  location = "q.io/x"\n\n[aliases]\n  "my app" = "q.io/x/app"\n')


def test_odd_scope_strings_are_escaped_as_the_mcos_encoder_escapes_them() -> None:
    # runtime-utils IsValidRegistriesConfScope lets any scope without `*` through, so a control character or a quote
    # in an insecure registry reaches registries.conf; BurntSushi/toml encode.go dblQuotedReplacer writes it
    plan = Plan(("reg\x1b.io", 'q"uote\\.io', "ünï.io"), (), (), (), None, None)
    data = pool_files(plan, [], {})[0][0][1]
    assert '  location = "reg\\u001b.io"\n  insecure = true\n' in data.decode()
    assert '  location = "q\\"uote\\\\.io"\n' in data.decode()
    assert '  location = "ünï.io"\n' in data.decode()
    assert [r["location"] for r in tomllib.loads(data.decode())["registry"]] == list(plan.insecure or ())
