"""One output convention in every command (cli/output_flags.py): `-o FORMAT`, `--output-file FILE`,
`--out-dir DIR`.

The old spellings still work for one release: the same result as the new flag, plus one deprecation
warning on stderr naming the new flag; the new spellings print no warning.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli.main import main

BUTANE = "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/motd\n      contents:\n        inline: hi\n"
IGNITION = '{"ignition": {"version": "3.4.0"}, "storage": {"files": [{"path": "relative"}]}}'

# id: (argv with {in} and {out}, the old spelling's flag, its replacement, the new spelling's argv)
CASES = {
    "butane -o FILE": (["butane", "{in}.bu", "-o", "{out}"], "-o", "--output-file",
                       ["butane", "{in}.bu", "--output-file", "{out}"]),
    "butane --output FILE": (["butane", "{in}.bu", "--output", "{out}"], "--output", "--output-file",
                             ["butane", "{in}.bu", "--output-file", "{out}"]),
    "pointer -o FILE": (["ignition", "pointer", "--pool", "worker", "--url", "http://h:22624", "-o", "{out}"],
                        "-o", "--output-file",
                        ["ignition", "pointer", "--pool", "worker", "--url", "http://h:22624", "--output-file", "{out}"]),
    "validate --format json": (["ignition", "validate", "--format", "json", "{in}.ign"], "--format", "-o FORMAT",
                               ["ignition", "validate", "-o", "json", "{in}.ign"]),
}


def _run(argv: list[str], tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, str]:
    (tmp_path / "doc.bu").write_text(BUTANE)
    (tmp_path / "doc.ign").write_text(IGNITION)
    out_file = tmp_path / name
    code = main([a.replace("{in}", str(tmp_path / "doc")).replace("{out}", str(out_file)) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err, out_file.read_text() if out_file.exists() else ""


@pytest.mark.parametrize(("old", "flag", "replacement", "new"), CASES.values(), ids=CASES.keys())
def test_old_spelling_warns_and_does_what_the_new_one_does(old: list[str], flag: str, replacement: str, new: list[str],
                                                           tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old_code, old_out, old_err, old_file = _run(old, tmp_path, "old", capsys)
    new_code, new_out, new_err, new_file = _run(new, tmp_path, "new", capsys)
    assert (old_code, old_out, old_file) == (new_code, new_out, new_file)
    assert old_out or old_file  # the command produced something
    warning = f"mco: warning: {flag} is deprecated and will be removed in the next release; use {replacement}\n"
    assert old_err == warning + new_err
    assert "deprecated" not in new_err


def test_a_format_flag_takes_only_its_formats(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["ignition", "validate", "-o", "/tmp/file", "x.ign"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_image_build_output_still_takes_an_old_layout_or_a_format(capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import build_parser

    argv = ["image", "build", "c", "--pool", "p", "--base", "b"]
    old = build_parser(argv).parse_args([*argv, "--output", "oci:/tmp/o:w"])
    assert (old.output, old.output_layout) == ("text", "oci:/tmp/o:w")
    assert "use --output-layout" in capsys.readouterr().err
    new = build_parser(argv).parse_args([*argv, "-o", "json", "--output-layout", "oci:/tmp/o:w"])
    assert (new.output, new.output_layout) == ("json", "oci:/tmp/o:w")
    assert capsys.readouterr().err == ""


def test_help_documents_the_convention(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "-o, --output FORMAT" in out and "--output-file FILE" in out and "deprecated" not in out
    assert "--out-dir DIR" in out and "--context DIR" in out
    assert "still work in this release, with a warning on stderr" in out


WRITERS = {
    "butane": ["butane", "{in}.bu", "--output-file", "{out}"],
    "pointer": ["ignition", "pointer", "--pool", "worker", "--url", "http://h:22624", "--output-file", "{out}"],
}


@pytest.mark.parametrize("argv", WRITERS.values(), ids=WRITERS.keys())
def test_output_file_is_written_whole_or_refused_naming_the_flag(argv: list[str], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "doc.bu").write_text(BUTANE)
    target = tmp_path / "out"
    target.write_text("previous result\n")
    code = main([a.replace("{in}", str(tmp_path / "doc")).replace("{out}", str(target)) for a in argv])
    assert code == 0 and target.read_text().startswith("{")
    in_the_way = tmp_path / "a-directory"
    (in_the_way / "kept").mkdir(parents=True)
    code = main([a.replace("{in}", str(tmp_path / "doc")).replace("{out}", str(in_the_way)) for a in argv])
    assert code == 2 and f"--output-file {in_the_way}: cannot write" in capsys.readouterr().err
    assert [p.name for p in in_the_way.iterdir()] == ["kept"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-directory", "doc.bu", "out"]  # no temp file left
    missing = tmp_path / "no-such-dir" / "out"  # no directory is made for it, as the shell's `>` makes none
    code = main([a.replace("{in}", str(tmp_path / "doc")).replace("{out}", str(missing)) for a in argv])
    assert code == 2 and f"--output-file {missing}: cannot write: no directory" in capsys.readouterr().err
    assert not missing.parent.exists()


def test_output_file_keeps_the_mode_a_file_had_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    (tmp_path / "doc.bu").write_text(BUTANE)
    kept = tmp_path / "secret.ign"
    kept.write_text("old\n")
    kept.chmod(0o600)
    assert main(["butane", str(tmp_path / "doc.bu"), "--output-file", str(kept)]) == 0
    assert (kept.stat().st_mode & 0o777, kept.read_text().startswith("{")) == (0o600, True)
    previous = os.umask(0o027)
    try:
        assert main(["butane", str(tmp_path / "doc.bu"), "--output-file", str(tmp_path / "new.ign")]) == 0
    finally:
        os.umask(previous)
    assert (tmp_path / "new.ign").stat().st_mode & 0o777 == 0o640


EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "cluster")
IMAGE = ["image", "build", EXAMPLE, "--pool", "master", "--base", "quay.io/example/os:1"]

# id: (the old spelling's argv after IMAGE, its flag, its replacement, the new spelling's argv); {dir} is the
# directory the result goes into
DIRECTORIES = {
    "image build --context DIR": (["--context", "{dir}"], "--context", "--out-dir", ["--out-dir", "{dir}"]),
    "image build --context DIR -o json": (["--context", "{dir}", "-o", "json"], "--context", "--out-dir",
                                          ["--out-dir", "{dir}", "-o", "json"]),
}


def _tree(root: Path) -> dict[str, bytes | str]:
    """Every entry below `root`: a file's bytes, a symlink's target, or "dir"."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        found[name] = (f"-> {os.readlink(path)}" if path.is_symlink() else "dir" if path.is_dir()
                       else path.read_bytes())
    return found


