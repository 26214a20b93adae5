"""`mco ignition merge`: the merged document on stdout, exit codes, positioned reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.ignition.configs import cfg


def _write(tmp_path: Path, name: str, config: Any) -> str:
    target = tmp_path / name
    target.write_text(config if isinstance(config, str) else json.dumps(config))
    return str(target)


CLI_CASES = [
    (
        "ok",
        cfg(storage={"files": [{"path": "/a", "mode": 420}]}),
        cfg(storage={"files": [{"path": "/a", "overwrite": False}]}),
        0,
        "",
    ),
    (
        "older-parent-translated-up",
        cfg("3.2.0", storage={"files": [{"path": "/a"}]}),
        cfg("3.4.0", kernelArguments={"shouldExist": ["x"]}),
        0,
        "",
    ),
    ("invalid-parent", cfg(storage={"files": [{"path": "rel"}]}), cfg(), 1, "p.ign:1:67): path not absolute"),
    (
        "valid-inputs-invalid-result",
        cfg(
            "3.0.0",
            storage={"filesystems": [{"path": "/foo", "format": "ext4", "device": "/dev/disk/by-label/OEM"}]},
        ),
        cfg("3.0.0", storage={"filesystems": [{"format": "", "device": "/dev/disk/by-label/OEM"}]}),
        1,
        "format cannot be empty",
    ),
]


@pytest.mark.parametrize(
    ("parent", "child", "code", "stderr"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_cli_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], parent: Any, child: Any, code: int, stderr: str
) -> None:
    from cli.main import main

    assert (
        main(["ignition", "merge", _write(tmp_path, "p.ign", parent), _write(tmp_path, "c.ign", child)])
        == code
    )
    out, err = capsys.readouterr()
    assert stderr in err
    if code == 0:
        result = json.loads(out)
        assert result["ignition"]["version"] == max(
            parent["ignition"]["version"], child["ignition"]["version"]
        )
    else:
        assert out == ""


def test_cli_merge_unreadable_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    assert main(["ignition", "merge", str(tmp_path / "nope"), _write(tmp_path, "c.ign", cfg())]) == 2
    assert "cannot read" in capsys.readouterr().err
