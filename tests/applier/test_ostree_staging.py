"""The ostree backend on a booted ostree system (tests/applier/booted_lab.py: real ostree, the deployment chrooted
into as `/`): before the slot the OS image's deployment is staged, locked, so a shutdown then finalises nothing and
the old deployment boots again; in the drained window `stage` only unlocks it (no `ostree admin deploy` there), and
the reboot's finalisation merges the /etc the window wrote into it and makes it the default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.applier.booted_lab import make_booted_sysroot, run_booted
from tests.applier.sysroot import unlock

pytestmark = pytest.mark.realtool

STEPS = r'''
import json, subprocess
from pathlib import Path
from applier.backends.ostree import STAGED_LOCK, OstreeBackend
from applier.plan import make_plan
from applier.runner import SubprocessRunner
from tests.builders import rendered_config

class Recording(SubprocessRunner):
    calls = []
    def run(self, args, **kwargs):
        self.calls.append(list(args))
        return super().run(args, **kwargs)

def status():
    return subprocess.run(["ostree", "admin", "status"], capture_output=True, text=True, check=True).stdout

def shutdown():  # what ostree-finalize-staged.service runs at shutdown
    subprocess.run(["ostree", "admin", "finalize-staged"], capture_output=True, text=True, check=True)

runner = Recording()
backend = OstreeBackend(runner=runner, sysroot=Path("/"))
old = rendered_config("v1", []).spec
new = rendered_config("v2", [], os_image_url="ostree:myos/v2").spec
out = {"stages": backend.stages(), "booted": backend.booted().id}
out["note"] = backend.prefetch(new, old)
out["after_prefetch"] = status()
out["locked"] = STAGED_LOCK.exists()
out["again"] = backend.prefetch(new, old)  # the update's own pull, before its drain: staged already
shutdown()  # a reboot before the slot
out["after_early_shutdown"] = status()
Path("/etc/app.conf").write_text("written in the drained window\n")
runner.calls.clear()
staged = backend.stage(make_plan(old, new).diff, old, new)
out["window_commands"] = runner.calls
out["staged"] = staged
out["locked_after_stage"] = STAGED_LOCK.exists()
shutdown()  # the reboot of the slot
out["after_shutdown"] = status()
out["default"] = backend.deployments()[0].id
out["merged_etc"] = Path(f"/ostree/deploy/myos/deploy/{staged['id']}/etc/app.conf").read_text()
print(json.dumps(out))
'''


def test_the_deployment_is_staged_locked_before_the_slot_and_finalised_by_the_reboot(tmp_path: Path) -> None:
    sysroot = make_booted_sysroot(tmp_path)
    try:
        ran = run_booted(sysroot, STEPS)
        assert ran.returncode == 0, ran.stderr
        out = json.loads(ran.stdout.splitlines()[-1])
    finally:
        unlock(sysroot)
    assert out["stages"] and out["locked"]
    assert out["note"].startswith("deployment ") and "staged before the drain, locked" in out["note"]
    assert "(staged)" in out["after_prefetch"]
    assert out["again"] == ""  # nothing new to say: no second image-staged phase in the update
    # a shutdown before the slot finalises nothing: still staged, not pending (the old deployment boots again)
    assert "(staged)" in out["after_early_shutdown"] and "(pending)" not in out["after_early_shutdown"]
    # the drained window: no deploy (no checkout), only the lock removed
    assert not any(c[:3] == ["ostree", "admin", "deploy"] for c in out["window_commands"]), out["window_commands"]
    assert not out["locked_after_stage"]
    assert out["staged"]["previous"] == out["booted"] and out["staged"]["id"] != out["booted"]
    # the reboot's finalisation: the staged deployment is the default, with the /etc written in the window
    assert out["default"] == out["staged"]["id"]
    assert "(pending)" in out["after_shutdown"]
    assert out["merged_etc"] == "written in the drained window\n"