@pytest.mark.parametrize(("old", "flag", "replacement", "new"), DIRECTORIES.values(), ids=DIRECTORIES.keys())
def test_old_directory_spelling_warns_and_writes_what_the_new_one_writes(
        old: list[str], flag: str, replacement: str, new: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    results = []
    for argv, name in ((old, "old"), (new, "new")):
        where = tmp_path / name
        code = main([*IMAGE, *(a.replace("{dir}", str(where)) for a in argv)])
        out, err = capsys.readouterr()
        results.append((code, out.replace(str(where), "{dir}"), err.replace(str(where), "{dir}"), _tree(where)))
    (old_code, old_out, old_err, old_tree), (new_code, new_out, new_err, new_tree) = results
    assert new_code == 0 and "Containerfile" in new_tree and "rootfs" in new_tree
    assert (old_code, old_out, old_tree) == (new_code, new_out, new_tree)
    warning = f"mco: warning: {flag} is deprecated and will be removed in the next release; use {replacement}\n"
    assert old_err == warning + new_err
    assert "deprecated" not in new_err


# id: (argv after IMAGE, with {tmp} for the test's directory; the message on stderr): every refusal names the
# flag as the user spells it now, never an older spelling
FLAG_MESSAGES = {
    "containerfile mode without a directory": ([], "mco: --out-dir: containerfile mode needs --out-dir DIR (or --build)"),
    "a directory that is not a build context": (["--out-dir", "{tmp}/taken"],
                                                "exists and is not a generated build context; choose another --out-dir"),
    "oci mode without a destination": (["--mode", "oci"], "mco: --output-layout: oci mode needs --output-layout "
                                                          "oci:DIR:TAG and/or --push docker://HOST/REPO:TAG"),
    "a layout without a tag": (["--mode", "oci", "--output-layout", "oci:{tmp}/layout"],
                               "mco: --output-layout: name the tag: oci:DIR:TAG"),
    "a layout directory that is not a layout": (["--mode", "oci", "--output-layout", "oci:{tmp}/taken:v1"],
                                                "mco: --output-layout: {tmp}/taken exists and is not an OCI layout"),
}


@pytest.mark.parametrize(("argv", "message"), FLAG_MESSAGES.values(), ids=FLAG_MESSAGES.keys())
def test_image_build_refusals_name_the_flag_as_spelt_now(argv: list[str], message: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "kept").write_text("not ours\n")
    code = main([*IMAGE, *(a.replace("{tmp}", str(tmp_path)) for a in argv)])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert message.replace("{tmp}", str(tmp_path)) in err
    assert "deprecated" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]  # nothing written
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["kept"]
