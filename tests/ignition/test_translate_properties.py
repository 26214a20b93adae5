"""Translation between spec versions, as properties over generated configs (tests/ignition/configs.py).

Properties (hypothesis):
- a config that uses only features of spec A, translated up to any B and back down to A, is unchanged;
- a config translated down succeeds exactly when every feature it uses exists in the target, and then
  validates under the target (`validate_dict`; and under Debian's real `ignition-validate` for 3.0-3.3);
  when it is refused, the report names a path for every problem;
- what the real Ignition 2.14 holds after translating a 3.0-3.3 config up, ours holds too;
- whatever JSON comes in, translate, merge and reference rendering answer or raise an IgnitionError.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ignition.errors import TranslationError
from ignition.report import Report
from ignition.translate import translate
from ignition.validate import validate_dict
from ignition.versions import ACCEPTED_VERSIONS, SUPPORTED_VERSIONS, version_index
from tests.ignition.configs import Generated, generated
from tests.ignition.real_ignition import fetch_stage, without_empties
from tests.tools import real_tool

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(st.sampled_from(SUPPORTED_VERSIONS).flatmap(lambda v: st.tuples(st.just(v), generated(v))), st.data())
def test_up_then_down_returns_the_original(pair: tuple[str, Generated], data: st.DataObject) -> None:
    version, gen = pair
    assert not validate_dict(gen.config, version=version).is_fatal, validate_dict(
        gen.config, version=version
    ).format()
    newer = [v for v in ACCEPTED_VERSIONS if version_index(v) >= version_index(version)]
    target = data.draw(st.sampled_from(newer))
    up = translate(gen.config, target)
    assert up["ignition"]["version"] == target
    assert translate(up, version) == gen.config


def _check_refusal_or_valid(gen: Generated, target: str) -> dict[str, Any] | None:
    expressible = version_index(gen.needs) <= version_index(target)
    try:
        result = translate(gen.config, target)
    except TranslationError as exc:
        assert not expressible, exc.report.format()
        assert exc.report.errors and all(e.path for e in exc.report.errors)
        return None
    assert expressible, f"{gen.needs} features were translated to {target}"
    assert result["ignition"]["version"] == target
    report: Report = validate_dict(result, version=target)
    assert not report.is_fatal, report.format()
    return result


@PROPERTY_SETTINGS
@given(generated("3.6.0"), st.sampled_from(SUPPORTED_VERSIONS[:-1]))
def test_down_succeeds_exactly_when_expressible_and_validates(gen: Generated, target: str) -> None:
    _check_refusal_or_valid(gen, target)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["3.0.0", "3.1.0", "3.2.0", "3.3.0"]).flatmap(
        lambda v: st.tuples(st.just(v), generated(v))
    )
)
def test_downward_results_pass_the_real_ignition_validate(pair: tuple[str, Generated]) -> None:
    """Debian's ignition-validate 2.14 reads 3.0-3.3: it accepts what we translate down from 3.6 to those."""
    tool = real_tool("ignition-validate")
    target, gen = pair
    newest = translate(gen.config, "3.6.0")
    result = _check_refusal_or_valid(Generated(newest, gen.needs), target)
    assert result is not None
    run = subprocess.run([str(tool), "-"], input=json.dumps(result).encode(), capture_output=True, timeout=30)
    assert run.returncode == 0, (run.stdout + run.stderr).decode()


# ---------------------------------------------------------------------------------------------------
# Differential: the real Ignition 2.14 binary translates every config it reads (3.0-3.3) up to its newest
# spec before caching it. Ours, translated to 3.3.0, must hold the same fields (ignoring the version and Go's
# always-present empty structs). Remote config references are left out: the fetch stage would fetch them.


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.sampled_from(["3.0.0", "3.1.0", "3.2.0", "3.3.0"]).flatmap(generated))
def test_upward_translation_holds_what_the_real_ignition_holds(tmp_path: Path, gen: Generated) -> None:
    config = copy.deepcopy(gen.config)
    config["ignition"].pop("config", None)
    ours = translate(config, "3.3.0")
    ours["ignition"].pop("version")
    assert without_empties(ours) == fetch_stage(config, tmp_path)


# ---------------------------------------------------------------------------------------------------
# Robustness: whatever JSON comes in, the transforms answer or raise an IgnitionError (never crash).

_SHAPED_KEYS = st.sampled_from(
    [
        "storage",
        "files",
        "directories",
        "links",
        "luks",
        "path",
        "mode",
        "contents",
        "source",
        "append",
        "httpHeaders",
        "name",
        "value",
        "kernelArguments",
        "shouldExist",
        "passwd",
        "users",
        "ignition",
        "config",
        "merge",
        "replace",
        "clevis",
        "custom",
        "pin",
        "cex",
        "Mode",
        "bogus",
    ]
)
_ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5000, 5000)
    | st.sampled_from(["", "/a", "data:,x", "gs://b/o", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_SHAPED_KEYS, inner, max_size=4),
    max_leaves=25,
)


def _document(version: str, body: dict[str, Any]) -> dict[str, Any]:
    doc = dict(body)
    ign = doc.get("ignition")
    doc["ignition"] = {**(ign if isinstance(ign, dict) else {}), "version": version}
    return doc


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(ACCEPTED_VERSIONS),
    st.sampled_from(ACCEPTED_VERSIONS),
    st.dictionaries(_SHAPED_KEYS, _ANY_JSON, max_size=4),
    st.dictionaries(_SHAPED_KEYS, _ANY_JSON, max_size=4),
)
def test_transforms_never_crash_on_any_json(
    source: str, target: str, a: dict[str, Any], b: dict[str, Any]
) -> None:
    from ignition.errors import IgnitionError
    from ignition.merge import merge

    one, other = _document(source, a), _document(source, b)
    for run in (
        lambda: translate(one, target),
        lambda: merge(one, other),
    ):
        try:
            result = run()
        except IgnitionError as exc:
            assert str(exc)
            continue
        assert isinstance(result, dict)
