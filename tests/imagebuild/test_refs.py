"""Image references as the CLI takes them."""

from __future__ import annotations

import pytest

from imagebuild.errors import ImageRefError
from imagebuild.refs import LayoutRef, RegistryRef, parse_ref

REFS = {
    "layout-tag": ("oci:/tmp/x:v1", LayoutRef("/tmp/x", "v1")),
    "layout-relative": ("oci:out", LayoutRef("out", None)),
    "registry-port": ("docker://127.0.0.1:5000/tiny/os:v2", RegistryRef("127.0.0.1:5000", "tiny/os", "v2")),
    "no-transport": ("quay.io/org/os:latest", RegistryRef("quay.io", "org/os", "latest")),
    "docker-hub": ("fedora:40", RegistryRef("docker.io", "library/fedora", "40")),
    "localhost": ("localhost/img", RegistryRef("localhost", "img")),
    "digest": ("quay.io/o/os@sha256:" + "a" * 64, RegistryRef("quay.io", "o/os", None, "sha256:" + "a" * 64)),
}


@pytest.mark.parametrize("text,expected", REFS.values(), ids=REFS.keys())
def test_parse(text: str, expected: object) -> None:
    assert parse_ref(text) == expected


BAD = {
    "bad-digest": "quay.io/o/os@sha256:xyz",
    "upper-repo": "quay.io/Org/OS:1",
    "bad-tag": "quay.io/o/os:-x",
    "transport": "containers-storage:foo",
    "empty-layout": "oci:",
}


@pytest.mark.parametrize("text", BAD.values(), ids=BAD.keys())
def test_bad(text: str) -> None:
    with pytest.raises(ImageRefError):
        parse_ref(text)


def test_digested_pull_spec_drops_the_tag() -> None:
    ref = parse_ref("docker://quay.io/org/os:worker-abc")
    assert isinstance(ref, RegistryRef)
    assert ref.with_digest("sha256:" + "b" * 64) == "quay.io/org/os@sha256:" + "b" * 64
