"""Object names: apimachinery's IsDNS1123Subdomain / IsDNS1123Label, and every owner-less copy gone."""

from __future__ import annotations

import pytest

from fleet.names import DNS_SUBDOMAIN_MAX, MAX_NAME, is_dns_label, is_dns_subdomain, valid_name

# (id, name, subdomain?, label?)
NAMES = [
    ("pool", "worker", True, True),
    ("rendered", "rendered-worker-f561876c569f628ff7022a99110c1d84", True, True),
    ("digits", "0", True, True),
    ("dotted", "node-1.example.com", True, False),
    ("trailing-newline", "worker\n", False, False),
    ("leading-newline", "\nworker", False, False),
    ("inner-newline", "wor\nker", False, False),
    ("trailing-nul", "worker\x00", False, False),
    ("empty", "", False, False),
    ("upper", "Worker", False, False),
    ("underscore", "a_b", False, False),
    ("space", "a b", False, False),
    ("leading-hyphen", "-a", False, False),
    ("trailing-hyphen", "a-", False, False),
    ("leading-dot", ".a", False, False),
    ("trailing-dot", "a.", False, False),
    ("double-dot", "a..b", False, False),
    ("hyphen-before-dot", "a-.b", False, False),
    ("hyphen-after-dot", "a.-b", False, False),
    ("dotdot-path", "..", False, False),
    ("slash", "a/b", False, False),
    ("non-ascii", "wörker", False, False),
    ("fullwidth-digit", "a\uff11", False, False),
    ("label-63", "a" * 63, True, True),
    ("label-64", "a" * 64, True, False),
    ("subdomain-253", ".".join(["a" * 63] * 4)[:253].rstrip("."), True, False),
    ("subdomain-254", "a" * 254, False, False),
]


@pytest.mark.parametrize(("name", "subdomain", "label"), [c[1:] for c in NAMES], ids=[c[0] for c in NAMES])
def test_dns_names(name: str, subdomain: bool, label: bool) -> None:
    assert is_dns_subdomain(name) is subdomain
    assert is_dns_label(name) is label
    assert valid_name(name) is (subdomain and len(name) <= MAX_NAME)


@pytest.mark.parametrize("value", [None, 1, b"worker", ["worker"]], ids=["none", "int", "bytes", "list"])
def test_non_strings_are_not_names(value: object) -> None:
    assert not is_dns_subdomain(value) and not is_dns_label(value) and not valid_name(value)


def test_lengths() -> None:
    assert valid_name("a" * MAX_NAME) and not valid_name("a" * (MAX_NAME + 1))
    assert is_dns_subdomain("a" * DNS_SUBDOMAIN_MAX) and not is_dns_subdomain("a" * (DNS_SUBDOMAIN_MAX + 1))
    assert is_dns_subdomain("a" * 10, max_length=9) is False
