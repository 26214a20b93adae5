"""Bad input is data: `check` never raises, whatever the bytes or JSON values (hypothesis)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ignition import check, validate_dict

KEYS = st.sampled_from(
    ["ignition", "version", "storage", "files", "path", "mode", "contents", "source", "links", "target", "hard",
     "directories", "disks", "partitions", "number", "label", "filesystems", "format", "luks", "clevis", "tang",
     "custom", "pin", "systemd", "units", "name", "contents", "dropins", "passwd", "users", "kernelArguments",
     "shouldExist", "httpHeaders", "value", "verification", "hash", "raid", "devices", "level", "Path", "x"]
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["/etc/a", "a", "", "3.6.0", "3.0.0", "data:,x", "http://[::1", "[Unit]\nA=b", "sha512-x", "ext4"]),
    st.text(max_size=20),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5), max_leaves=30)
VERSIONS = st.sampled_from(["3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0", "3.7.0-experimental"])


@settings(max_examples=150, deadline=None)
@given(VERSIONS, st.dictionaries(KEYS, VALUES, max_size=6))
def test_any_json_document_gives_a_report(version: str, body: dict[str, Any]) -> None:
    body["ignition"] = {"version": version, **(body.get("ignition") if isinstance(body.get("ignition"), dict) else {})}
    body["ignition"]["version"] = version
    text = json.dumps(body)
    report = check(text).report
    for entry in report.entries:
        assert entry.severity in ("error", "warning") and entry.code and entry.path_str().startswith("$")
    assert (not validate_dict(body).is_fatal) == (not report.is_fatal)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_report(raw: bytes) -> None:
    report = check(raw).report
    assert report.entries or not report.is_fatal


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet='{}[]",: \n0123456789.-eEtrufalsn\\u', max_size=60))
def test_json_like_text_gives_a_report(text: str) -> None:
    """Text that is not JSON gets one json-syntax error placed inside the text; JSON (which, in this alphabet,
    cannot spell `ignition`) gets a fatal version or type error and no document."""
    checked = check(text)
    codes = [e.code for e in checked.report.entries]
    try:
        json.loads(text)
    except ValueError:
        if not text:
            assert codes == ["empty"]
            return
        [entry] = checked.report.entries
        assert entry.code == "json-syntax" and entry.line is not None and entry.col is not None
        assert 1 <= entry.line <= text.count("\n") + 1 and entry.col >= 1
    else:
        assert checked.report.is_fatal and checked.doc is None
        assert codes[0] in ("json-type", "version-invalid"), codes
