"""Drift noticed at once through inotify while the agent loops, what the watch covers, the stat cache of the
periodic check, and a hand edit made while a repair runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from applier.agent import Agent, AgentSettings
from applier.backends.none import NoBackend
from applier.drift import DriftChecker, watch_map
from applier.runner import SubprocessRunner
from applier.watch import Watcher
from tests.applier.doubles import MemoryReporter, MemorySource, RecordingRunner
from tests.applier.helpers import SERVICE, file_entry, make_root, unit
from tests.builders import rendered_config
from tests.tools import real_tool

POLICY = json.dumps({"files": [{"path": "/etc/w", "actions": [{"type": "None"}]}]})
CFG = rendered_config("w1", [file_entry("/etc/w/a.conf", "a\n"), file_entry("/etc/w/b.conf", "b\n")],
               annotations={"machineconfiguration.openshift.io/node-disruption-policy": POLICY})


def test_watcher_sees_a_watched_path_only(tmp_path: Path) -> None:
    (tmp_path / "etc/w").mkdir(parents=True)
    (tmp_path / "etc/w/a.conf").write_text("a\n")
    watcher = Watcher(tmp_path, ["/etc/w/a.conf"])
    try:
        assert watcher.active
        (tmp_path / "etc/w/unrelated").write_text("x")
        assert watcher.wait(0.2) == set()
        (tmp_path / "etc/w/a.conf").write_text("changed\n")
        assert watcher.wait(2.0) == {"/etc/w/a.conf"}
    finally:
        watcher.close()


def _verified(tmp_path: Path) -> tuple[Path, DriftChecker]:
    """A root holding CFG's files, and a checker that has verified them once."""
    root = make_root(tmp_path / "root")
    (root / "etc/w").mkdir()
    (root / "etc/w/a.conf").write_text("a\n")
    (root / "etc/w/b.conf").write_text("b\n")
    checker = DriftChecker(root, None)
    assert checker.check(CFG.spec.config) == ([], [], [])
    return root, checker


def test_stat_cache_skips_unchanged_files(tmp_path: Path) -> None:
    root, checker = _verified(tmp_path)
    assert len(checker._seen) == 2
    (root / "etc/w/b.conf").write_text("B\n")
    files, _, problems = checker.check(CFG.spec.config)
    assert files == ["/etc/w/b.conf"] and problems == ['content mismatch for file "/etc/w/b.conf"']


