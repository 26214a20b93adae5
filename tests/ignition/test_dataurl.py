"""Data URLs as Ignition (vincent-petithory/dataurl + Go's encoding/base64) reads them, and the encoder.

Error texts are the Go library's own (ignition.md section 8, observed with the HEAD validator) and,
for the lexer corner cases, what its state machine returns.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.dataurl import (
    DataURLError,
    _go_base64_slow,
    data_url_problem,
    decode_data_url,
    encode_data_url,
    escape,
    go_base64_decode,
    gunzip_contents,
    gzip_contents,
    parse_data_url,
)
from ignition.rules import go_url
from ignition.rules.urls import all_common_data_urls, check_url
from tests.tools import real_tool

# ignition.md section 8: this URL with `compression: gzip` made the real Ignition write "hello world".
GZ_HELLO = base64.b64decode("H4sIAAAAAAAAA8tIzcnJVyjPL8pJAQCFEUoNCwAAAA==")

DECODES = [
    ("empty", "data:,", b""),
    ("plain", "data:,hello", b"hello"),
    ("percent-space-newline", "data:,hello%20world%0A", b"hello world\n"),
    ("utf8-escaped", "data:,caf%C3%A9", "café".encode()),
    ("plus-stays-plus", "data:,a+b", b"a+b"),
    ("lowercase-hex", "data:,%e2%82%ac", "€".encode()),
    ("binary-bytes", "data:,%1F%8B%08%00", b"\x1f\x8b\x08\x00"),
    ("base64", "data:;base64,aGVsbG8gd29ybGQ=", b"hello world"),
    ("base64-empty", "data:;base64,", b""),
    ("base64-newlines", "data:;base64,aGVs\nbG8=\n", b"hello"),
    ("base64-newline-in-padding", "data:;base64,YQ=\n=", b"a"),
    ("mediatype", "data:text/plain,x", b"x"),
    ("mediatype-charset", "data:text/plain;charset=utf-8;base64,eA==", b"x"),
    ("param-only", "data:;charset=utf-8,x", b"x"),
    ("x-token-type", "data:x-foo/bar,x", b"x"),
    ("application-type", "data:application/octet-stream;base64,AAE=", b"\x00\x01"),
    ("quoted-param", 'data:text/plain;name="a b",x', b"x"),
    ("gzip-from-notes", "data:;base64,H4sIAAAAAAAAA8tIzcnJVyjPL8pJAQCFEUoNCwAAAA==", GZ_HELLO),
    ("allowed-punctuation", "data:,!$&'()*+,;=:@/?~-._", b"!$&'()*+,;=:@/?~-._"),
]

REFUSALS = [
    ("not-data", "http://x", "missing data prefix"),
    ("no-comma", "data:", "missing comma before data"),
    ("no-comma-after-subtype", "data:text/plain", "incomplete media type"),
    ("no-comma-after-param", "data:;a=b", "missing comma before data"),
    ("raw-space", "data:,hello world", "invalid data character"),
    ("raw-newline", "data:,a\nb", "invalid data character"),
    ("hash", "data:,a#b", "invalid data character"),
    ("brace", "data:,{}", "invalid data character"),
    ("backtick", "data:,`", "invalid data character"),
    ("non-ascii", "data:,café", "invalid data character"),
    ("percent-at-end", "data:,abc%", "rfc2396: unexpected end of unescape sequence"),
    ("percent-one-digit", "data:,abc%4", "rfc2396: unexpected end of unescape sequence"),
    ("percent-bad-hex", "data:,%G1", "rfc2396: invalid char 0x25 in unescape sequence"),
    ("percent-bad-second-hex", "data:,%1G", "rfc2396: invalid char 0x25 in unescape sequence"),
    ("base64-missing-padding", "data:;base64,aGVsbG8", "illegal base64 data at input byte 4"),
    ("base64-one-char", "data:;base64,a", "illegal base64 data at input byte 0"),
    ("base64-bad-char", "data:;base64,aGV*", "invalid data character"),
    ("base64-space", "data:;base64,aGVs bG8=", "invalid data character"),
    ("base64-early-padding", "data:;base64,a===", "illegal base64 data at input byte 1"),
    ("base64-trailing-garbage", "data:;base64,YQ==YQ==", "illegal base64 data at input byte 4"),
    ("base64-single-pad", "data:;base64,YQ=", "illegal base64 data at input byte 3"),
    ("base64-pad-then-char", "data:;base64,YQ=a", "illegal base64 data at input byte 2"),
    ("wrong-encoding-word", "data:;base65,x", "expected base64, got base65"),
    ("bad-media-type", "data:foo/bar,x", "invalid media type"),
    ("type-without-slash", "data:text,x", "invalid character for media type"),
    ("incomplete-subtype", "data:text/", "incomplete media type"),
    ("bad-subtype-char", "data:text/pl@in,x", "invalid character for media subtype"),
    ("empty-param", "data:;,x", "unterminated parameter sequence"),
    ("param-without-value", "data:;charset;base64,x", "invalid character for parameter attribute"),
    ("param-bad-value-char", "data:;a=b@c,x", "invalid character for parameter value"),
    ("unclosed-quote", 'data:;a="b,x', "unclosed quoted string"),
    ("after-quote", 'data:;a="b"c,x', "expected semicolon or comma"),
    ("bad-after-prefix", "data:@,x", "invalid character after data prefix"),
    ("param-bad-escape", "data:;a=%ZZ,x", "rfc2396: invalid char 0x25 in unescape sequence"),
    ("quoted-bad-go-escape", 'data:;a="\\q",x', "invalid syntax"),
]


@pytest.mark.parametrize(("url", "expected"), [c[1:] for c in DECODES], ids=[c[0] for c in DECODES])
def test_decodes(url: str, expected: bytes) -> None:
    assert decode_data_url(url) == expected
    assert data_url_problem(url) is None


@pytest.mark.parametrize(("url", "message"), [c[1:] for c in REFUSALS], ids=[c[0] for c in REFUSALS])
def test_refuses_with_go_message(url: str, message: str) -> None:
    with pytest.raises(DataURLError) as info:
        decode_data_url(url)
    assert info.value.message == message
    assert data_url_problem(url) == message
    if url.startswith("data:") and "\n" not in url:  # (a URL Go's url.Parse takes: validation's URL rule says it)
        assert check_url(url, "3.3.0") == message


def test_media_type_and_params_are_reported() -> None:
    du = parse_data_url('data:text/html;charset=utf-8;name="x\\"y";base64,eA==')
    assert (f"{du.type}/{du.subtype}", du.base64, du.data) == ("text/html", True, b"x")
    assert du.params == {"charset": "utf-8", "name": 'x"y'}
    assert parse_data_url("data:,x").params == {"charset": "US-ASCII"}


@pytest.mark.parametrize(
    ("data", "base64_flag", "expected"),
    [
        (b"hello world\n", False, "data:,hello%20world%0A"),
        (b"hello", True, "data:;base64,aGVsbG8="),
        (b"\x00\x01\x02\x03\x04\x05", None, "data:;base64,AAECAwQF"),
        (b"plain-text", None, "data:,plain-text"),
        (b"", None, "data:,"),
    ],
    ids=["force-plain", "force-base64", "auto-picks-base64-for-binary", "auto-picks-plain-for-text", "empty"],
)
def test_encode(data: bytes, base64_flag: bool | None, expected: str) -> None:
    assert encode_data_url(data, base64=base64_flag) == expected


def test_encode_with_mediatype() -> None:
    assert encode_data_url(b"x", mediatype="text/plain;charset=utf-8", base64=True) == (
        "data:text/plain;charset=utf-8;base64,eA=="
    )


@settings(deadline=None)  # timing is bench/'s job; CI machines are loaded
@given(st.binary(max_size=300), st.sampled_from([True, False, None]))
def test_encode_then_decode_roundtrips(data: bytes, flag: bool | None) -> None:
    url = encode_data_url(data, base64=flag)
    assert decode_data_url(url) == data


@settings(deadline=None)  # timing is bench/'s job; CI machines are loaded
@given(st.binary(max_size=200))
def test_escape_keeps_only_url_characters(data: bytes) -> None:
    assert data_url_problem("data:," + escape(data)) is None


@settings(deadline=None)  # timing is bench/'s job; CI machines are loaded
@given(st.text(alphabet="ABCab01+/=\n", max_size=24))
def test_base64_fast_path_agrees_with_go_port(text: str) -> None:
    """The binascii fast path must accept exactly what the decodeQuantum port accepts, with the same bytes."""
    try:
        slow: bytes | str = _go_base64_slow(text)
    except DataURLError as exc:
        slow = exc.message
    try:
        fast: bytes | str = go_base64_decode(text)
    except DataURLError as exc:
        fast = exc.message
    assert fast == slow


_URLISH = st.text(alphabet='data:;,=/+base64xtplin"\\%0aF G\n', max_size=30)


_COMMONISH = st.tuples(st.sampled_from(["data:", "data:text/plain", "data:image/png;a=b", "data:x/y", "data:text/"]),
                       st.sampled_from([",", ";base64,", ";a=b;base64,", ";a=%41,"]),
                       st.text(alphabet="ABab09+/=%-_.~!$&'()*,;:@?# \u00e9", max_size=12)).map("".join)


@settings(max_examples=600, deadline=None)
@given(st.one_of(_URLISH.map(lambda s: "data:" + s), _URLISH, _COMMONISH))
def test_the_common_shape_exit_answers_as_the_parser(url: str) -> None:
    """`data_url_problem`'s early exit (one regex for the common header and data) says "decodes" only where the
    lexer and decoders do."""
    try:
        parse_data_url(url)
    except DataURLError as exc:
        assert data_url_problem(url) == exc.message
    else:
        assert data_url_problem(url) is None


_TEXTISH = st.text(alphabet="data:,%0aF\n#é", max_size=12).map(lambda s: "data:," + s)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(_TEXTISH, _COMMONISH, _URLISH), min_size=1, max_size=5))
def test_a_list_of_sources_is_accepted_only_when_each_parses(sources: list[str]) -> None:
    """`all_common_data_urls` (a list of `data:,` URLs joined by newlines and tested in one pass, else one
    regex match each) is true only when every source parses, and then check_url accepts each."""
    if all_common_data_urls(sources):
        for url in sources:
            parse_data_url(url)
            assert check_url(url, "3.0.0") is None


@pytest.mark.parametrize(("sources", "accepted"), [
    (["data:,a", "data:,b%41"], True),
    (["data:,a%4", "data:,1b"], False),                 # an escape cut by the join
    (["data:,a%", "data:,b"], False),
    (["data:,a\ndata:,b"], False),                     # a newline inside one URL is a control character
    (["data:,a", "data:;base64,YQ=="], True),           # another shape: one match each
    (["data:,a", "data:text/plain,%ZZ"], False),
    (["data:,a#b"], False),
    (["data:,"], True),
], ids=["text", "split-escape", "trailing-percent", "inner-newline", "mixed-shapes", "bad-escape", "fragment",
        "empty-data"])
def test_lists_of_sources(sources: list[str], accepted: bool) -> None:
    assert all_common_data_urls(sources) is accepted


@settings(deadline=None)  # timing is bench/'s job; CI machines are loaded
@given(st.binary(max_size=100))
def test_base64_matches_python_on_canonical_input(data: bytes) -> None:
    assert go_base64_decode(base64.b64encode(data).decode()) == data


def test_notes_gzip_example_gunzips_to_hello_world() -> None:
    assert (
        gunzip_contents(decode_data_url("data:;base64," + base64.b64encode(GZ_HELLO).decode()))
        == b"hello world"
    )


def test_gzip_is_deterministic_and_reversible() -> None:
    blob = b"hello world" * 100
    assert gzip_contents(blob) == gzip_contents(blob)
    assert gzip_contents(blob)[4:8] == b"\x00\x00\x00\x00"  # mtime 0
    assert gunzip_contents(gzip_contents(blob)) == blob
    with pytest.raises(DataURLError):
        gunzip_contents(b"not gzip")


# ---------------------------------------------------------------------------------------------------
# Differential: Debian's real ignition-validate (2.14) decodes `contents.source` with the same Go library.
# Go's url.Parse runs first and its failures ("unable to parse url": control characters, bad escapes after
# `#` or in a path) are URL rules, not this library's: those URLs are left out of the comparison.

_ERROR_LINE = re.compile(r"^error at \$\.storage\.files\.(\d+)\.contents\.source, line \d+ col \d+: (.*)$")


def _real_verdicts(urls: list[str]) -> dict[int, str]:
    """Run ignition-validate once on a config with one file per URL; {index: error text}."""
    tool = real_tool("ignition-validate")
    files = [{"path": f"/f{i}", "contents": {"source": u}} for i, u in enumerate(urls)]
    config = {"ignition": {"version": "3.3.0"}, "storage": {"files": files}}
    run = subprocess.run([str(tool), "-"], input=json.dumps(config).encode(), capture_output=True, timeout=60)
    verdicts: dict[int, str] = {}
    for line in run.stdout.decode().splitlines():
        # a message ending in a `%` verb without its letter (`%`, `%2`) made Go take the newline as the verb:
        # "%!\n(MISSING)" spans two lines (the last report line then is "(MISSING)" alone)
        line = line.removeprefix("(MISSING)")
        if not line:
            continue
        m = _ERROR_LINE.match(line)
        assert m, f"unexpected validator output: {line}"
        verdicts[int(m.group(1))] = m.group(2)
    assert run.returncode == (1 if verdicts else 0), run.stderr.decode()
    return verdicts


_GO_VERB = re.compile(r"%([+\-# 0]*[0-9]*(?:\.[0-9]*)?)(.?)", re.S)


# a message ending where Go's printf reads a verb's flags/width/precision: the newline after it becomes the verb
_TRAILING_VERB = re.compile(r"%[+\-# 0]*[0-9]*(?:\.[0-9]*)?\Z")


def _as_printed_by_ignition_validate(message: str) -> str:
    """ignition-validate prints its report with fmt.Fprintf(os.Stdout, report): each `%` verb in a message
    has no argument, so Go writes `%!z(MISSING)` for it (`%%` stays `%`). Model that printing step."""

    def verb(m: re.Match[str]) -> str:
        if m.group(2) == "%" and not m.group(1):
            return "%"
        return f"%!{m.group(2)}(MISSING)" if m.group(2) else "%!(NOVERB)"

    return _GO_VERB.sub(verb, message)


def _go_url_parses(url: str) -> bool:
    try:
        go_url.parse(url)
    except go_url.URLError:
        return False
    return True


def _assert_agree(urls: list[str]) -> None:
    real = _real_verdicts(urls)
    compared = [
        i
        for i, u in enumerate(urls)
        if _go_url_parses(u)
        and real.get(i) != "unable to parse url"
        and not _TRAILING_VERB.search(data_url_problem(u) or "")
    ]
    assert len(compared) > len(urls) // 2
    mine = {i: data_url_problem(urls[i]) for i in compared}
    printed = {i: None if m is None else _as_printed_by_ignition_validate(m) for i, m in mine.items()}
    assert printed == {i: real.get(i) for i in compared}


def test_tables_agree_with_real_ignition_validate() -> None:
    _assert_agree(
        [u for _, u, _ in DECODES + REFUSALS if u.startswith("data:")] + ["data:;F%zzb,x", "data:;a%%b,x"]
    )


_URL_ALPHABET = st.sampled_from(
    list('data:;,=/+base64xtplin"\\%0aF G#{<é') + ["%2", "%zz", "==", "YQ", "text/plain"]
)


@settings(max_examples=8, deadline=None)
@given(
    st.lists(
        st.lists(_URL_ALPHABET, max_size=12).map(lambda parts: "data:" + "".join(parts)),
        min_size=40,
        max_size=60,
    )
)
def test_generated_urls_agree_with_real_ignition_validate(urls: list[str]) -> None:
    _assert_agree(urls)


def _outcome(url: str) -> bytes | str:
    try:
        return decode_data_url(url)
    except DataURLError as exc:
        return exc.message


@settings(deadline=None)  # timing is bench/'s job; CI machines are loaded
@given(st.text(alphabet='aZ09+/=%Fg \n#"é\\<,;', max_size=20))
def test_fast_paths_decide_as_the_lexer_does(payload: str) -> None:
    """`data:,` and `data:;base64,` skip the lexer; a media type forces it, and must not change the outcome."""
    assert _outcome("data:," + payload) == _outcome("data:text/plain," + payload)
    assert _outcome("data:;base64," + payload) == _outcome("data:text/plain;base64," + payload)
