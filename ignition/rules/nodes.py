"""Files, directories and links (Ignition `types/node.go`, `file.go`, `directory.go`, `link.go`, `storage.go`)."""

from __future__ import annotations

from collections import Counter
from itertools import compress, repeat
from operator import is_
from typing import Any

from ignition.rules.context import Ctx
from ignition.rules.paths import check_path, go_clean, go_join
from ignition.rules.resources import check_resource
from ignition.rules.urls import all_common_data_urls, check_url_nil_ok

SPECIAL_BITS = "setuid/setgid/sticky bits are not supported or functional in spec versions older than 3.6.0"


def _check_owner(owner: Any) -> str | None:
    if owner and owner.get("id") is not None and owner.get("name"):
        return "cannot set both id and name"
    return None


_OWNERS = frozenset(("user", "group"))


def _check_node(kind: str, i: int, node: dict[str, Any], ctx: Ctx) -> None:
    # paths are built only when there is something to report: this runs once per file of every config
    path = node.get("path", "")
    # check_path finds nothing in an absolute path with no "//", "/." or trailing "/" (nearly every path)
    if path[:1] != "/" or "//" in path or "/." in path or path[-1:] == "/":
        ctx.error(("storage", kind, i, "path"), check_path(path))
    if not _OWNERS.isdisjoint(node):
        user = node.get("user")
        if user:
            ctx.error(("storage", kind, i, "user"), _check_owner(user))
        group = node.get("group")
        if group:
            ctx.error(("storage", kind, i, "group"), _check_owner(group))
    if kind != "links":
        mode = node.get("mode")
        if mode is not None:
            if mode < 0 or mode > 0o7777:
                ctx.error(("storage", kind, i, "mode"), "illegal file mode")
            # Go tests the bits of the (uint32) mode whatever its range: -1 and 8191 get both entries
            if mode & 0o7000 and not ctx.since("3.6.0"):
                ctx.warn(("storage", kind, i, "mode"), SPECIAL_BITS)


_FILE_KEYS_WITHOUT_RULES = frozenset(("path", "mode", "overwrite", "contents"))


def _paths_clean(paths: list[str]) -> bool:
    """True when every path is absolute with no `//`, `/.` or trailing `/` (check_path finds nothing), tested on
    the paths joined by newlines (a path holding a newline makes the counts disagree: the answer is then False)."""
    joined = "\n".join(paths)
    n = len(paths) - 1
    return (joined[:1] == "/" and joined.count("\n") == n and joined.count("\n/") == n and "//" not in joined
            and "/." not in joined and "/\n" not in joined and joined[-1:] != "/")


def _files_quiet(files: list[dict[str, Any]], ctx: Ctx) -> bool:
    """True when File.Validate finds nothing in any of `files` (a normalized list: dicts of well-typed values),
    decided for the whole list by tests that run in C, no Python code per file: only the path, mode,
    overwrite and contents keys; clean paths; modes without special bits (3.6.0: at most 07777); contents
    absent, empty or a lone common data URL source (rules/urls.py), and present whenever `overwrite` is true.
    False says nothing: check_files then checks file by file."""
    if not _FILE_KEYS_WITHOUT_RULES.issuperset(set().union(*files)):
        return False
    if not _paths_clean(list(map(dict.get, files, repeat("path"), repeat("")))):
        return False
    modes: set[Any] = set(map(dict.get, files, repeat("mode")))
    modes.discard(None)
    if modes and (min(modes) < 0 or max(modes) > (0o7777 if ctx.since("3.6.0") else 0o777)):
        return False
    contents = list(map(dict.get, files, repeat("contents")))
    # overwrite: true needs a source; a non-empty contents has one (below)
    if not all(compress(contents, map(is_, map(dict.get, files, repeat("overwrite")), repeat(True)))):
        return False
    given = list(filter(None, contents))
    if not given:
        return True
    if max(map(len, given)) != 1:
        return False
    sources: list[Any] = list(map(dict.get, given, repeat("source")))
    return None not in sources and all_common_data_urls(sources)