def test_loop_repairs_promptly(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    reporter = MemoryReporter()
    agent = Agent(AgentSettings(node="n1", root=root, interval=3600.0, durable=False),
                  source=MemorySource(CFG), reporter=reporter, backend=NoBackend(), runner=RecordingRunner())
    assert agent.sync().state == "Done"
    thread = threading.Thread(target=agent.run, daemon=True)
    thread.start()
    try:
        time.sleep(0.5)  # the loop's first sync is done and it waits on inotify
        (root / "etc/w/a.conf").write_text("hand edit\n")
        deadline = time.monotonic() + 60  # liveness only: the next periodic sync is an hour away
        while (root / "etc/w/a.conf").read_text() != "a\n":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        while reporter.reports[-1].message != "repaired drift: file /etc/w/a.conf":
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        agent.stop()
        thread.join(timeout=5)


def test_stop_ends_the_wait(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    agent = Agent(AgentSettings(node="n1", root=root, interval=3600.0, durable=False),
                  source=MemorySource(CFG), reporter=MemoryReporter(), backend=NoBackend(), runner=RecordingRunner())
    thread = threading.Thread(target=agent.run, daemon=True)
    thread.start()
    time.sleep(0.5)
    agent.stop()  # what SIGTERM does
    thread.join(timeout=60)  # liveness only: the wait it ends is an hour
    assert not thread.is_alive()


def test_stat_cache_sees_an_edit_with_its_mtime_put_back(tmp_path: Path) -> None:
    """Same size, mtime restored (`touch -r`): ctime still moves, so the cached verification is not trusted."""
    root, checker = _verified(tmp_path)
    before = (root / "etc/w/a.conf").stat()
    time.sleep(0.01)
    (root / "etc/w/a.conf").write_text("A\n")
    os.utime(root / "etc/w/a.conf", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert checker.check(CFG.spec.config)[0] == ["/etc/w/a.conf"]


WATCHED = ["/etc/w/a.conf", "/etc/systemd/system/multi-user.target.wants/x.service"]
HAND_CHANGES = [
    ("edit", lambda r: (r / "etc/w/a.conf").write_text("edited\n"), {"/etc/w/a.conf"}),
    ("chmod", lambda r: os.chmod(r / "etc/w/a.conf", 0o600), {"/etc/w/a.conf"}),
    ("delete", lambda r: (r / "etc/w/a.conf").unlink(), {"/etc/w/a.conf"}),
    ("parent-removed", lambda r: shutil.rmtree(r / "etc/w"), {"/etc/w/a.conf"}),
    ("wants-link-removed", lambda r: (r / WATCHED[1].lstrip("/")).unlink(), {WATCHED[1]}),
    ("neighbour", lambda r: (r / "etc/w/other").write_text("x"), set()),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in HAND_CHANGES], ids=[c[0] for c in HAND_CHANGES])
def test_watcher_names_what_changed(tmp_path: Path, change, expected: set[str]) -> None:
    (tmp_path / "etc/w").mkdir(parents=True)
    (tmp_path / "etc/w/a.conf").write_text("a\n")
    wants = tmp_path / WATCHED[1].lstrip("/")
    wants.parent.mkdir(parents=True)
    wants.symlink_to("/etc/systemd/system/x.service")
    watcher = Watcher(tmp_path, WATCHED)
    try:
        assert watcher.active
        change(tmp_path)
        assert watcher.wait(0.5 if not expected else 5.0) == expected
    finally:
        watcher.close()


def test_watch_covers_the_links_a_units_install_section_names_before_their_directory_exists(tmp_path: Path) -> None:
    """`systemctl disable` removes the `*.wants/` directory it empties: its links stay watched through its parent."""
    config = {"ignition": {"version": "3.4.0"}, "systemd": {"units": [
        unit("a.service", SERVICE.format(name="a") + "RequiredBy=b.target c.target\n", enabled=True),
        unit("vendor.service", enabled=True),
        unit("plain.service", SERVICE.format(name="plain"))]}}
    vendor = tmp_path / "usr/lib/systemd/system/vendor.service"
    vendor.parent.mkdir(parents=True)
    vendor.write_text(SERVICE.format(name="vendor").replace("multi-user", "graphical"))
    (tmp_path / "etc/systemd/system").mkdir(parents=True)
    links = {p for p, (kind, _) in watch_map(tmp_path, config).items() if ".wants/" in p or ".requires/" in p}
    assert links == {"/etc/systemd/system/multi-user.target.wants/a.service",
                     "/etc/systemd/system/b.target.requires/a.service",
                     "/etc/systemd/system/c.target.requires/a.service",
                     "/etc/systemd/system/graphical.target.wants/vendor.service"}
    watcher = Watcher(tmp_path, watch_map(tmp_path, config))
    try:
        link = tmp_path / "etc/systemd/system/multi-user.target.wants/a.service"
        link.parent.mkdir(parents=True)
        link.symlink_to("/etc/systemd/system/a.service")
        assert watcher.wait(5.0) == {"/etc/systemd/system/multi-user.target.wants/a.service"}
        assert watcher.stale  # the new directory is watched once the watch is set up again
    finally:
        watcher.close()


class EditingRunner(SubprocessRunner):
    """The real commands; the first `systemctl enable` (the unit half of a repair) is met by a hand edit of a file
    the same repair has just restored."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.edits = 0

    def run(self, args, *, timeout=None, input=None):
        result = super().run(args, timeout=timeout, input=input)
        if "enable" in args and self.edits == 0:
            self.edits += 1
            self.path.write_text("edited during the repair\n")
        return result


def test_edit_during_a_repair_is_repaired_in_the_next_pass(tmp_path: Path) -> None:
    real_tool("systemctl")
    root = make_root(tmp_path / "root")
    policy = json.dumps({"files": [{"path": "/etc/w", "actions": [{"type": "None"}]}],
                         "units": [{"name": "x.service", "actions": [{"type": "None"}]}]})
    cfg = rendered_config("w2", [file_entry("/etc/w/a.conf", "a\n")], [unit("x.service", SERVICE.format(name="x"), True)],
                   annotations={"machineconfiguration.openshift.io/node-disruption-policy": policy})
    runner = EditingRunner(root / "etc/w/a.conf")
    agent = Agent(AgentSettings(node="n1", root=root, durable=False), source=MemorySource(cfg),
                  reporter=MemoryReporter(), backend=NoBackend(), runner=runner)
    assert agent.sync().state == "Done"
    runner.edits = 0
    (root / "etc/w/a.conf").write_text("hand edit\n")
    subprocess.run(["systemctl", f"--root={root}", "disable", "x.service"], check=True, capture_output=True)
    result = agent.sync()
    assert (result.state, result.message) == ("Done", "repaired drift: file /etc/w/a.conf, unit x.service")
    assert runner.edits == 1 and (root / "etc/w/a.conf").read_text() == "a\n"
