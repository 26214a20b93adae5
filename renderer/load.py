"""Reading manifest files: YAML (one or many documents) or JSON, keeping where every value came from.

First stage of the flow (load -> model -> select -> order -> merge -> validate -> name -> store).

YAML is read with PyYAML's safe loader, which implements YAML 1.1: `on`/`yes`/`no` become booleans,
`0644` is the octal integer 420, `1:30` is a base-60 integer. That is what Kubernetes' own YAML reader
does too, but it surprises people, so when a value of the wrong type is reported, `Document.parsed_as`
says what the text was read as. Documents are composed (`yaml.compose_all`) so that every value keeps
its line:col; duplicate mapping keys are errors, as they are for `kubectl`. A file whose first
character is `{` is JSON and is read with `json` (much faster); its positions are computed only when an
error needs them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from renderer.errors import RendererError
from renderer.problems import Path, Problem

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SCALARS = yaml.constructor.SafeConstructor()
_MAX_DEPTH = 200
_SURPRISING_BOOL = {"yes", "no", "on", "off", "y", "n"}


class LoadProblem(RendererError):
    """Internal: a problem found while building a document; carries a Problem."""

    def __init__(self, problem: Problem) -> None:
        super().__init__("", problem.format())
        self.problem = problem


@dataclass
class Document:
    """One YAML/JSON document of a manifest file: the plain data plus a way back to line:col."""

    source: str                 # path relative to the cluster directory, e.g. "manifests/50-chrony.yaml"
    index: int                  # 0-based position of the document in its file
    data: Any
    text: str = field(default="", repr=False)
    _node: Node | None = field(default=None, repr=False)
    # the first line of each entry key value (path, name, device) in `text`, once provenance asked
    # (renderer/provenance.py): kept with the document, so it lives exactly as long as the document
    key_lines: dict[str, int] | None = field(default=None, repr=False, compare=False)

    def node_at(self, path: Sequence[str | int]) -> Node | None:
        """The deepest node on `path` that exists (the document root if nothing matches)."""
        node = self._root()
        if node is None:
            return None
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
        return node

    def exact_node(self, path: Sequence[str | int]) -> Node | None:
        """The node at exactly `path`, or None."""
        node = self._root()
        for part in path:
            if node is None:
                return None
            node = _child(node, part)
        return node

    def locate(self, path: Sequence[str | int]) -> tuple[int, int] | None:
        """1-based (line, col) of the value at `path`, or of its nearest existing ancestor."""
        node = self.node_at(path)
        if node is None:
            return None
        return node.start_mark.line + 1, node.start_mark.column + 1

    def first_line(self) -> int | None:
        """1-based line where the document starts (cheap: no YAML composition for JSON documents)."""
        if self._node is not None:
            return int(self._node.start_mark.line) + 1
        if self.text:
            stripped = self.text.lstrip()
            return self.text.count("\n", 0, len(self.text) - len(stripped)) + 1
        return None

    def parsed_as(self, path: Sequence[str | int]) -> str:
        """For a scalar that YAML 1.1 read surprisingly: `YAML 1.1 read 'on' as the boolean true`; else ""."""
        node = self.exact_node(path)
        if not isinstance(node, ScalarNode) or node.style not in (None, ""):
            return ""
        return surprise(node)

    def problem(self, code: str, path: Path, message: str, *, severity: str = "error") -> Problem:
        """A Problem at `path` in this document, with line:col filled in."""
        where = self.locate(path)
        line, col = where if where else (None, None)
        return Problem(code=code, message=message, source=self.source, path=tuple(path),
                       line=line, col=col, severity=severity)

    def _root(self) -> Node | None:
        if self._node is None and self.text:
            try:
                nodes = list(yaml.compose_all(self.text, Loader=_Loader))
            except yaml.YAMLError:
                return None
            if self.index < len(nodes):
                self._node = nodes[self.index]
        return self._node


def _child(node: Node, part: str | int) -> Node | None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == str(part):
                return value
        return None
    if isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]
    return None


def surprise(node: ScalarNode) -> str:
    """Explain a plain scalar that YAML 1.1 resolved to something other than the string people expect."""
    text = node.value
    tag = node.tag.rsplit(":", 1)[-1]
    if tag == "bool" and text.lower() in _SURPRISING_BOOL:
        return f"YAML 1.1 read {text!r} as the boolean {str(_SCALARS.construct_object(node)).lower()}; quote it"
    if tag == "int":
        value = _SCALARS.construct_object(node)
        if text.lstrip("+-").startswith("0") and text.strip("+-") not in ("0",) and not text.lower().startswith(("0x", "-0x")):
            return f"YAML 1.1 read {text!r} as the octal integer {value} (decimal)"
        if ":" in text:
            return f"YAML 1.1 read {text!r} as the base-60 integer {value}"
    if tag == "str" and len(text) > 2 and text[:2].lower() == "0o" and all(c in "01234567" for c in text[2:]):
        return f"YAML 1.1 has no 0o prefix and read {text!r} as a string; write 0{text[2:]}"
    if tag == "null" and text in ("", "~"):
        return "YAML read an empty value as null"
    if tag == "float" and ":" in text:
        return f"YAML 1.1 read {text!r} as a base-60 number"
    return ""


def _build(node: Node, doc_source: str, path: Path, depth: int = 0) -> Any:
    """Plain Python data from a composed node; duplicate keys and unsupported YAML are LoadProblems."""
    if depth > _MAX_DEPTH:
        raise LoadProblem(_node_problem("yaml-depth", "document nested too deeply (recursive alias?)",
                                        doc_source, path, node))
    if isinstance(node, ScalarNode):
        try:
            return _SCALARS.construct_object(node)
        except yaml.YAMLError as exc:
            raise LoadProblem(_node_problem("yaml-value", f"cannot read value: {exc}", doc_source, path, node)) from exc
    if isinstance(node, SequenceNode):
        return [_build(child, doc_source, (*path, i), depth + 1) for i, child in enumerate(node.value)]
    if isinstance(node, MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise LoadProblem(_node_problem("yaml-merge-key", "YAML merge keys (<<) are not supported",
                                                doc_source, path, key_node))
            key = _build(key_node, doc_source, path, depth + 1)
            if isinstance(key, (list, dict)):
                raise LoadProblem(_node_problem("yaml-key", "mapping keys must be scalars", doc_source, path, key_node))
            if not isinstance(key, str):
                key = str(key) if not isinstance(key, bool) else str(key).lower()
            if key in out:
                raise LoadProblem(_node_problem("duplicate", f"duplicate key {key!r}", doc_source, (*path, key),
                                                key_node))
            out[key] = _build(value_node, doc_source, (*path, key), depth + 1)
        return out
    raise LoadProblem(_node_problem("yaml-node", "unsupported YAML node", doc_source, path, node))


def _node_problem(code: str, message: str, source: str, path: Path, node: Node) -> Problem:
    return Problem(code=code, message=message, source=source, path=path,
                   line=node.start_mark.line + 1, col=node.start_mark.column + 1)


def _is_json(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith("{")


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of a JSON manifest; a repeated key is refused (the first one repeated is named)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise _DuplicateJSONKey(key)
            seen.add(key)
    return out


class _DuplicateJSONKey(RendererError):
    """Raised out of `json.loads` by the pairs hook; turned into a `duplicate` problem at once."""

    def __init__(self, key: str) -> None:
        super().__init__("", f"duplicate key {key!r}")
        self.key = key


# json's reader with the duplicate check, made once (json.loads with a hook builds a decoder per call)
_JSON_WITH_DUPLICATE_CHECK = json.JSONDecoder(object_pairs_hook=_json_pairs)


def load_text(text: str, source: str) -> tuple[list[Document], list[Problem]]:
    """Every document of a manifest file's text; a file with any syntax problem yields no documents."""
    if _is_json(text):
        try:
            data = _JSON_WITH_DUPLICATE_CHECK.decode(text)
        except _DuplicateJSONKey as exc:
            where = _find_duplicate(text, exc.key)
            line, col = where if where else (None, None)
            return [], [Problem("duplicate", f"duplicate key {exc.key!r}", source, (), line, col)]
        except ValueError as exc:
            err = exc if isinstance(exc, json.JSONDecodeError) else None
            json_problem = Problem("json-syntax", f"invalid JSON: {getattr(err, 'msg', exc)}", source, (),
                                   getattr(err, "lineno", None), getattr(err, "colno", None))
            if source.endswith(".json"):
                return [], [json_problem]
            docs, problems = _load_yaml(text, source)  # a YAML flow mapping such as `{a: 1}` is not JSON
            return (docs, problems) if not any(p.code == "yaml-syntax" for p in problems) else ([], [json_problem])
        return [Document(source=source, index=0, data=data, text=text)], []
    return _load_yaml(text, source)


