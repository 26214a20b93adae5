"""Drift noticed at once through inotify while the agent loops, and the stat cache of the periodic check."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from applier.agent import Agent, AgentSettings
from applier.backends.none import NoBackend
from applier.drift import DriftChecker, Watcher
from applier.fetch import MemorySource
from applier.report import MemoryReporter
from applier.runner import RecordingRunner
from tests.applier.helpers import file_entry, make_root, rendered

POLICY = json.dumps({"files": [{"path": "/etc/w", "actions": [{"type": "None"}]}]})
CFG = rendered("w1", [file_entry("/etc/w/a.conf", "a\n"), file_entry("/etc/w/b.conf", "b\n")],
               annotations={"machineconfiguration.openshift.io/node-disruption-policy": POLICY})


def test_watcher_sees_a_watched_path_only(tmp_path: Path) -> None:
    (tmp_path / "etc/w").mkdir(parents=True)
    (tmp_path / "etc/w/a.conf").write_text("a\n")
    watcher = Watcher(tmp_path, ["/etc/w/a.conf"])
    try:
        assert watcher.active
        (tmp_path / "etc/w/unrelated").write_text("x")
        assert watcher.wait(0.2) is False
        (tmp_path / "etc/w/a.conf").write_text("changed\n")
        assert watcher.wait(2.0) is True
    finally:
        watcher.close()


def test_stat_cache_skips_unchanged_files(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    (root / "etc/w").mkdir()
    (root / "etc/w/a.conf").write_text("a\n")
    (root / "etc/w/b.conf").write_text("b\n")
    checker = DriftChecker(root, None)
    assert checker.check(CFG.spec.config) == ([], [], [])
    assert len(checker._seen) == 2
    (root / "etc/w/b.conf").write_text("B\n")
    files, _, problems = checker.check(CFG.spec.config)
    assert files == ["/etc/w/b.conf"] and problems == ['content mismatch for file "/etc/w/b.conf"']


def test_loop_repairs_promptly(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    agent = Agent(AgentSettings(node="n1", root=root, interval=30.0, durable=False),
                  source=MemorySource(CFG), reporter=MemoryReporter(), backend=NoBackend(), runner=RecordingRunner())
    assert agent.sync().state == "Done"
    results: list = []
    thread = threading.Thread(target=lambda: results.append(agent.run(max_syncs=2)), daemon=True)
    start = time.monotonic()
    thread.start()
    time.sleep(0.5)  # the loop's first sync is done and it waits on inotify
    (root / "etc/w/a.conf").write_text("hand edit\n")
    thread.join(timeout=10)
    assert not thread.is_alive() and time.monotonic() - start < 10  # far less than the 30 s interval
    assert results[0].message == "repaired drift: file /etc/w/a.conf"
    assert (root / "etc/w/a.conf").read_text() == "a\n"


def test_stop_ends_the_wait_quickly(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    agent = Agent(AgentSettings(node="n1", root=root, interval=60.0, durable=False),
                  source=MemorySource(CFG), reporter=MemoryReporter(), backend=NoBackend(), runner=RecordingRunner())
    thread = threading.Thread(target=agent.run, daemon=True)
    thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    agent.stop()  # what SIGTERM does
    thread.join(timeout=5)
    assert not thread.is_alive() and time.monotonic() - started < 2
