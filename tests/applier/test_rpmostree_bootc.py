"""rpm-ostree and bootc backends: exact commands, and parsing of documented `status --json` samples.

The samples in fixtures/ are recorded outputs from coreos/zincati and containers/bootc (see fixtures/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from applier.backends.bootc import BootcBackend
from applier.backends.bootc import parse_status as bootc_status
from applier.backends.rpmostree import RpmOstreeBackend
from applier.backends.rpmostree import parse_status as rpm_status
from applier.errors import PermanentError
from applier.runner import Result
from fleet.diff import diff_rendered
from fleet.rendered import SUPPORTED_EXTENSIONS, MachineConfigSpec
from tests.applier.doubles import RecordingRunner

FIX = Path(__file__).parent / "fixtures"


def _spec(**kw) -> MachineConfigSpec:
    return MachineConfigSpec(config={"ignition": {"version": "3.4.0"}}, **kw)


def test_rpm_ostree_staged_sample() -> None:
    deps = rpm_status((FIX / "rpm-ostree-staged.json").read_text())
    assert [(d.staged, d.booted, d.checksum[:8]) for d in deps] == [(True, False, "967b7b8d"), (False, True, "01f074cc")]
    assert deps[1].id == "fedora-coreos-01f074cc6cd88d8d2b43f821da692f2367c101eb4377802cb35092bde0ef02f7.0"


def test_rpm_ostree_oci_sample() -> None:
    (dep,) = rpm_status((FIX / "rpm-ostree-oci-status.json").read_text())
    assert dep.booted and dep.image == ("quay.io/fedora/fedora-coreos@sha256:"
                                        "c4a15145a232d882ccf2ed32d22c06c01a7cf62317eb966a98340ae4bd56dfa6")
    assert dep.digest.startswith("sha256:c4a15145")


COMMANDS = [
    ("image", _spec(), _spec(os_image_url="q.io/os@sha256:1"),
     [["rpm-ostree", "cleanup", "-p"],
      ["rpm-ostree", "rebase", "--experimental", "ostree-unverified-registry:q.io/os@sha256:1"]]),
    ("kargs", _spec(kernel_arguments=("a=1", "b")), _spec(kernel_arguments=("b", "c d")),
     [["rpm-ostree", "cleanup", "-p"],
      ["rpm-ostree", "kargs", "--delete=a=1", "--delete=b", "--append=b", "--append=c", "--append=d"]]),
    ("realtime", _spec(), _spec(kernel_type="realtime"),
     [["rpm-ostree", "cleanup", "-p"],
      ["rpm-ostree", "override", "remove", "kernel", "kernel-core", "kernel-modules", "kernel-modules-core",
       "kernel-modules-extra", "--install=kernel-rt-core", "--install=kernel-rt-modules",
       "--install=kernel-rt-modules-extra"]]),
    ("realtime-to-default", _spec(kernel_type="realtime"), _spec(),
     [["rpm-ostree", "cleanup", "-p"],
      ["rpm-ostree", "override", "reset", "kernel", "kernel-core", "kernel-modules", "kernel-modules-core",
       "kernel-modules-extra", "--uninstall=kernel-rt-core", "--uninstall=kernel-rt-modules",
       "--uninstall=kernel-rt-modules-extra"]]),
    ("extensions", _spec(extensions=("usbguard",)), _spec(extensions=("kerberos",)),
     [["rpm-ostree", "cleanup", "-p"],
      ["rpm-ostree", "update", "--install=krb5-workstation", "--install=libkadm5", "--uninstall=usbguard"]]),
]


@pytest.mark.parametrize("old,new,expected", [c[1:] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_rpm_ostree_commands(old: MachineConfigSpec, new: MachineConfigSpec, expected: list) -> None:
    from applier.backends.base import Deployment

    booted = Deployment(id="x", booted=True, packages=("usbguard",) if old.extensions else ())
    assert RpmOstreeBackend(runner=RecordingRunner()).commands(diff_rendered(old, new), old, new, booted) == expected


@pytest.mark.parametrize("extension", sorted(SUPPORTED_EXTENSIONS))
def test_an_extension_installs_the_packages_the_image_builder_installs(extension: str) -> None:
    """One table (fleet/rendered.py, MCO SupportedExtensions) for the renderer's allow-list, the image builder and
    the node."""
    from applier.backends.base import Deployment

    booted = Deployment(id="x", booted=True)
    old, new = _spec(), _spec(extensions=(extension,))
    commands = RpmOstreeBackend(runner=RecordingRunner()).commands(diff_rendered(old, new), old, new, booted)
    assert commands[-1] == ["rpm-ostree", "update",
                            *(f"--install={p}" for p in sorted(SUPPORTED_EXTENSIONS[extension]))]


def test_rpm_ostree_stage_and_verify() -> None:
    staged = (FIX / "rpm-ostree-staged.json").read_text()
    runner = RecordingRunner({("rpm-ostree", "status", "--json"): Result((), 0, staged),
                              ("rpm-ostree", "kargs"): Result((), 0, "root=UUID=1 rw nosmt\n")})
    backend = RpmOstreeBackend(runner=runner)
    old, new = _spec(), _spec(kernel_arguments=("nosmt",))
    info = backend.stage(diff_rendered(old, new), old, new)
    assert info["checksum"].startswith("967b7b8d")
    assert ("rpm-ostree", "kargs", "--append=nosmt") in runner.calls
    # after the "reboot" the booted deployment is still the old one in this sample
    assert backend.verify(new, info) == [
        "booted deployment fedora-coreos-01f074cc6cd88d8d2b43f821da692f2367c101eb4377802cb35092bde0ef02f7.0 is not "
        "the staged deployment fedora-coreos-967b7b8d624e6d10ff51c2e81ef198fae966c567ac2e9b479771c693d0987949.0"]
    assert backend.verify(_spec(kernel_arguments=("quiet",)), {}) == ["missing expected kernel arguments: [quiet]"]
    assert backend.verify(_spec(extensions=("kerberos",)), {}) == [
        "missing extension packages in the booted deployment: [krb5-workstation libkadm5]"]


def test_bootc_samples() -> None:
    both = bootc_status((FIX / "bootc-staged-booted.yaml").read_text())
    assert both["staged"] is not None and both["staged"].digest.startswith("sha256:16dc2b62")
    assert both["booted"] is not None and both["booted"].image == "quay.io/example/someimage:latest"
    only = bootc_status((FIX / "bootc-only-booted.yaml").read_text())
    assert only["staged"] is None and only["booted"] is not None


def test_bootc_switch_and_confirm() -> None:
    staged = (FIX / "bootc-staged-booted.yaml").read_text()
    image = "quay.io/example/someimage@sha256:16dc2b6256b4ff0d2ec18d2dbfb06d117904010c8cf9732cdb022818cf7a7566"
    runner = RecordingRunner({("bootc", "status", "--format=json"): Result((), 0, staged)})
    backend = BootcBackend(runner=runner)
    old, new = _spec(), _spec(os_image_url=f"docker://{image}")
    info = backend.stage(diff_rendered(old, new), old, new)
    assert ("bootc", "switch", "--transport", "registry", image) in runner.calls
    assert info["digest"].startswith("sha256:16dc2b62")
    problems = backend.verify(new, info)  # booted is still the old digest
    assert problems == [f'expected target osImageURL "docker://{image}", have "quay.io/example/someimage:latest@'
                        'sha256:736b359467c9437c1ac915acaae952aad854e07eb4a16a94999a48af08c83c34"']


def test_bootc_refuses_what_lives_in_the_image() -> None:
    old, new = _spec(), _spec(kernel_type="realtime")
    with pytest.raises(PermanentError) as err:
        BootcBackend(runner=RecordingRunner()).stage(diff_rendered(old, new), old, new)
    assert err.value.path == "spec.kernelType"


def test_bootc_wrong_staged_image() -> None:
    staged = (FIX / "bootc-staged-booted.yaml").read_text()
    backend = BootcBackend(runner=RecordingRunner({("bootc", "status", "--format=json"): Result((), 0, staged)}))
    old, new = _spec(), _spec(os_image_url="quay.io/other@sha256:ffff")
    with pytest.raises(PermanentError) as err:
        backend.stage(diff_rendered(old, new), old, new)
    assert err.value.path == "spec.osImageURL"


HELP_WITH = Result((), 0, "Usage:\n  rpm-ostree rebase [OPTION…] REFSPEC\n  --download-only   Only download\n")
HELP_WITHOUT = Result((), 0, "Usage:\n  rpm-ostree rebase [OPTION…] REFSPEC\n  --cache-only   Only cache\n")


@pytest.mark.parametrize("has", [True, False], ids=["download-only", "no-download-only"])
def test_rpm_ostree_prefetch_downloads_only_where_the_version_can(has: bool) -> None:
    staged = (FIX / "rpm-ostree-staged.json").read_text()
    runner = RecordingRunner({("rpm-ostree", "status", "--json"): Result((), 0, staged),
                              ("rpm-ostree", "rebase", "--help"): HELP_WITH if has else HELP_WITHOUT})
    note = RpmOstreeBackend(runner=runner).prefetch(_spec(os_image_url="q.io/os@sha256:1"))
    download = ("rpm-ostree", "rebase", "--experimental", "--download-only", "ostree-unverified-registry:q.io/os@sha256:1")
    assert (download in runner.calls) == has
    assert ("before the drain" in note) == has and ("pulled while drained" in note) == (not has)
    assert not any(c[:2] == ("rpm-ostree", "rebase") and "--download-only" not in c and "--help" not in c
                   for c in runner.calls)  # nothing deployed before the slot


def test_bootc_prefetch_stages_locked_and_the_update_applies_it() -> None:
    image = "quay.io/example/someimage@sha256:16dc2b6256b4ff0d2ec18d2dbfb06d117904010c8cf9732cdb022818cf7a7566"
    statuses = {"now": (FIX / "bootc-only-booted.yaml").read_text()}

    def switch(cmd: tuple[str, ...]) -> Result:
        statuses["now"] = (FIX / "bootc-staged-booted.yaml").read_text()
        return Result(cmd, 0)

    runner = RecordingRunner({("bootc", "status", "--format=json"): lambda cmd: Result(cmd, 0, statuses["now"]),
                              ("bootc", "switch", "--help"): Result((), 0, "--download-only  Download and stage\n"),
                              ("bootc", "switch", "--download-only"): switch})
    backend = BootcBackend(runner=runner)
    old, new = _spec(), _spec(os_image_url=image)
    assert "bootc switch --download-only" in backend.prefetch(new)
    assert ("bootc", "switch", "--download-only", "--transport", "registry", image) in runner.calls
    info = backend.stage(diff_rendered(old, new), old, new)
    assert ("bootc", "switch", "--from-downloaded") in runner.calls
    assert not any(c[:3] == ("bootc", "switch", "--transport") for c in runner.calls)  # no second pull
    assert info["digest"].startswith("sha256:16dc2b62")


def test_bootc_without_download_only_says_so() -> None:
    runner = RecordingRunner({("bootc", "status", "--format=json"): Result((), 0, (FIX / "bootc-only-booted.yaml").read_text()),
                              ("bootc", "switch", "--help"): Result((), 0, "--apply  Restart\n")})
    note = BootcBackend(runner=runner).prefetch(_spec(os_image_url="quay.io/other@sha256:ffff"))
    assert "pulled while drained" in note
    assert not any(c[:2] == ("bootc", "switch") and "--help" not in c for c in runner.calls)


# MCO pkg/daemon/update.go generateKargs/updateKernelArguments: every old argument (split as the kernel does) is
# deleted with `--delete=` (rpm-ostree fails on one that is not there: the update fails, as the MCD's does),
# then every new one appended, duplicates kept; no command when both lists split to nothing.
KARGS = [
    ("replace", ("a=1", "b"), ("b", "c d"), ["--delete=a=1", "--delete=b", "--append=b", "--append=c", "--append=d"]),
    ("duplicates", ("x", "x"), ("x",), ["--delete=x", "--delete=x", "--append=x"]),
    ("quoted", (), ('dyndbg="file a.c +p"',), ['--append=dyndbg="file a.c +p"']),
    ("only-blank", (), ("  ",), None),
]


@pytest.mark.parametrize("old,new,expected", [c[1:] for c in KARGS], ids=[c[0] for c in KARGS])
def test_kargs_command_of_rpm_ostree_and_bootc(old: tuple, new: tuple, expected: list | None) -> None:
    from applier.backends.base import Deployment

    before, after = _spec(kernel_arguments=old), _spec(kernel_arguments=new)
    booted = Deployment(id="x", booted=True)
    want = [] if expected is None else [["rpm-ostree", "kargs", *expected]]
    rpm = RpmOstreeBackend(runner=RecordingRunner()).commands(diff_rendered(before, after), before, after, booted)
    assert rpm[1:] == want
    assert BootcBackend(runner=RecordingRunner()).commands(diff_rendered(before, after), before, after) == want
