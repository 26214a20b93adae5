"""`mco ignition validate`: exit codes, text lines, JSON format, --strict, stdin."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from cli.main import main

VALID = '{"ignition": {"version": "3.4.0"}}'
WARNS = '{"ignition": {"version": "3.4.0"}, "foo": 1}'
INVALID = '{"ignition": {"version": "3.4.0"},\n "storage": {"files": [{"path": "etc/x"}]}}'


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    out = {}
    for name, text in (("valid.ign", VALID), ("warns.ign", WARNS), ("invalid.ign", INVALID), ("empty.ign", "")):
        (tmp_path / name).write_text(text)
        out[name] = str(tmp_path / name)
    return out


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["valid.ign"], 0),
        (["warns.ign"], 0),
        (["--strict", "warns.ign"], 1),
        (["invalid.ign"], 1),
        (["valid.ign", "invalid.ign"], 1),
        (["empty.ign"], 1),
        (["valid.ign", "missing.ign"], 2),
    ],
    ids=["valid", "warnings-ok", "strict-warnings", "invalid", "one-invalid", "empty", "unreadable"],
)
def test_exit_codes(files: dict[str, str], args: list[str], code: int) -> None:
    argv = [files.get(a, a) if not a.startswith("-") else a for a in args]
    assert main(["ignition", "validate", *argv]) == code


def test_usage_error_exits_2() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["ignition", "validate", "-o", "yaml", "x.ign"])
    assert exc.value.code == 2


def test_text_lines(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ignition", "validate", files["invalid.ign"], files["warns.ign"]]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"error at $.storage.files.0.path ({files['invalid.ign']}:2:33): path not absolute",
        f"warning at $.foo ({files['warns.ign']}:1:36): unused key foo",
    ]


def test_json_format(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ignition", "validate", "-o", "json", files["invalid.ign"], files["valid.ign"]]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] is False and doc["strict"] is False
    first, second = doc["files"]
    assert first["valid"] is False and first["version"] == "3.4.0" and first["errors"] == 1
    assert first["entries"] == [
        {"severity": "error", "code": "path-relative", "path": "$.storage.files.0.path", "message": "path not absolute",
         "file": files["invalid.ign"], "line": 2, "col": 33}
    ]
    assert second == {"file": files["valid.ign"], "valid": True, "version": "3.4.0", "errors": 0, "warnings": 0, "entries": []}


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(INVALID.encode())))
    assert main(["ignition", "validate", "-"]) == 1
    assert capsys.readouterr().out.startswith("error at $.storage.files.0.path (<stdin>:2:33): path not absolute")
