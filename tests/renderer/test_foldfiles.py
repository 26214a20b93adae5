"""The C merge of a pool's later plain files (renderer/_foldfiles.c) does what its Python version does.

`merge_mc._merge_batched_files_py` stays the reference: on the same fold and the same batched files, both
leave the same result list (key order included), the same index, the same entries to finish and the same
entries merged into; and whole pools merged with either give the same spec and trust the same entries.
Under `make test` (MCO_REQUIRE_TOOLS=1) the module must have been built.
"""

from __future__ import annotations

import copy
import json
from types import ModuleType
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from renderer import merge_mc
from renderer.ignfold import Fold
from renderer.merge_mc import _merge_batched_files_py, _owned_plain_file_reset, merge_machine_configs_traced
from renderer.validate_mc import check_machine_config
from tests.renderer.test_merge_fast import _PLAIN_FILE, _USUAL_FILE
from tests.renderer.test_merge_mc import mc
from tests.tools import built_module


def _foldfiles() -> ModuleType:
    return built_module("renderer._foldfiles")


def test_the_merge_uses_the_built_loop() -> None:
    assert merge_mc._foldfiles is _foldfiles()


def _fold(base_files: list[dict[str, Any]]) -> Fold:
    """A fold whose result holds `base_files` (at least one: a pool batches only once the result has files)."""
    base_files = base_files or [{"path": "/etc/base", "contents": {"source": "data:,base"}}]
    base = {"ignition": {"version": "3.5.0"}, "storage": {"files": [_owned_plain_file_reset(f) for f in base_files]}}
    return Fold(base, "3.5.0", frozenset(map(id, base["storage"]["files"])))


def _run(loop: str, base_files: list[dict[str, Any]], batched: list[dict[str, Any]]) -> dict[str, Any]:
    """What one loop leaves behind, as data: the result list, the index, and which result entries are
    to be finished, were merged into or are trusted (by position). An empty `base_files` stands for the one
    file `_fold` gives the result."""
    fold = _fold(copy.deepcopy(base_files))
    batched = copy.deepcopy(batched)
    kept = copy.deepcopy(batched)
    if loop == "c":
        items, index = fold.keyed_result_list("storage", "files")
        start = len(items)
        unfinished: list[dict[str, Any]] = []
        _foldfiles().merge_files(batched, items, index, {}, unfinished, fold.merged_into, _owned_plain_file_reset)
        fold.adopted(items[start:])
    else:
        unfinished = _merge_batched_files_py(fold, batched)
    assert batched == kept  # the inputs are never written to
    items, index = fold.keyed_result_list("storage", "files")
    position = {id(e): i for i, e in enumerate(items)}
    return {"items": json.dumps(items), "index": {k: position[id(v)] for k, v in index.items()},
            "unfinished": [position[id(e)] for e in unfinished],
            "trusted": sorted(position[i] for i in fold.trusted())}


_OWNER = st.sampled_from([{}, {"name": "core"}, {"id": 0}])
# beyond plain files (nulls, empty owners): the Python loop is the reference whatever it is given
_ODD_FILE = st.fixed_dictionaries({"path": st.sampled_from(["/etc/p0", "/etc/p1", "/etc/p2"])}, optional={
    "mode": st.sampled_from([0o644, None]), "overwrite": st.sampled_from([True, False, None]),
    "contents": st.one_of(st.none(), st.fixed_dictionaries({}, optional={
        "source": st.sampled_from(["data:,a", "", None]), "compression": st.sampled_from(["", "gzip", None])})),
    "user": _OWNER, "group": _OWNER})
_FILES = st.lists(st.one_of(_USUAL_FILE, _USUAL_FILE, _PLAIN_FILE, _ODD_FILE), max_size=12)


@settings(max_examples=600, deadline=None)
@given(st.lists(_USUAL_FILE, max_size=3, unique_by=lambda f: f["path"]), _FILES)
def test_the_c_loop_equals_the_python_loop(base_files: list[dict[str, Any]], batched: list[dict[str, Any]]) -> None:
    _foldfiles()
    assert _run("c", base_files, batched) == _run("py", base_files, batched)


@pytest.mark.parametrize(("base", "batched"), [
    ([], [{"path": "/etc/a", "contents": {"source": "data:,1"}}, {"path": "/etc/a", "contents": {"source": "data:,2"}}]),
    ([{"path": "/etc/a", "contents": {"source": "data:,0"}}],
     [{"path": "/etc/a", "mode": 384, "contents": {"source": "data:,1", "compression": "gzip"}, "user": {"id": 0}},
      {"path": "/etc/a", "contents": {}}]),
    ([], [{"path": "/etc/b", "contents": {}}, {"path": "/etc/b", "overwrite": False, "contents": {"source": "data:,x"}},
          {"path": "/etc/b", "mode": 420}]),
    ([], [{"path": "/etc/c"}, {"path": "/etc/c", "contents": {"source": "data:,y"}}]),
    # new paths put in final form: an explicit null overwrite beside a source, a null source
    ([], [{"path": "/etc/d", "overwrite": None, "contents": {"source": "data:,z"}},
          {"path": "/etc/e", "overwrite": None, "contents": {"source": None}}]),
])
def test_paths_taken_again(base: list[dict[str, Any]], batched: list[dict[str, Any]]) -> None:
    _foldfiles()
    assert _run("c", base, batched) == _run("py", base, batched)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(lambda f: {"ignition": {"version": "3.5.0"}, "storage": {"files": f}},
                          st.lists(st.one_of(_USUAL_FILE, _USUAL_FILE, _PLAIN_FILE), max_size=5,
                                   unique_by=lambda f: f["path"])), min_size=2, max_size=6))
def test_whole_pools_merge_alike(configs: list[dict[str, Any]]) -> None:
    _foldfiles()
    mcs = [mc(f"{i:02d}-worker-x", config=c) for i, c in enumerate(configs)]
    plain: set[int] = set()
    for m in mcs:
        plain.update(check_machine_config(m, allowed_extensions=()).plain)
    with_c, trusted_c = merge_machine_configs_traced(mcs, plain=plain)
    with mock.patch.object(merge_mc, "_foldfiles", None):
        with_py, trusted_py = merge_machine_configs_traced(mcs, plain=plain)
    assert json.dumps(with_c.config) == json.dumps(with_py.config)

    def positions(spec: Any, trusted: frozenset[int]) -> list[int]:
        files = spec.config.get("storage", {}).get("files", [])
        return [i for i, f in enumerate(files) if id(f) in trusted]

    assert positions(with_c, trusted_c) == positions(with_py, trusted_py)


@pytest.mark.parametrize(("batched", "error"), [
    ([["/etc/a"]], TypeError),  # not a dict
    ([{"mode": 420}], KeyError),  # no path, as f["path"] raises
    ([{"path": ["/etc/a"]}], TypeError),  # a path that cannot be a key
])
def test_bad_entries_raise_as_python_does(batched: list[Any], error: type[Exception]) -> None:
    fold = _fold([])
    items, index = fold.keyed_result_list("storage", "files")
    with pytest.raises(error):
        _foldfiles().merge_files(batched, items, index, {}, [], fold.merged_into, _owned_plain_file_reset)
    with pytest.raises(error):
        _merge_batched_files_py(_fold([]), batched)


def test_wrong_arguments_are_refused() -> None:
    merge_files = _foldfiles().merge_files
    with pytest.raises(TypeError, match="merge_files"):
        merge_files([], [], {})  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="lists"):
        merge_files((), [], {}, {}, [], print, print)  # type: ignore[arg-type]
