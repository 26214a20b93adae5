"""The unit-file lexer's line-by-line path (`deserialize_lines`) against the rune-by-rune port it skips, and
validation's two-regex reading (`unit_verdict`) against the lexer.

Whatever the input, `deserialize` must give what the port gives: the same options, or the same error text;
`unit_verdict` the lexer's error and whether an option sits in [Install].
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.rules.unitfile import (
    LINE_MAX,
    UnitOption,
    UnitParseError,
    clear_cache,
    deserialize,
    deserialize_lines,
    deserialize_runes,
    unit_verdict,
)

SPACE = st.sampled_from(["", " ", "  ", "\t", "\x0b", "\x0c", "\x1c", " \t"])
WORD = st.sampled_from(["Unit", "Service", "Install", "X-Y", "", "a b", "Ü", "[", "]", "=", "#", ";", "\\"])
VALUE = st.text(st.sampled_from(list("ab =[]#;\\/-.\t\x1c")), max_size=12)
LINE = st.one_of(
    st.builds(lambda s, w, t: f"{s}[{w}]{t}", SPACE, WORD, st.sampled_from(["", " ", "\t", "x", " #c", "\x1c"])),
    st.builds(lambda s, n, v: f"{s}{n}={v}", SPACE, st.sampled_from(["ExecStart", "A", " B ", "", "x y", "Ü"]), VALUE),
    st.builds(lambda s, c, v: f"{s}{c}{v}", SPACE, st.sampled_from(["#", ";"]), VALUE),
    st.builds(lambda s, v: f"{s}{v}", SPACE, VALUE),  # no '=': an error inside a section
    SPACE, st.sampled_from(["[Unit", "Description=é", "x\\", "x\\ ", "  \\", "A=b\\"]),
)
UNIT = st.builds(lambda lines, end: "\n".join(lines) + end, st.lists(LINE, max_size=8),
                 st.sampled_from(["", "\n", "\n\n", "\r\n", "\\"]))


def _outcome(fn: object, text: str) -> tuple[str, object]:
    try:
        return "ok", fn(text)  # type: ignore[operator]
    except UnitParseError as exc:
        return "error", str(exc)


LONG = st.builds(lambda pre, n, fill: pre + fill * n, st.sampled_from(["A=", "# ", "[", "  B = "]),
                 st.sampled_from([LINE_MAX - 3, LINE_MAX - 2, LINE_MAX - 1, LINE_MAX, 4093, 4094, 4095, 4096]),
                 st.sampled_from(["x", "\\", " ", "]"]))
LONG_UNIT = st.builds(lambda a, long, b: f"[Unit]\n{a}\n{long}\n{b}", UNIT, LONG, UNIT)


@settings(max_examples=3000, deadline=None)
@given(text=st.one_of(UNIT, st.builds(lambda a, b: f"[Unit]\n{a}\n{b}", UNIT, UNIT), LONG_UNIT))
def test_deserialize_matches_the_rune_lexer(text: str) -> None:
    fast = deserialize_lines(text)
    if fast is not None:
        assert ("ok", fast) == _outcome(deserialize_runes, text)
    assert _outcome(deserialize, text) == _outcome(deserialize_runes, text)


@pytest.mark.parametrize("length", [LINE_MAX - 2, LINE_MAX - 1, LINE_MAX, LINE_MAX + 1, 4095, 4096, 4097])
def test_long_lines_agree(length: int) -> None:
    for text in (f"[Unit]\nA={'x' * length}\n", f"[Unit]\nA={'x' * length}", "[Unit]\n" + "B=" + "y" * length + "\nC=z\n"):
        assert _outcome(deserialize, text) == _outcome(deserialize_runes, text)


CASES = [
    ("[Unit]\nDescription=chrony\n\n[Service]\nExecStart=/usr/sbin/chronyd -n\n[Install]\nWantedBy=multi-user.target\n",
     [("Unit", "Description", "chrony"), ("Service", "ExecStart", "/usr/sbin/chronyd -n"),
      ("Install", "WantedBy", "multi-user.target")]),
    ("[Service]\nExecStart=/bin/podman run \\\n  --rm x\nType=oneshot\n",
     [("Service", "ExecStart", "/bin/podman run \\\n  --rm x"), ("Service", "Type", "oneshot")]),
    ("# leading comment\n; another\n[Unit]\n  Key = spaced value  \n", [("Unit", "Key", "spaced value")]),
    ("[Unit]\nA=\nB= \n", [("Unit", "A", ""), ("Unit", "B", "")]),
    ("[Unit]\nA=x\\\n\nB=y\n", [("Unit", "A", "x\\\n"), ("Unit", "B", "y")]),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_table(text: str, expected: list[tuple[str, str, str]]) -> None:
    options = [UnitOption(*e) for e in expected]
    assert deserialize_lines(text) == options == deserialize_runes(text)


@pytest.mark.parametrize("text", ["[Unit]\nno equals sign\n", "[Unit", "[Unit] junk\n", "x[Unit]\nA=b\n",
                                  "[Unit]\r\nA=b\r\n", "[Unit]\n# c \\\nA=b\n", "[Ünit]\nA=b\n"])
def test_what_the_line_path_leaves_to_the_rune_lexer(text: str) -> None:
    assert deserialize_lines(text) is None


def _lexer_verdict(text: str) -> tuple[str | None, bool]:
    try:
        options = deserialize_runes(text)
    except UnitParseError as exc:
        return f"invalid unit content: {exc}", False
    return None, any(o.section == "Install" for o in options)


# unit texts near the regexes' edges: headers named Install or not, bare, with blanks or garbage after them
INSTALLISH = st.builds(lambda s, w, t: f"{s}[{w}]{t}", st.one_of(SPACE, st.just("\r")),
                       st.sampled_from(["Install", "install", "Install ", "X"]),
                       st.sampled_from(["", " ", "\t", "x", "\x1c", " ]"]))
VERDICT_UNIT = st.builds(lambda lines, end: "\n".join(lines) + end,
                         st.lists(st.one_of(LINE, INSTALLISH, INSTALLISH), max_size=8),
                         st.sampled_from(["", "\n", "\n\n", "\r\n", "\\"]))


@settings(max_examples=4000, deadline=None)
@given(text=st.one_of(UNIT, VERDICT_UNIT, st.builds(lambda a, b: f"[Unit]\n{a}\n{b}", VERDICT_UNIT, UNIT), LONG_UNIT))
def test_the_unit_verdict_is_the_lexers(text: str) -> None:
    clear_cache()
    assert unit_verdict(text) == _lexer_verdict(text)


@pytest.mark.parametrize(("text", "verdict"), [
    ("[Unit]\nA=b\n[Install]\nWantedBy=x\n", (None, True)),
    ("[Unit]\nA=b\n[Install]\n", (None, False)),  # a bare [Install] holds no option
    ("[Install]\n# c\n\n  W=x", (None, True)),
    ("[Install]\n[Unit]\nA=b\n", (None, False)),
    ("A=b\n[Unit]\n", (None, False)),  # text before the first section is skipped by the lexer
    ("[Unit] junk\nA=b\n", ("invalid unit content: found garbage after section name : \"junk\"", False)),
    ("", (None, False)),
    ("[Unit]\nA=b\\\n[Install]\nW=x\n", (None, False)),  # a continued value swallows the next line
    ("[Unit]\n# c \\\n[Install]\nW=x\n", (None, False)),  # so does a continued comment
    ("[Unit]\n\r[Install]x=1\n", ("invalid unit content: found garbage after section name : \"x=1\"", False)),
    ("[Unit]\n\xa0[Install]x=1\n", ("invalid unit content: found garbage after section name : \"x=1\"", False)),
    ("[Unit]\n\x85[Install]\nW=1\n", (None, True)),  # (the lexer's spaces beyond ASCII)
])
def test_unit_verdict_table(text: str, verdict: tuple[str | None, bool]) -> None:
    assert unit_verdict(text) == verdict == _lexer_verdict(text)
