"""Property: from any config to any other, one sync leaves exactly the new config's files on disk (contents
and modes), removes what left the config, and restores the files that were there before the applier."""

from __future__ import annotations

import json
import stat
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from applier.agent import Agent, AgentSettings
from applier.backends.none import NoBackend
from tests.applier.doubles import MemoryReporter, MemorySource, RecordingRunner
from tests.applier.helpers import file_entry, make_root
from tests.builders import rendered_config

POLICY = json.dumps({"files": [{"path": "/etc/h", "actions": [{"type": "None"}]}]})
PATHS = [f"/etc/h/{d}/{n}" for d in ("a", "b") for n in ("x.conf", "y.conf", "z")] + ["/etc/h/orig.conf"]
ORIGINAL = "shipped by the OS\n"

configs = st.dictionaries(st.sampled_from(PATHS),
                          st.tuples(st.text(alphabet="ab\n =%", max_size=12), st.sampled_from([0o644, 0o600, 0o755])),
                          max_size=len(PATHS))


def _rendered(i: int, files: dict) -> object:
    return rendered_config(f"c{i}", [file_entry(p, text, mode) for p, (text, mode) in sorted(files.items())],
                    annotations={"machineconfiguration.openshift.io/node-disruption-policy": POLICY})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(configs, min_size=2, max_size=4))
def test_any_sequence_of_configs_converges(sequence: list[dict]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = make_root(Path(tmp) / "root")
        (root / "etc/h").mkdir()
        (root / "etc/h/orig.conf").write_text(ORIGINAL)
        source = MemorySource()
        agent = Agent(AgentSettings(node="n1", root=root, durable=False), source=source,
                      reporter=MemoryReporter(), backend=NoBackend(), runner=RecordingRunner())
        for i, files in enumerate(sequence):
            source.config = _rendered(i, files)
            result = agent.sync()
            assert result.state == "Done", result.message
            for path in PATHS:
                target = root / path.lstrip("/")
                if path in files:
                    text, mode = files[path]
                    assert target.read_text() == text and stat.S_IMODE(target.stat().st_mode) == mode
                elif path == "/etc/h/orig.conf":
                    assert target.read_text() == ORIGINAL  # never managed yet, or restored
                else:
                    assert not target.exists(), path
