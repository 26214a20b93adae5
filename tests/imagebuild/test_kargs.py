"""kargs.d TOML: MCO's argument splitting, and files that tomllib (bootc's format) reads back exactly."""

from __future__ import annotations

import tomllib

import pytest

from imagebuild.kargs import split_kargs, to_toml

SPLIT = {
    "one": ("nosmt", ["nosmt"]),
    "several": ("a=1  b=2\tc", ["a=1", "b=2", "c"]),
    "quoted-space": ('dyndbg="file x.c +p" quiet', ['dyndbg="file x.c +p"', "quiet"]),
    "empty": ("   ", []),
}


@pytest.mark.parametrize("entry,expected", SPLIT.values(), ids=SPLIT.keys())
def test_split(entry: str, expected: list[str]) -> None:
    assert split_kargs(entry) == expected


def test_unbalanced_quote_is_an_error() -> None:
    with pytest.raises(ValueError, match="unbalanced"):
        split_kargs('a="b')


TOML = {
    "plain": (["nosmt", "console=ttyS0,115200n8"], ()),
    "quotes-backslashes": (['dyndbg="x +p"', "path=C:\\x", "tab\there"], ()),
    "unicode": (["name=café"], ()),
    "arch": (["mitigations=off"], ("amd64", "x86_64", "arm64", "ppc64le", "s390x")),
}


@pytest.mark.parametrize("kargs,arches", TOML.values(), ids=TOML.keys())
def test_toml_round_trip(kargs: list[str], arches: tuple[str, ...]) -> None:
    data = tomllib.loads(to_toml(kargs, arches))
    assert data["kargs"] == kargs
    if arches:
        assert data["match-architectures"] == ["x86_64", "aarch64", "powerpc64", "s390x"]
    assert set(data) <= {"kargs", "match-architectures"}  # bootc denies unknown keys


def test_unknown_architecture() -> None:
    with pytest.raises(ValueError, match="unknown architecture"):
        to_toml(["a"], ("sparc",))
