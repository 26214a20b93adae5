"""The per-version schema other modules walk: field sets, what each version added, keys of lists."""

from __future__ import annotations

import pytest

from ignition import schema, schema_nodes
from ignition.versions import ACCEPTED_VERSIONS, SUPPORTED_VERSIONS


@pytest.mark.parametrize(
    ("path", "version"),
    [
        ("storage.files[].contents.source", "3.0.0"),
        ("ignition.proxy.noProxy", "3.1.0"),
        ("storage.files[].contents.httpHeaders[].value", "3.1.0"),
        ("storage.filesystems[].mountOptions", "3.1.0"),
        ("storage.luks[].clevis.tang[].thumbprint", "3.2.0"),
        ("storage.disks[].partitions[].resize", "3.2.0"),
        ("passwd.users[].shouldExist", "3.2.0"),
        ("kernelArguments.shouldNotExist", "3.3.0"),
        ("storage.luks[].clevis.tang[].advertisement", "3.4.0"),
        ("storage.luks[].openOptions", "3.4.0"),
        ("storage.luks[].cex.enabled", "3.5.0"),
    ],
    ids=lambda v: str(v),
)
def test_introduced(path: str, version: str) -> None:
    first = next(v for v in ACCEPTED_VERSIONS if path in schema.fields(v))
    assert first == version


def test_field_counts_grow_and_3_0_has_117() -> None:
    counts = [len(schema.fields(v)) for v in SUPPORTED_VERSIONS]
    assert counts[0] == 117
    assert counts == sorted(counts)
    assert schema.fields("3.6.0") == schema.fields("3.5.0")


@pytest.mark.parametrize(
    ("path", "key", "keyspace"),
    [
        ("storage.files", "path", schema_nodes.KEYSPACE_NODES),
        ("storage.links", "path", schema_nodes.KEYSPACE_NODES),
        ("storage.disks[].partitions", schema_nodes.KEY_PARTITION, None),
        ("storage.files[].append", None, None),
        ("storage.filesystems[].options", None, None),
        ("passwd.users[].sshAuthorizedKeys", schema_nodes.KEY_VALUE, None),
        ("kernelArguments.shouldExist", schema_nodes.KEY_VALUE, schema_nodes.KEYSPACE_KARGS),
        ("storage.files[].contents.httpHeaders", "name", None),
    ],
    ids=lambda v: str(v),
)
def test_list_keys(path: str, key: str | None, keyspace: str | None) -> None:
    node = schema.node("3.6.0", path)
    assert node is not None and node.kind == "list"
    assert (node.key, node.keyspace) == (key, keyspace)


def test_pointer_fields_follow_go_types() -> None:
    link30 = schema.node("3.2.0", "storage.links[]")
    link33 = schema.node("3.3.0", "storage.links[]")
    assert link30 is not None and link33 is not None
    assert not link30.fields["target"].pointer and link33.fields["target"].pointer
    ca30 = schema.node("3.0.0", "ignition.security.tls.certificateAuthorities[]")
    assert ca30 is not None and not ca30.fields["source"].pointer


def test_node_accepts_tuple_paths_and_matches_keys_like_go() -> None:
    file_node = schema.node("3.6.0", ("storage", "files", 3))
    assert file_node is not None and file_node.match("PATH") == "path" and file_node.match("nope") is None
    assert schema.node("3.0.0", "storage.luks") is None
    assert all(schema.root(v).kind == "object" for v in ACCEPTED_VERSIONS)