def _load_yaml(text: str, source: str) -> tuple[list[Document], list[Problem]]:
    """Every YAML document of `text`, composed so that positions are kept."""
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        return [], [Problem("yaml-syntax", f"invalid YAML: {exc.problem or exc}", source, (), line, col)]
    except yaml.YAMLError as exc:
        return [], [Problem("yaml-syntax", f"invalid YAML: {exc}", source)]
    docs: list[Document] = []
    problems: list[Problem] = []
    for index, node in enumerate(n for n in nodes if n is not None):
        try:
            data = _build(node, source, ())
        except LoadProblem as exc:
            problems.append(exc.problem)
            continue
        docs.append(Document(source=source, index=index, data=data, text=text, _node=node))
    return docs, problems


def _find_duplicate(text: str, key: str) -> tuple[int, int] | None:
    """Line:col of the second occurrence of a JSON key (best effort, for the error message)."""
    needle = json.dumps(key) + ":"
    first = text.find(needle)
    second = text.find(needle, first + 1) if first >= 0 else -1
    if second < 0:
        needle = json.dumps(key)
        first = text.find(needle)
        second = text.find(needle, first + 1) if first >= 0 else -1
    if second < 0:
        return None
    line = text.count("\n", 0, second) + 1
    col = second - (text.rfind("\n", 0, second) + 1) + 1
    return line, col


