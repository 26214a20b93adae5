"""The user documentation stays true and self-contained.

- No document points outside the repository (the working notes and style guide the project was built from
  are not shipped): a rule is cited from its upstream source or from the project's own docs.
- Every relative link resolves to a file of the repository.
- Every `mco` command line a document shows uses subcommands and options the CLI really has, so a renamed
  or removed flag fails here until the docs say what is true.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from cli.main import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", ROOT / "examples" / "cluster" / "README.md", ROOT / "bench" / "README.md",
               *(ROOT / "docs").rglob("*.md"), *(ROOT / "tests").rglob("README.md")])
OUTSIDE = re.compile(r"\.\./shared|\bnotes/[a-z]+\.md|\bstyle\.md|notes/mco|§\s?\d")
LINK = re.compile(r"\]\(([^)\s]+)\)")
# `mco` as a command word: at the start, after a space, a backtick, `=` (ExecStart=) or a path (/opt/mco/bin/mco)
COMMAND = re.compile(r"(?:^|[\s`=/$(])mco\s+(?=([a-z][^\n`]*))")  # a lookahead: commands may nest in prose
# a file or directory of this repository named in backticks: `renderer/render.py`, `docs/scale-out.md`
REPO_PATH = re.compile(r"`((?:ignition|fleet|renderer|server|imagebuild|applier|cli|docs|examples|scripts)/[^`\s]*)`")
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
_ENDS = re.compile(r"\s(?:\||&&|;|>|#)\s|\\\||\s\|\s*$")  # a pipe, a redirection or a comment ends the command


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _joined(text: str) -> str:
    """The text with shell line continuations joined, so a command spread over lines is one line."""
    return re.sub(r"\\\n\s*", " ", text)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse has no public accessor for its sub-parsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def _commands(text: str) -> list[tuple[list[str], list[str]]]:
    """(subcommand words, --options) of every `mco ...` command line in `text`."""
    found = []
    for match in COMMAND.finditer(_joined(text)):
        line = match.group(1)
        cut = _ENDS.search(" " + line)
        if cut:
            line = line[: max(cut.start() - 1, 0)]
        words = []
        for token in line.split():
            word = token.rstrip(",.;:)")
            if not re.fullmatch(r"[a-z][a-z-]*", word):
                break
            words.append(word)
            if word != token:  # punctuation ends the phrase: "(mco serve) too"
                break
        if not words or words[0] not in COMMANDS:  # prose ("the auth file mco reads"), not a command line
            continue
        found.append((words, OPTION.findall(line)))
    return found


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_no_reference_outside_the_repository(doc: Path) -> None:
    text = doc.read_text()
    hits = [m.group(0) for m in OUTSIDE.finditer(text)]
    assert hits == [], f"{_rel(doc)} points outside the repository: {hits}"


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_relative_links_resolve(doc: Path) -> None:
    missing = []
    for target in LINK.findall(doc.read_text()):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        if not path.exists():
            missing.append(target)
    assert missing == [], f"{_rel(doc)} links to files that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_named_repository_paths_exist(doc: Path) -> None:
    missing = [path for path in REPO_PATH.findall(doc.read_text())
               if "<" not in path and "*" not in path and not (ROOT / path).exists()]
    assert missing == [], f"{_rel(doc)} names files that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_documented_commands_exist(doc: Path) -> None:
    wrong = []
    for words, options in _commands(doc.read_text()):
        parser = build_parser(words)
        path = ["mco"]
        for word in words:
            sub = _subcommands(parser).get(word)
            if sub is None:
                break
            parser, path = sub, [*path, word]
        known = _options(parser)
        wrong.extend(f"{' '.join(path)} {option}: no such option" for option in options if option not in known)
    assert wrong == [], f"{_rel(doc)}: " + "; ".join(wrong)


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("`mco render DIR --explain POOL`", [(["render"], ["--explain"])], id="inline"),
    pytest.param("ExecStart=/opt/mco/bin/mco serve /srv \\\n    --store /x \\\n    --listen off\n",
                 [(["serve"], ["--store", "--listen"])], id="continued-lines"),
    pytest.param("mco diff A B --store D | less --quit", [(["diff"], ["--store"])], id="pipe-ends-it"),
    pytest.param("podman run mco-server /cluster --tls-listen x", [], id="image-name-is-not-mco"),
    pytest.param("the auth file mco reads) and (mco serve) too", [(["serve"], [])], id="prose"),
])
def test_command_extraction(text: str, expected: list[tuple[list[str], list[str]]]) -> None:
    assert _commands(text) == expected
