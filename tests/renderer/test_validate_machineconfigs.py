"""Each input MachineConfig's refusals (MCO pkg/controller/common/helpers.go: ValidateMachineConfig), table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from fleet.rendered import SUPPORTED_EXTENSIONS, MachineConfigSpec
from renderer.model import ROLE_LABEL, MachineConfig, Origin
from renderer.validate_machineconfigs import check_machine_config


def _mc(storage: dict[str, Any]) -> MachineConfig:
    return MachineConfig(name="50-worker-modes", labels={ROLE_LABEL: "worker"}, annotations={},
                         spec=MachineConfigSpec(config={"ignition": {"version": "3.5.0"}, "storage": storage}),
                         has_config=True, origin=Origin("manifests/50-worker-modes.yaml", 1))


# MCO validateIgn3FileModes / validateIgn2FileModes (pkg/controller/common/helpers.go, later ign_helpers.go) loop
# over `cfg.Storage.Files` only: a file mode with setuid, setgid or sticky bits is refused ("invalid mode %#o for
# %s, cannot exceed %#o"); a directory's mode is left to Ignition's own validation, which allows them (a shared
# directory with the setgid or sticky bit, 02775 or 01777, is a common sight).
MODE_CASES = [
    ({"files": [{"path": "/usr/local/bin/x", "mode": 0o4755, "contents": {"source": "data:,x"}}]},
     "invalid mode 04755 for /usr/local/bin/x, cannot exceed 0777", "file-setuid-refused"),
    ({"files": [{"path": "/etc/x", "mode": 0o1644, "contents": {"source": "data:,x"}}]},
     "invalid mode 01644 for /etc/x, cannot exceed 0777", "file-sticky-refused"),
    ({"files": [{"path": "/etc/x", "mode": 0o755, "contents": {"source": "data:,x"}}]}, None, "file-0755-ok"),
    ({"directories": [{"path": "/var/lib/shared", "mode": 0o2775}]}, None, "directory-setgid-ok"),
    ({"directories": [{"path": "/var/tmp/scratch", "mode": 0o1777}]}, None, "directory-sticky-ok"),
    ({"directories": [{"path": "/var/lib/a", "mode": 0o755}, {"path": "/var/tmp/b", "mode": 0o1777}],
      "files": [{"path": "/etc/x", "mode": 0o6755, "contents": {"source": "data:,x"}}]},
     "invalid mode 06755 for /etc/x, cannot exceed 0777", "only-the-file-refused"),
]


@pytest.mark.parametrize(("storage", "message"), [c[:2] for c in MODE_CASES], ids=[c[2] for c in MODE_CASES])
def test_special_mode_bits_refused_on_files_only(storage: dict[str, Any], message: str | None) -> None:
    problems = check_machine_config(_mc(storage), allowed_extensions=tuple(SUPPORTED_EXTENSIONS)).problems
    errors = [p.message for p in problems if p.severity == "error"]
    if message is None:
        assert errors == []
    else:
        assert len(errors) == 1 and message in errors[0], errors
