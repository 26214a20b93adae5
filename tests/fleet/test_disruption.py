"""The disruption table (MCO `pkg/daemon/update.go`, `drain.go`): policy matching, Reboot dominance, None stripping, drain."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from fleet.diff import diff_rendered
from fleet.disruption import disruption
from fleet.disruption_policy import Action, DisruptionPolicy, PolicyError
from fleet.rendered import MachineConfigSpec


def _file(path: str, text: str = "x", mode: int = 0o644) -> dict[str, Any]:
    data = base64.b64encode(text.encode()).decode()
    return {"path": path, "mode": mode, "contents": {"source": f"data:;base64,{data}"}}


def _spec(files: list | None = None, units: list | None = None, keys: list | None = None,
          **kw: Any) -> MachineConfigSpec:
    cfg: dict[str, Any] = {"ignition": {"version": "3.4.0"}}
    if files:
        cfg["storage"] = {"files": files}
    if units:
        cfg["systemd"] = {"units": units}
    if keys is not None:
        cfg["passwd"] = {"users": [{"name": "core", "sshAuthorizedKeys": keys}]}
    return MachineConfigSpec(config=cfg, **kw)


USER = DisruptionPolicy.from_dict({"nodeDisruptionPolicy": {
    "files": [
        {"path": "/etc/chrony.conf", "actions": [{"type": "Restart", "restart": {"serviceName": "chronyd.service"}}]},
        {"path": "/etc/app", "actions": [{"type": "Reload", "reload": {"serviceName": "app.service"}}]},
        {"path": "/etc/app/deep", "actions": [{"type": "None"}]},
        {"path": "/etc/drainme", "actions": [{"type": "Drain"}, {"type": "DaemonReload"}]},
        # replaces the built-in default in place
        {"path": "/etc/containers/policy.json", "actions": [{"type": "None"}]},
    ],
    "units": [{"name": "app.service", "actions": [{"type": "Restart", "restart": {"serviceName": "app.service"}}]}],
    "sshkey": {"actions": [{"type": "Reload", "reload": {"serviceName": "sshd.service"}}]},
}})

BASE = _spec([_file("/etc/chrony.conf", "a"), _file("/etc/app/x.conf", "a")])

CASES = [
    # id, old, new, policy, verdict, actions, drain
    ("nothing", BASE, BASE, USER, "none", ["None"], False),
    ("os-image-reboots", BASE, _spec(BASE.config["storage"]["files"], os_image_url="q/os@sha256:1"), USER,
     "reboot", ["Reboot"], True),
    ("karg-reboots", BASE, _spec(BASE.config["storage"]["files"], kernel_arguments=("nosmt",)), USER,
     "reboot", ["Reboot"], True),
    # MCO pkg/daemon/update.go newMachineConfigDiff: kargs = !(both empty || reflect.DeepEqual(old, new)) on the raw
    # spec.kernelArguments lists, not on their split form: the same arguments grouped differently still reboot
    ("karg-regrouped-reboots", _spec(kernel_arguments=("a=1 b",)), _spec(kernel_arguments=("a=1", "b")), None,
     "reboot", ["Reboot"], True),
    ("karg-respaced-reboots", _spec(kernel_arguments=("a=1 b",)), _spec(kernel_arguments=("a=1  b",)), None,
     "reboot", ["Reboot"], True),
    ("karg-same-list-none", _spec(kernel_arguments=("a=1 b",)), _spec(kernel_arguments=("a=1 b",)), None,
     "none", ["None"], False),
    ("kernel-type-reboots", _spec(kernel_type="default"), _spec(kernel_type="realtime"), None,
     "reboot", ["Reboot"], True),
    ("kernel-type-canonical", _spec(kernel_type="default"), _spec(kernel_type="bogus"), None, "none", ["None"], False),
    ("extensions-reboot", _spec(), _spec(extensions=("usbguard",)), None, "reboot", ["Reboot"], True),
    ("unmatched-file-reboots", _spec(), _spec([_file("/etc/other")]), USER, "reboot", ["Reboot"], True),
    ("exact-file-restart", BASE, _spec([_file("/etc/chrony.conf", "b"), _file("/etc/app/x.conf", "a")]), USER,
     "restart", ["Restart chronyd.service"], False),
    ("dir-prefix-reload", BASE, _spec([_file("/etc/chrony.conf", "a"), _file("/etc/app/x.conf", "b")]), USER,
     "reload", ["Reload app.service"], False),
    ("longest-prefix-wins-none", _spec(), _spec([_file("/etc/app/deep/y")]), USER, "none", ["None"], False),
    ("prefix-not-substring", _spec(), _spec([_file("/etc/application")]), USER, "reboot", ["Reboot"], True),
    ("none-stripped", _spec(), _spec([_file("/etc/app/deep/y"), _file("/etc/app/z")]), USER,
     "reload", ["Reload app.service"], False),
    ("drain-action", _spec(), _spec([_file("/etc/drainme")]), USER, "reload", ["Drain", "DaemonReload"], True),
    ("user-replaces-default", _spec(), _spec([_file("/etc/containers/policy.json")]), USER, "none", ["None"], False),
    ("default-policy-json", _spec(), _spec([_file("/etc/containers/policy.json")]), None,
     "reload", ["Reload crio.service"], False),
    ("default-pull-secret-none", _spec(), _spec([_file("/var/lib/kubelet/config.json")]), None,
     "none", ["None"], False),
    ("default-ca-bundle", _spec(), _spec([_file("/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt")]),
     None, "restart", ["Restart coreos-update-ca-trust.service", "Restart crio.service"], False),
    ("removed-file-counts", BASE, _spec([_file("/etc/chrony.conf", "a")]), USER, "reload", ["Reload app.service"],
     False),
    ("mode-change-counts", BASE, _spec([_file("/etc/chrony.conf", "a", 0o600), _file("/etc/app/x.conf", "a")]),
     USER, "restart", ["Restart chronyd.service"], False),
    ("unit-with-policy", _spec(), _spec(units=[{"name": "app.service", "contents": "[Unit]\n"}]), USER,
     "restart", ["Restart app.service"], False),
    ("unit-without-policy", _spec(), _spec(units=[{"name": "b.service", "contents": "[Unit]\n"}]), USER,
     "reboot", ["Reboot"], True),
    ("dropin-change-is-unit-change", _spec(units=[{"name": "app.service", "dropins": [{"name": "a.conf"}]}]),
     _spec(units=[{"name": "app.service", "dropins": [{"name": "a.conf", "contents": "[Service]\n"}]}]), USER,
     "restart", ["Restart app.service"], False),
    ("sshkey-default-none", _spec(keys=["ssh-ed25519 A"]), _spec(keys=["ssh-ed25519 B"]), None,
     "none", ["None"], False),
    ("sshkey-user-policy", _spec(keys=["ssh-ed25519 A"]), _spec(keys=["ssh-ed25519 B"]), USER,
     "reload", ["Reload sshd.service"], False),
    ("order-files-units-ssh", _spec(keys=["k1"]),
     _spec([_file("/etc/chrony.conf")], units=[{"name": "app.service", "enabled": True}], keys=["k2"]), USER,
     "restart", ["Restart chronyd.service", "Restart app.service", "Reload sshd.service"], False),
]


@pytest.mark.parametrize("old,new,policy,verdict,actions,drain", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_disruption_table(old: MachineConfigSpec, new: MachineConfigSpec, policy: DisruptionPolicy | None,
                          verdict: str, actions: list[str], drain: bool) -> None:
    result = disruption(diff_rendered(old, new), policy)
    assert (result.verdict, [str(a) for a in result.actions], result.drain) == (verdict, actions, drain)


def test_unmatched_reason_names_the_path() -> None:
    result = disruption(diff_rendered(_spec(), _spec([_file("/etc/other")])), USER)
    assert result.reasons == ("file /etc/other: no disruption policy matches: reboot",)


# MCO pkg/controller/common/helpers.go FindClosestFilePolicyPathMatch: a policy matches when its path equals the
# changed path as written, or when the changed path is below it (IsSubdirectory: filepath.Clean(policy) + "/" a
# prefix of filepath.Clean(path)); the longest policy path as written wins, the first listed on a tie.
PATH_CASES = [
    # id, user file policies (path, actions), changed path, actions
    ("trailing-slash-is-a-directory-only", [("/etc/foo/", [{"type": "None"}])], "/etc/foo", ["Reboot"]),
    ("trailing-slash-covers-below", [("/etc/foo/", [{"type": "None"}])], "/etc/foo/bar", ["None"]),
    ("unclean-policy-is-no-exact-match", [("/etc//foo", [{"type": "None"}])], "/etc/foo", ["Reboot"]),
    ("longest-as-written-wins", [("/etc/a", [{"type": "None"}]), ("/etc/a/", [{"type": "DaemonReload"}])],
     "/etc/a/x", ["DaemonReload"]),
    ("first-listed-wins-a-tie", [("/etc/b/", [{"type": "None"}]), ("/etc//b", [{"type": "DaemonReload"}])],
     "/etc/b/x", ["None"]),
    ("root-covers-nothing", [("/", [{"type": "None"}])], "/etc/x", ["Reboot"]),
    ("exact-beats-shorter-directory", [("/etc", [{"type": "DaemonReload"}]), ("/etc/c.conf", [{"type": "None"}])],
     "/etc/c.conf", ["None"]),
]


@pytest.mark.parametrize("policies,path,actions", [c[1:] for c in PATH_CASES], ids=[c[0] for c in PATH_CASES])
def test_file_policy_path_match(policies: list, path: str, actions: list[str]) -> None:
    policy = DisruptionPolicy.from_dict({"nodeDisruptionPolicy": {
        "files": [{"path": p, "actions": a} for p, a in policies]}})
    assert [str(a) for a in disruption(diff_rendered(_spec(), _spec([_file(path)])), policy).actions] == actions


REG_OLD = 'unqualified-search-registries = ["a.io"]\n[[registry]]\nlocation = "q.io"\n'
REG_CASES = [
    ("mirror-digest-only-safe", REG_OLD + '[[registry.mirror]]\nlocation = "m.io"\npull-from-mirror = "digest-only"\n',
     False),
    ("mirror-any-unsafe", REG_OLD + '[[registry.mirror]]\nlocation = "m.io"\n', True),
    ("search-appended-safe", REG_OLD.replace('["a.io"]', '["a.io", "b.io"]'), False),
    ("search-reordered-unsafe", REG_OLD.replace('["a.io"]', '["b.io", "a.io"]'), True),
    ("registry-removed-unsafe", 'unqualified-search-registries = ["a.io"]\n', True),
    ("insecure-changed-unsafe", REG_OLD + "insecure = true\n", True),
    ("new-registry-digest-only-safe", REG_OLD + '[[registry]]\nlocation = "r.io"\nmirror-by-digest-only = true\n',
     False),
    ("new-registry-plain-unsafe", REG_OLD + '[[registry]]\nlocation = "r.io"\n', True),
    ("not-toml-unsafe", "[[[", True),
]


@pytest.mark.parametrize("new_text,drain", [c[1:] for c in REG_CASES], ids=[c[0] for c in REG_CASES])
def test_registries_conf_special(new_text: str, drain: bool) -> None:
    path = "/etc/containers/registries.conf"
    result = disruption(diff_rendered(_spec([_file(path, REG_OLD)]), _spec([_file(path, new_text)])))
    assert result.actions == (Action("Special"),)
    assert (result.verdict, result.drain) == ("reload", drain)


BAD_POLICIES = [
    ("reload-needs-service", {"files": [{"path": "/etc/a", "actions": [{"type": "Reload"}]}]},
     "$.spec.nodeDisruptionPolicy.files[0].actions[0].reload"),
    ("restart-forbidden-on-reload", {"files": [{"path": "/etc/a", "actions": [
        {"type": "Reload", "restart": {"serviceName": "a.service"}}]}]},
     "$.spec.nodeDisruptionPolicy.files[0].actions[0].restart"),
    ("reboot-alone", {"files": [{"path": "/etc/a", "actions": [{"type": "Reboot"}, {"type": "Drain"}]}]},
     "$.spec.nodeDisruptionPolicy.files[0].actions"),
    ("bad-type", {"units": [{"name": "a.service", "actions": [{"type": "Special"}]}]},
     "$.spec.nodeDisruptionPolicy.units[0].actions[0].type"),
    ("bad-service-suffix", {"files": [{"path": "/etc/a", "actions": [
        {"type": "Restart", "restart": {"serviceName": "chronyd"}}]}]},
     "$.spec.nodeDisruptionPolicy.files[0].actions[0].restart.serviceName"),
    ("relative-path", {"files": [{"path": "etc/a", "actions": [{"type": "None"}]}]},
     "$.spec.nodeDisruptionPolicy.files[0].path"),
    ("too-many-files", {"files": [{"path": f"/etc/{i}", "actions": [{"type": "None"}]} for i in range(51)]},
     "$.spec.nodeDisruptionPolicy.files"),
]


@pytest.mark.parametrize("ndp,path", [c[1:] for c in BAD_POLICIES], ids=[c[0] for c in BAD_POLICIES])
def test_bad_policy_names_field(ndp: dict, path: str) -> None:
    with pytest.raises(PolicyError) as err:
        DisruptionPolicy.from_dict({"nodeDisruptionPolicy": ndp})
    assert err.value.path == path


def test_merge_keeps_default_order_and_appends() -> None:
    paths = [f.path for f in USER.files]
    defaults = [f.path for f in DisruptionPolicy.defaults().files]
    assert paths[:len(defaults)] == defaults
    assert paths[len(defaults):] == ["/etc/chrony.conf", "/etc/app", "/etc/app/deep", "/etc/drainme"]


def test_full_object_accepted() -> None:
    obj = {"apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration", "metadata": {"name": "cluster"},
           "spec": {"nodeDisruptionPolicy": {"sshkey": {"actions": [{"type": "Drain"}]}}}}
    assert DisruptionPolicy.from_dict(obj).sshkey == (Action("Drain"),)


def test_policy_annotation_round_trip() -> None:
    from fleet.disruption_policy import POLICY_ANNOTATION, policy_annotation, policy_from_annotations

    spec = {"nodeDisruptionPolicy": {"files": [{"path": "/etc/x", "actions": [{"type": "None"}]}]}}
    ann = policy_annotation(spec)
    assert list(ann) == [POLICY_ANNOTATION]
    assert policy_from_annotations(ann).for_file("/etc/x").actions == (Action("None"),)
    assert policy_annotation({}) == {} and policy_from_annotations({}) == DisruptionPolicy.defaults()
    with pytest.raises(PolicyError) as err:
        policy_from_annotations({POLICY_ANNOTATION: '{"files": [{"path": "x"}]}'})
    assert err.value.path == f"metadata.annotations[{POLICY_ANNOTATION}].nodeDisruptionPolicy.files[0].path"
