"""`mco ignition translate` and `mco ignition merge` across versions: exit codes, output, positioned reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ignition.translate import translate
from tests.ignition.configs import cfg


def _write(tmp_path: Path, name: str, config: Any) -> str:
    target = tmp_path / name
    target.write_text(config if isinstance(config, str) else json.dumps(config))
    return str(target)


CLI_CASES = [
    ("up", cfg("3.2.0", storage={"files": [{"path": "/a", "mode": 420}]}), "3.4.0", 0, "", ""),
    ("down", cfg("3.4.0", systemd={"units": [{"name": "a.service", "mask": True}]}), "3.2.0", 0, "", ""),
    (
        "refused",
        cfg("3.3.0", kernelArguments={"shouldExist": ["foo"]}),
        "3.2.0",
        1,
        "",
        "error at $.kernelArguments.shouldExist.0",
    ),
    (
        "invalid-input",
        cfg("3.3.0", storage={"files": [{"path": "rel"}]}),
        "3.2.0",
        1,
        "",
        "f.ign:1:67): path not absolute",
    ),
    ("not-json", '{"ignition": ', "3.2.0", 1, "", "error"),
    ("unknown-target", cfg("3.3.0"), "3.9.0", 2, "", "unknown spec version"),
    (
        "result-invalid-after-up",
        cfg("3.2.0", storage={"links": [{"path": "/l"}]}),
        "3.3.0",
        1,
        "",
        "link target is required",
    ),
]


@pytest.mark.parametrize(
    ("config", "to", "code", "stdout", "stderr"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_cli_translate(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    config: Any,
    to: str,
    code: int,
    stdout: str,
    stderr: str,
) -> None:
    from cli.main import main

    path = _write(tmp_path, "f.ign", config)
    assert main(["ignition", "translate", "--to", to, path]) == code
    out, err = capsys.readouterr()
    assert stderr in err
    if code == 0:
        assert out.endswith("\n")
        assert json.loads(out) == translate(config, to)
    else:
        assert out == ""


def test_cli_translate_unreadable_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    assert main(["ignition", "translate", "--to", "3.3.0", str(tmp_path / "missing.ign")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_cli_translate_missing_to_is_usage_error(tmp_path: Path) -> None:
    from cli.main import main

    with pytest.raises(SystemExit) as info:
        main(["ignition", "translate", _write(tmp_path, "f.ign", cfg("3.3.0"))])
    assert info.value.code == 2


def test_cli_translate_prints_canonical_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    path = _write(
        tmp_path, "f.ign", {"storage": {"files": [{"path": "/a"}]}, "ignition": {"version": "3.1.0"}}
    )
    assert main(["ignition", "translate", "--to", "3.1.0", path]) == 0
    assert capsys.readouterr().out == '{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"/a"}]}}\n'


def test_cli_translate_report_has_positions_and_no_repeats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli.main import main

    text = '{"ignition": {"version": "3.4.0"},\n "storage": {"files": [{"path": "/s", "Bogus": 1}],\n  "luks": [{"name": "r", "device": "/dev/sdb", "discard": true}]}}'
    path = _write(tmp_path, "f.ign", text)
    assert main(["ignition", "translate", "--to", "3.3.0", path]) == 1
    err = capsys.readouterr().err.splitlines()
    assert f"error at $.storage.luks.0.discard ({path}:3:59): not supported in spec 3.3.0" in err
    assert sum("unused key Bogus" in line for line in err) == 1


def test_cli_merge_translates_the_older_input_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    parent = _write(tmp_path, "p.ign", cfg("3.5.0", storage={"files": [{"path": "/s", "mode": 2541}]}))
    child = _write(tmp_path, "c.ign", cfg("3.6.0", storage={"files": [{"path": "/s", "overwrite": False}]}))
    assert main(["ignition", "merge", parent, child]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["storage"]["files"] == [{"path": "/s", "mode": 493, "overwrite": False}]
    assert f"warning at $.storage.files.0.mode ({parent}:1:" in err and "masked" in err
