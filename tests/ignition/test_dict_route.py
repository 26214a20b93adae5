"""`validate_dict` on the parsed JSON says what `check` says of the text (entries without positions), for the
documents Go reads unlike a walk of their JSON: case-variant `ignition`/`version` keys (Go takes the last one),
null structs, odd-cased duplicate sections (tests/ignition/mutate.fuzz_shapes)."""

from __future__ import annotations

import json

import pytest

from ignition import check, validate_dict
from ignition.decode import pairs_hook
from tests.ignition.mutate import fuzz_shapes

CASES = [
    ("version-variant-wins", '{"ignition": {"version": "3.1.0", "Version": "3.5.0"}, "storage": {"luks": [{"name": "a", "device": "/dev/a"}]}}'),
    ("version-variant-loses", '{"ignition": {"Version": "3.5.0", "version": "3.1.0"}, "storage": {"luks": [{"name": "a", "device": "/dev/a"}]}}'),
    ("ignition-variant", '{"ignition": {"version": "3.1.0"}, "IGNITION": {"version": "3.3.0"}, "kernelArguments": {"shouldExist": ["a"]}}'),
    ("ignition-repeated", '{"ignition": {"version": "3.1.0"}, "ignition": {"version": "3.4.0"}, "storage": {"luks": [{"name": "a"}]}}'),
    ("version-variant-wrong-type", '{"ignition": {"version": "3.1.0", "VERSION": 3}}'),
    # (not those with a number beyond float64: only the text shows it, a parsed dict holds inf)
    *[(c, raw) for c, raw in fuzz_shapes(40, seed=11) if "huge" not in raw],
]


def _entries(report: object) -> list[tuple[str, str, str, str]]:
    return sorted((e.severity, e.code, e.path_str(), e.message) for e in report.entries)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("case_id", "raw"), CASES, ids=[c for c, _ in CASES])
def test_validate_dict_says_what_check_says(case_id: str, raw: str) -> None:
    checked = check(raw)
    got = validate_dict(json.loads(raw, object_pairs_hook=pairs_hook))
    assert _entries(got) == _entries(checked.report)


def test_the_usual_keys_fold_to_no_other() -> None:
    # validate._folds_elsewhere answers False for an object holding only these keys without looking at them
    from ignition.validate import _USUAL_KEYS, _folds_elsewhere

    assert len({key.lower() for key in _USUAL_KEYS}) == len(_USUAL_KEYS)
    for name in ("ignition", "version"):
        assert not _folds_elsewhere(dict.fromkeys(_USUAL_KEYS), name)
        assert _folds_elsewhere({name: 1, name.upper(): 2}, name)
        assert _folds_elsewhere({name: 1, name.capitalize(): 2, "storage": {}}, name)