def check_files(files: list[dict[str, Any]], ctx: Ctx) -> None:
    """File.Validate for each file: node rules, mode, overwrite, contents and append resources."""
    if _files_quiet(files, ctx):
        return
    for i, f in enumerate(files):
        _check_node("files", i, f, ctx)
        contents = f.get("contents")
        if f.get("overwrite") is True and (contents is None or contents.get("source") is None):
            ctx.error(("storage", "files", i, "overwrite"), "overwrite must be false if source is unspecified")
        if contents:
            if len(contents) == 1 and type(contents.get("source")) is str:
                # the common shape, a lone source: check_resource reduces to the URL rule
                problem = check_url_nil_ok(contents["source"], ctx.version)
                if problem is not None:
                    ctx.error(("storage", "files", i, "contents", "source"), problem)
            else:
                check_resource(contents, ("storage", "files", i, "contents"), ctx)
        for j, frag in enumerate(f.get("append") or ()):
            check_resource(frag, ("storage", "files", i, "append", j), ctx)


def check_directories(dirs: list[dict[str, Any]], ctx: Ctx) -> None:
    """Directory.Validate for each directory."""
    for i, d in enumerate(dirs):
        _check_node("directories", i, d, ctx)


def check_links(links: list[dict[str, Any]], ctx: Ctx) -> None:
    """Link.Validate for each link (the target rules live in `check_storage_links`)."""
    for i, link in enumerate(links):
        _check_node("links", i, link, ctx)


def _through_link(paths: list[str], link_counts: Counter[str]) -> list[tuple[int, int]]:
    """(index, how many links) for every path that starts with `<link path>/` (Go tests every link)."""
    hits: list[tuple[int, int]] = []
    if not link_counts:
        return hits
    for i, p in enumerate(paths):
        n = 0
        start = 0
        while True:
            j = p.find("/", start)
            if j < 0:
                break
            n += link_counts.get(p[:j], 0)
            start = j + 1
        if n:
            hits.append((i, n))
    return hits


def check_storage_links(storage: dict[str, Any], ctx: Ctx) -> None:
    """Storage.Validate: paths through links, link targets, hard links to directories, hard-link owners."""
    links = storage.get("links") or []
    if not links:
        return  # every rule here is about links
    dirs = storage.get("directories") or []
    files = storage.get("files") or []
    counts: Counter[str] = Counter(link.get("path", "") for link in links)
    for i, n in _through_link([d.get("path", "") for d in dirs], counts):
        for _ in range(n):
            ctx.error(("storage", "directories", i), "directory path includes link in config")
    for i, n in _through_link([f.get("path", "") for f in files], counts):
        for _ in range(n):
            ctx.error(("storage", "files", i), "file path includes link in config")
    link_paths = [link.get("path", "") for link in links]
    through = dict(_through_link(link_paths, counts))
    dir_paths = Counter(d.get("path", "") for d in dirs)
    for i, link in enumerate(links):
        for _ in range(through.get(i, 0)):
            ctx.error(("storage", "links", i), "link path includes link in config")
        target = link.get("target")
        if ctx.since("3.3.0") and not target:
            ctx.error(("storage", "links", i, "target"), "link target is required")
            continue
        if link.get("hard") is not True:
            continue
        target = target or ""
        resolved = go_clean(target)
        if not resolved.startswith("/"):
            resolved = go_join(link.get("path", ""), target)
        for _ in range(dir_paths.get(resolved, 0)):
            ctx.error(("storage", "links", i), "hard link target is a directory")
        for owner in ("user", "group"):
            o = link.get(owner) or {}
            for key in ("id", "name"):
                if key in o:
                    ctx.warn(("storage", "links", i, owner, key), "user/group ignored for hard link")