def load_file(path: FsPath | str, source: str) -> tuple[list[Document], list[Problem]]:
    """Every document of a manifest file on disk."""
    try:
        data = _read_bytes(path)
        text = data.decode("utf-8")
        if "\r" in text:  # what read_text's universal newlines do
            text = text.replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        return [], [Problem("encoding", f"not UTF-8 text: {exc.reason} at byte {exc.start}", source)]
    except OSError as exc:
        return [], [Problem("io", f"cannot read: {exc.strerror or exc}", source)]
    return load_text(text, source)


def _read_bytes(path: FsPath | str) -> bytes:
    """The whole content of the file at `path`, by os.open/os.read/os.close: no file object is built, which
    halves the cost per small file against open(..., "rb").read() (1,000 manifests: ~8.5 -> ~4.7 ms CPU).

    Reads until os.read returns b"" (end of file), as FileIO.readall does, so a short read (a pipe, a
    file growing) never cuts the content; errors are the same OSErrors (a directory: EISDIR on read)."""
    fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    try:
        data = os.read(fd, _FIRST_READ)
        if not data:
            return data
        chunks = [data]
        while chunk := os.read(fd, _NEXT_READ):
            chunks.append(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)  # as open() does: no descriptor leaks into a child process
_FIRST_READ = 1 << 16  # most manifests fit; a bigger buffer costs more to allocate than a second read
_NEXT_READ = 1 << 20


MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
BUTANE_SUFFIXES = (".bu",)


def manifest_files(directory: FsPath) -> Iterator[tuple[str, str]]:
    """(path, path relative to `directory` with `/`) of the manifest and Butane files under `directory`,
    recursively, sorted by relative path; dot files and dot directories are skipped. Paths are strings:
    a thousand pathlib objects cost more than reading the files they name."""
    if not directory.is_dir():
        return
    found: list[str] = []
    suffixes = MANIFEST_SUFFIXES + BUTANE_SUFFIXES
    for top, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        prefix = os.path.relpath(top, directory)
        prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
        found.extend(prefix + f for f in files if not f.startswith(".") and f.endswith(suffixes))
    base = os.fspath(directory)
    for rel in sorted(found):
        yield f"{base}/{rel}", rel
