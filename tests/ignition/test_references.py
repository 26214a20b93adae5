"""Referenced configs (`ignition.config.merge[]` / `replace`), rendered as Ignition's fetch stage renders them:
against the real Ignition's fetch stage, and each error naming the reference."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ignition.dataurl import encode_data_url, gzip_contents
from ignition.references import MemoryFetcher, ReferencedConfigError, render_references
from tests.ignition.configs import cfg
from tests.ignition.real_ignition import fetch_stage, without_empties


def _ref(config: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"source": encode_data_url(json.dumps(config).encode()), **extra}


def _with_refs(
    config: dict[str, Any], merge_refs: list[Any] | None = None, replace: Any = None
) -> dict[str, Any]:
    out = copy.deepcopy(config)
    refs = out["ignition"].setdefault("config", {})
    if merge_refs is not None:
        refs["merge"] = merge_refs
    if replace is not None:
        refs["replace"] = replace
    return out


GRANDCHILD = cfg("3.3.0", storage={"files": [{"path": "/g", "contents": {"source": "data:,g"}}]})
CHILD_WITH_REF = _with_refs(
    cfg("3.3.0", storage={"files": [{"path": "/a", "mode": 384}]}), [_ref(GRANDCHILD)]
)
SECOND = cfg(
    "3.3.0", storage={"files": [{"path": "/a", "overwrite": True, "contents": {"source": "data:,2"}}]}
)
REF_PARENT = cfg("3.3.0", storage={"files": [{"path": "/a", "mode": 420}, {"path": "/p"}]})

RENDERS = [
    ("merge-children-in-order-depth-first", _with_refs(REF_PARENT, [_ref(CHILD_WITH_REF), _ref(SECOND)])),
    ("replace-discards-the-config", _with_refs(REF_PARENT, replace=_ref(CHILD_WITH_REF))),
    (
        "replaced-config-merges-its-own-children",
        _with_refs(REF_PARENT, replace=_ref(_with_refs(SECOND, [_ref(GRANDCHILD)]))),
    ),
    (
        "gzip-and-sha512",
        _with_refs(
            REF_PARENT,
            [
                {
                    "source": encode_data_url(gzip_contents(json.dumps(SECOND).encode()), base64=True),
                    "compression": "gzip",
                    "verification": {
                        "hash": "sha512-" + hashlib.sha512(json.dumps(SECOND).encode()).hexdigest()
                    },
                }
            ],
        ),
    ),
    (
        "older-child-translated-up",
        _with_refs(REF_PARENT, [_ref(cfg("3.0.0", passwd={"users": [{"name": "core"}]}))]),
    ),
]


@pytest.mark.parametrize("config", [r[1] for r in RENDERS], ids=[r[0] for r in RENDERS])
def test_render_references_agrees_with_the_real_ignition(tmp_path: Path, config: dict[str, Any]) -> None:
    ours = render_references(config, version="3.3.0")
    ours["ignition"].pop("version")
    assert without_empties(ours) == fetch_stage(config, tmp_path)


def test_render_references_merges_in_order() -> None:
    result = render_references(_with_refs(REF_PARENT, [_ref(CHILD_WITH_REF), _ref(SECOND)]), version="3.3.0")
    assert result["storage"]["files"] == [
        {"path": "/a", "mode": 384, "overwrite": True, "contents": {"source": "data:,2"}},
        {"path": "/p"},
        {"path": "/g", "contents": {"source": "data:,g"}},
    ]
    assert result["ignition"]["version"] == "3.3.0"
    assert len(result["ignition"]["config"]["merge"]) == 3  # parent's two + the child's own reference


def test_remote_sources_go_through_the_fetcher_with_headers() -> None:
    fetcher = MemoryFetcher({"https://mcs/config/worker": json.dumps(SECOND).encode()})
    headers = [{"name": "Authorization", "value": "Bearer t"}, {"name": "X-Removed"}]
    config = _with_refs(cfg("3.3.0"), [{"source": "https://mcs/config/worker", "httpHeaders": headers}])
    result = render_references(config, fetch=fetcher)
    assert result["ignition"]["version"] == "3.6.0"  # Ignition's newest, by default
    assert result["storage"]["files"][0]["path"] == "/a"
    assert fetcher.requests == [("https://mcs/config/worker", (("Authorization", "Bearer t"),))]


def _looping_fetcher() -> MemoryFetcher:
    a = _with_refs(cfg("3.3.0"), [{"source": "https://x/b"}])
    b = _with_refs(cfg("3.3.0"), [{"source": "https://x/a"}])
    return MemoryFetcher({"https://x/a": json.dumps(a).encode(), "https://x/b": json.dumps(b).encode()})


RENDER_ERRORS = [
    (
        "remote-without-fetcher",
        _with_refs(cfg("3.3.0"), [{"source": "https://x/c.ign"}]),
        None,
        ("ignition", "config", "merge", 0, "source"),
    ),
    (
        "not-found",
        _with_refs(cfg("3.3.0"), [{"source": "https://x/none"}]),
        MemoryFetcher({}),
        ("ignition", "config", "merge", 0, "source"),
    ),
    (
        "hash-mismatch",
        _with_refs(cfg("3.3.0"), [_ref(SECOND, verification={"hash": "sha512-" + "0" * 128})]),
        None,
        ("ignition", "config", "merge", 0, "verification", "hash"),
    ),
    (
        "invalid-child",
        _with_refs(cfg("3.3.0"), [_ref(cfg("3.3.0", storage={"files": [{"path": "rel"}]}))]),
        None,
        ("ignition", "config", "merge", 0),
    ),
    (
        "bad-data-url",
        _with_refs(cfg("3.3.0"), replace={"source": "data:,a b"}),
        None,
        ("ignition", "config", "replace", "source"),
    ),
    (
        "not-gzip",
        _with_refs(cfg("3.3.0"), [_ref(SECOND, compression="gzip")]),
        None,
        ("ignition", "config", "merge", 0, "source"),
    ),
    ("reference-loop", _with_refs(cfg("3.3.0"), [{"source": "https://x/a"}]), _looping_fetcher(), None),
    (
        "valid-configs-merge-invalid",
        cfg(
            "3.0.0",
            storage={"filesystems": [{"path": "/foo", "format": "ext4", "device": "/dev/disk/by-label/OEM"}]},
            ignition={
                "version": "3.0.0",
                "config": {
                    "merge": [
                        _ref(
                            cfg(
                                "3.0.0",
                                storage={"filesystems": [{"format": "", "device": "/dev/disk/by-label/OEM"}]},
                            )
                        )
                    ]
                },
            },
        ),
        None,
        (),
    ),
]


@pytest.mark.parametrize(
    ("config", "fetcher", "path"), [r[1:] for r in RENDER_ERRORS], ids=[r[0] for r in RENDER_ERRORS]
)
def test_render_errors_name_the_reference(
    config: dict[str, Any], fetcher: Any, path: tuple[Any, ...] | None
) -> None:
    with pytest.raises(ReferencedConfigError) as info:
        render_references(config, fetch=fetcher)
    if path is not None:
        assert info.value.path == path


def test_invalid_render_result_carries_the_report() -> None:
    config = RENDER_ERRORS[-1][1]
    with pytest.raises(ReferencedConfigError) as info:
        render_references(config)
    assert any("format cannot be empty" in e.message for e in info.value.report.errors)
