"""The rendered-config hash: the fast serialisation must write the very bytes of its json-module definition."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fleet.rendered import MachineConfigSpec
from renderer.naming import rendered_name, spec_bytes


def reference_spec_bytes(data: object) -> bytes:
    """The definition of the canonical serialisation (ignition/canonical.py), with the json module."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


# text without lone surrogates (which neither serialiser can write as UTF-8), biased to what sorts and
# escapes differently: control characters, quotes, backslashes, BMP vs astral characters, U+2028
TEXT = st.text(st.one_of(st.characters(blacklist_categories=("Cs",)),
                         st.sampled_from(list('\x00\x1f\x7f"\\/\u2028\u2029\uffff\U0001f600é'))), max_size=12)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), TEXT)
JSON: st.SearchStrategy[Any] = st.recursive(
    SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=5)),
    max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(config=st.dictionaries(TEXT, JSON, max_size=6), kargs=st.lists(TEXT, max_size=3))
def test_fast_bytes_equal_the_definition(config: dict[str, Any], kargs: list[str]) -> None:
    spec = MachineConfigSpec(config=config, kernel_arguments=tuple(kargs), os_image_url="quay.io/x@sha256:1")
    assert spec_bytes(spec) == reference_spec_bytes(spec.to_dict())


def test_integers_beyond_64_bits_take_the_definition() -> None:
    spec = MachineConfigSpec(config={"ignition": {"version": "3.5.0"}, "x": 2**70})
    assert spec_bytes(spec) == reference_spec_bytes(spec.to_dict())
    assert b"1180591620717411303424" in spec_bytes(spec)


def test_name_ignores_key_order_and_follows_values() -> None:
    a = MachineConfigSpec(config={"ignition": {"version": "3.5.0"}, "storage": {"files": [{"path": "/a", "mode": 420}]}})
    b = MachineConfigSpec(config={"storage": {"files": [{"mode": 420, "path": "/a"}]}, "ignition": {"version": "3.5.0"}})
    c = MachineConfigSpec(config={"ignition": {"version": "3.5.0"}, "storage": {"files": [{"path": "/a", "mode": 384}]}})
    assert rendered_name("worker", a) == rendered_name("worker", b) != rendered_name("worker", c)


@settings(max_examples=200, deadline=None)
@given(config=st.dictionaries(TEXT, JSON, max_size=6))
def test_size_from_the_canonical_bytes_is_the_size(config: dict[str, Any]) -> None:
    from fleet.rendered import RenderedConfig
    from renderer.render_pool import machine_config_size

    spec = MachineConfigSpec(config=config, extensions=("usbguard",))
    rendered = RenderedConfig(name=rendered_name("worker", spec), pool="worker", spec=spec, sources=("a",),
                              annotations={"k": "é"}, provenance={"x": "y"})
    assert machine_config_size(rendered, spec_bytes(spec)) == machine_config_size(rendered)
