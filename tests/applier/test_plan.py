"""Plans: what an update writes, removes and how disruptive it is (table-driven)."""

from __future__ import annotations

import pytest

from applier.plan import make_plan
from fleet.disruption_policy import DisruptionPolicy
from tests.applier.helpers import SERVICE, file_entry, unit
from tests.builders import rendered_config

POLICY = DisruptionPolicy.from_dict({"nodeDisruptionPolicy": {
    "files": [{"path": "/etc/chrony.conf", "actions": [{"type": "Restart", "restart": {"serviceName": "chronyd.service"}}]}],
}})
A = rendered_config("a", [file_entry("/etc/chrony.conf", "1"), file_entry("/etc/b", "b")],
             [unit("x.service", SERVICE.format(name="x"), True)])

CASES = [
    # id, old, new, manage_os, expected (write, remove, units, remove_units, verdict, stage)
    ("no-change", A, A, True, ([], [], [], [], "none", False)),
    ("policy-file-restart", A, rendered_config("b", [file_entry("/etc/chrony.conf", "2"), file_entry("/etc/b", "b")],
                                        [unit("x.service", SERVICE.format(name="x"), True)]), True,
     (["/etc/chrony.conf"], [], [], [], "restart", False)),
    ("file-removed-reboots", A, rendered_config("c", [file_entry("/etc/chrony.conf", "1")],
                                         [unit("x.service", SERVICE.format(name="x"), True)]), True,
     ([], ["/etc/b"], [], [], "reboot", False)),
    ("unit-removed", A, rendered_config("d", [file_entry("/etc/chrony.conf", "1"), file_entry("/etc/b", "b")]), True,
     ([], [], [], ["x.service"], "reboot", False)),
    ("karg-stages", A, rendered_config("e", [file_entry("/etc/chrony.conf", "1"), file_entry("/etc/b", "b")],
                                [unit("x.service", SERVICE.format(name="x"), True)], kernel_arguments=("nosmt",)),
     True, ([], [], [], [], "reboot", True)),
    ("karg-unmanaged-backend", A, rendered_config("f", [file_entry("/etc/chrony.conf", "1"), file_entry("/etc/b", "b")],
                                           [unit("x.service", SERVICE.format(name="x"), True)],
                                           kernel_arguments=("nosmt",), os_image_url="q/os@sha256:1"),
     False, ([], [], [], [], "none", False)),
    ("unit-enable-change", A, rendered_config("g", [file_entry("/etc/chrony.conf", "1"), file_entry("/etc/b", "b")],
                                       [unit("x.service", SERVICE.format(name="x"), False)]), True,
     ([], [], ["x.service"], [], "reboot", False)),
    ("file-becomes-dropin-not-removed",
     rendered_config("h", [file_entry("/etc/systemd/system/y.service.d/10.conf", "[Service]\n")]),
     rendered_config("i", units=[unit("y.service", dropins=[{"name": "10.conf", "contents": "[Service]\n"}])]), True,
     ([], [], ["y.service"], [], "reboot", False)),
]


@pytest.mark.parametrize("old,new,manage_os,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_plan_table(old, new, manage_os, expected) -> None:
    plan = make_plan(old.spec, new.spec, policy=POLICY, manage_os=manage_os)
    got = ([e["path"] for e in plan.write_files], list(plan.remove_files), [u["name"] for u in plan.write_units],
           list(plan.remove_units), plan.disruption.verdict, plan.stage_os)
    assert got == expected


def test_leftover_paths_of_interrupted_update_are_removed() -> None:
    plan = make_plan(A.spec, A.spec, leftover_paths=["/etc/half-applied"])
    assert plan.remove_files == ("/etc/half-applied",)


def test_unreconcilable_is_reported_not_planned() -> None:
    new = rendered_config("j", [file_entry("/etc/chrony.conf", "1")], fips=True)
    plan = make_plan(A.spec, new.spec)
    assert plan.unreconcilable == ("detected change to FIPS flag; refusing to modify FIPS on a running cluster",)


def test_interrupted_update_entries_are_rewritten() -> None:
    half = rendered_config("half", [file_entry("/etc/chrony.conf", "half-written target"), file_entry("/etc/b", "b"),
                             file_entry("/etc/only-in-half", "x")])
    plan = make_plan(A.spec, A.spec, interrupted=half.spec)  # back to A after a killed update to `half`
    assert [e["path"] for e in plan.write_files] == ["/etc/chrony.conf"]
    assert plan.remove_files == ("/etc/only-in-half",)
