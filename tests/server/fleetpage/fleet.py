"""A pool mid-rollout for the fleet page's tests, and the HTML checks every page must pass."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from html.parser import HTMLParser

import html5lib

from fleet.node_status import NodeStatus
from fleet.rendered import HistoryEntry, RenderedConfig
from fleet.store import Store
from tests.builders import rendered_config
from tests.server.helpers import SOURCES, ignition_config, publish

DEGRADED_MESSAGE = 'failed to apply: unit "demo.service" failed <script>alert(1)</script> & rolled back'
SECRET_CONTENT = "content%201"  # the percent-encoded contents of /etc/demo/file1.conf: never on a page
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass(frozen=True)
class Rollout:
    """The old and new targets of pool `worker`, and the reports stored."""

    old: RenderedConfig
    new: RenderedConfig
    nodes: tuple[NodeStatus, ...]


def mid_rollout(store: Store, *, done_old: int = 3, stamp: str = "2026-12-03T11:00:00Z") -> Rollout:
    """worker moves old -> new (kernel argument + a file): one updated, one working, one degraded, some waiting."""
    old = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=1))
    new = rendered_config(pool="worker", sources=SOURCES, config=ignition_config(files=2), kernel_arguments=("nosmt",))
    store.put_rendered(old)
    record = publish(store, new, max_unavailable=2)
    store.put_pool(replace(record, history=(HistoryEntry(old.name, "2026-12-01T09:00:00Z"),
                                            HistoryEntry(new.name, "2026-12-03T10:00:00Z"))))
    publish(store, rendered_config(pool="master", sources=SOURCES, config=ignition_config(files=1, extra={"passwd": {}})))
    nodes = [NodeStatus("worker-0", "worker", new.name, new.name, "Done", "", stamp),
             NodeStatus("worker-1", "worker", old.name, new.name, "Working", "draining", stamp),
             NodeStatus("worker-2", "worker", old.name, new.name, "Degraded", DEGRADED_MESSAGE, stamp)]
    nodes += [NodeStatus(f"worker-{3 + i}", "worker", old.name, old.name, "Done", "", stamp) for i in range(done_old)]
    for node in nodes:
        store.put_node_status(node)
    return Rollout(old, new, tuple(nodes))


class _Nesting(HTMLParser):
    """html.parser's view: every non-void element closed, in order (html5lib alone forgives some of this)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'} at {self.getpos()}")
        else:
            self.stack.pop()


def html_problems(text: str) -> list[str]:
    """Parse errors (html5lib, the HTML5 parsing algorithm) and nesting problems (html.parser)."""
    parser = html5lib.HTMLParser(tree=html5lib.getTreeBuilder("etree"))
    parser.parse(text)
    problems = [f"html5lib {pos}: {code} {data or ''}" for pos, code, data in parser.errors]
    nesting = _Nesting()
    nesting.feed(text)
    nesting.close()
    problems += nesting.problems + [f"unclosed <{t}>" for t in nesting.stack]
    if not text.startswith("<!DOCTYPE html>"):
        problems.append("no <!DOCTYPE html> first")
    return problems


_URL_ATTR = re.compile(r'\s(?:src|href|action)="([^"]*)"')


def external_urls(text: str) -> list[str]:
    """Every src/href/action that does not stay on this server."""
    return [u for u in _URL_ATTR.findall(text) if not u.startswith(("/", "?", "#")) or u.startswith("//")]
