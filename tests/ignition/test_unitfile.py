"""go-systemd's unit-file lexer (ignition/rules/unitfile.py), the one reader of unit files: options, the
errors' exact Go texts, the line-length rule, and what validation reads of a unit (`unit_verdict`).
The real `ignition-validate` holds it to Ignition's verdicts in tests/ignition/test_validate_corpus.py and the
generated-config differential."""

from __future__ import annotations

import pytest

from ignition.rules.unitfile import LINE_MAX, UnitOption, UnitParseError, deserialize, unit_verdict


def _outcome(text: str) -> tuple[str, object]:
    try:
        return "ok", deserialize(text)
    except UnitParseError as exc:
        return "error", str(exc)


TOO_LONG = ("error", f"line too long (max {LINE_MAX} bytes)")


@pytest.mark.parametrize(("text", "expected"), [
    (f"[Unit]\nA={'x' * (LINE_MAX - 100)}\n", ("ok", [UnitOption("Unit", "A", "x" * (LINE_MAX - 100))])),
    (f"[Unit]\nA={'x' * (LINE_MAX - 2)}\n", TOO_LONG),
    (f"[Unit]\nA={'x' * LINE_MAX}", TOO_LONG),
    ("[Unit]\n" + "B=" + "y" * 4096 + "\nC=z\n", TOO_LONG),
], ids=["under", "at-the-limit", "over-without-newline", "over-then-more"])
def test_line_length(text: str, expected: tuple[str, object]) -> None:
    assert _outcome(text) == expected


CASES = [
    ("[Unit]\nDescription=chrony\n\n[Service]\nExecStart=/usr/sbin/chronyd -n\n[Install]\nWantedBy=multi-user.target\n",
     [("Unit", "Description", "chrony"), ("Service", "ExecStart", "/usr/sbin/chronyd -n"),
      ("Install", "WantedBy", "multi-user.target")]),
    ("[Service]\nExecStart=/bin/podman run \\\n  --rm x\nType=oneshot\n",
     [("Service", "ExecStart", "/bin/podman run \\\n  --rm x"), ("Service", "Type", "oneshot")]),
    ("# leading comment\n; another\n[Unit]\n  Key = spaced value  \n", [("Unit", "Key", "spaced value")]),
    ("[Unit]\nA=\nB= \n", [("Unit", "A", ""), ("Unit", "B", "")]),
    ("[Unit]\nA=x\\\n\nB=y\n", [("Unit", "A", "x\\\n"), ("Unit", "B", "y")]),
    ("x[Unit]\nA=b\n", [("Unit", "A", "b")]),  # text before the first section is skipped
    ("[Unit]\r\nA=b\r\n", [("Unit", "A", "b")]),
    ("[Unit]\n# c \\\nA=b\n", []),  # a comment continued by a backslash swallows the next line
    ("[\u00dcnit]\nA=b\n", [("\u00dcnit", "A", "b")]),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_table(text: str, expected: list[tuple[str, str, str]]) -> None:
    options = [UnitOption(*e) for e in expected]
    assert deserialize(text) == options


@pytest.mark.parametrize(("text", "error"), [
    ("[Unit]\nno equals sign\n", "unexpected newline encountered while parsing option name"),
    ("[Unit]\nA", "EOF"),
    ("[Unit", "unable to find end of section"),
    ("[Unit] junk\n", 'found garbage after section name : "junk"'),
])
def test_errors(text: str, error: str) -> None:
    assert _outcome(text) == ("error", error)


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
    assert unit_verdict(text) == verdict
