"""policy.json and the MCO's checks of the image config: the cases of MCO
`pkg/controller/container-runtime-config/helpers_test.go` TestUpdatePolicyJSON (golden files in
tests/renderer/golden/policy/, MCO_UPDATE_GOLDEN=1 to refresh), TestValidateRegistriesConfScopes and
TestGetValidBlockAndAllowedRegistries, and `container_runtime_config_controller_test.go` TestRegistriesValidation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from renderer.image_policy import DEFAULT_POLICY, ONLY_ONE, PolicyError, update_policy
from renderer.registries_generated import _Check, plan
from tests.golden import assert_golden
from tests.renderer.registries_cases import icsp, idms, image

GOLDEN = Path(__file__).parent / "golden" / "policy"
PAYLOAD = "release-reg.io/image/release"
ACCEPT, REJECT = [{"type": "insecureAcceptAnything"}], [{"type": "reject"}]
DAEMON = {"": ACCEPT}


def scopes(accept: list[str], reject: list[str]) -> dict[str, Any]:
    return {**{s: ACCEPT for s in accept}, **{s: REJECT for s in reject}}


# (id, allowed, blocked, MCO's expected policy or None when refused)
POLICY: list[tuple[str, list[str], list[str], Any]] = [
    ("allowed", ["allow.io", "*.allowed-example.com"], [],
     {"default": REJECT, "transports": {"atomic": scopes(["allow.io", "*.allowed-example.com"], []),
                                        "docker": scopes(["allow.io", "*.allowed-example.com"], []),
                                        "docker-daemon": DAEMON}}),
    ("blocked", [], ["block.com", "*.blocked-example.com"],
     {"default": ACCEPT, "transports": {"atomic": scopes([], ["block.com", "*.blocked-example.com"]),
                                        "docker": scopes([], ["block.com", "*.blocked-example.com"]),
                                        "docker-daemon": DAEMON}}),
    ("block payload image", [PAYLOAD], ["block.com"],
     {"default": ACCEPT, "transports": {"atomic": scopes([PAYLOAD], ["block.com"]),
                                        "docker": scopes([PAYLOAD], ["block.com"]), "docker-daemon": DAEMON}}),
    ("block registry of payload image", [PAYLOAD], ["block.com", "release-reg.io"],
     {"default": ACCEPT, "transports": {"atomic": scopes([PAYLOAD], ["block.com", "release-reg.io"]),
                                        "docker": scopes([PAYLOAD], ["block.com", "release-reg.io"]),
                                        "docker-daemon": DAEMON}}),
    ("blocked list and allowed list is set but allowed list doesn't contain the payload repo", ["allow.io"],
     ["block.com", "another-block.io"], None),
    ("allowed registries: atomic does not allow deep namespaces",
     ["allow.io", "allow.io/namespace1/namespace2", "allowed-example.com/namespace1/namespace2/namespace3"], [],
     {"default": REJECT, "transports": {
         "atomic": scopes(["allow.io", "allow.io/namespace1/namespace2"], []),
         "docker": scopes(["allow.io", "allow.io/namespace1/namespace2",
                           "allowed-example.com/namespace1/namespace2/namespace3"], []),
         "docker-daemon": DAEMON}}),
    ("blocked registries: atomic does not allow deep namespaces", [],
     ["block.com", "block.com/namespace1/namespace2", "blocked-example.com/namespace1/namespace2/namespace3"],
     {"default": ACCEPT, "transports": {
         "atomic": scopes([], ["block.com", "block.com/namespace1/namespace2"]),
         "docker": scopes([], ["block.com", "block.com/namespace1/namespace2",
                               "blocked-example.com/namespace1/namespace2/namespace3"]),
         "docker-daemon": DAEMON}}),
]


def _slug(name: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in name).split())


@pytest.mark.parametrize(("name", "allowed", "blocked", "want"), POLICY, ids=[c[0] for c in POLICY])
def test_update_policy_json(name: str, allowed: list[str], blocked: list[str], want: Any) -> None:
    if want is None:
        with pytest.raises(PolicyError, match=ONLY_ONE):
            update_policy(DEFAULT_POLICY, blocked, allowed, PAYLOAD)
        return
    data = update_policy(DEFAULT_POLICY, blocked, allowed, PAYLOAD)
    assert json.loads(data) == want
    golden = GOLDEN / f"{_slug(name)}.json"
    assert_golden(golden, data)


ICSP_RULES = (("insecure.com/ns-i1", ["blocked.com/ns-b1", "other.com/ns-o1"]),
              ("blocked.com/ns-b/ns2-b", ["other.com/ns-o2", "insecure.com/ns-i2"]))
# (insecure, blocked, allowed, sets, the MCO's error or None) -- TestValidateRegistriesConfScopes
SCOPES: list[tuple[list[str], list[str], list[str], list[Any], str | None]] = [
    ([""], ["*.block.com"], ["*.allowed.com"], [], 'invalid entry for insecure registries ""'),
    ([""], ["*.block.com"], ["*.allowed.com"], [idms(*ICSP_RULES)], 'invalid entry for insecure registries ""'),
    (["*.insecure.com"], [""], ["*.allowed.com"], [idms(*ICSP_RULES)], 'invalid entry for blocked registries ""'),
    (["*.insecure.com"], ["*.block.com"], [""], [idms(*ICSP_RULES)], 'invalid entry for allowed registries ""'),
    (["*.insecure.com"], ["*.block.com"], ["*.allowed.com"], [idms(("", ["blocked.com/ns-b1"]))],
     'invalid format for source ""'),
    (["*.insecure.com"], ["*.block.com"], ["*.allowed.com"], [idms(("insecure.com/ns-i1", ["", "other.com/ns-o1"]))],
     'invalid format for mirror ""'),
    ([], [], [], [icsp(("*.insecure.com/ns-i1", ["", "other.com/ns-o1"]))],
     'invalid format for source "*.insecure.com/ns-i1"'),
    ([], [], [], [icsp(("*.insecure.com", ["*.other.com/ns-o1"]))], 'invalid format for mirror "*.other.com/ns-o1"'),
    ([], [], [], [icsp(("insecure.com/ns-i1 ", ["", "other.com/ns-o1"]))],
     'invalid format for source "insecure.com/ns-i1 "'),
    ([], [], [], [icsp(("insecure.com/ns-i1", ["other.com/ns-o1  "]))], 'invalid format for mirror "other.com/ns-o1  "'),
    (["*.insecure.com"], ["*.block.com"], ["*.allowed.com"],
     [idms(("*.insecure.com", ["other.com/ns-o1"]), ("insecure.com/ns-i1", ["other.com/ns-o1"]))], None),
    ([], [], [], [icsp(("insecure.com/ns-i1", ["other.com/ns-o1"])),
                  idms(("insecure.com/ns-i1", ["blocked.com/ns-b1", "other.com/ns-o1"], "NeverContactSource"))],
     'conflicting mirrorSourcePolicy is set for the same source "insecure.com/ns-i1" in imagedigestmirrorsets, '
     "imagetagmirrorsets, or imagecontentsourcepolicies"),
    ([], [], [], [idms(("quay.io/team", ["quay.io/team", "m.io/team"], "NeverContactSource"))],
     'cannot set mirrorSourcePolicy: NeverContactSource if the source "quay.io/team" is one of the mirrors'),
]


@pytest.mark.parametrize(("insecure", "blocked", "allowed", "sets", "error"), SCOPES,
                         ids=[f"{i}-{c[4] or 'valid'}" for i, c in enumerate(SCOPES)])
def test_validate_registries_conf_scopes(insecure: list[str], blocked: list[str], allowed: list[str],
                                         sets: list[Any], error: str | None) -> None:
    check = _Check()
    plan(image(insecure=insecure, blocked=blocked, allowed=allowed), sets, None, check)
    messages = [p.message for _, p in check.refusals if p.code != "registries-allowed-blocked"]
    if error is None:
        assert messages == []
    else:
        assert error in messages, messages


DIGEST = "sha256:4207ba569ff014931f1b5d125fe3751936a768e119546683c899eb09f3cdceb0"
# (name, release image, blocked, digest mirror rules, registries blocked, policy blocked, allowed, refused)
PAYLOADS: list[tuple[str, str, list[str], list[Any], list[str], list[str], list[str], bool]] = [
    ("regular blocked list with no mirror rules configured", f"payload-reg.io/release-image@{DIGEST}",
     ["block.io", "block-2.io"], [], ["block.io", "block-2.io"], ["block.io", "block-2.io"], [], False),
    ("regular blocked list with unrelated mirror rules configured", f"payload-reg.io/release-image@{DIGEST}",
     ["block.io", "block-2.io"], [("src.io/payload", ["mirror-1.io/payload", "mirror-2.io/payload"])],
     ["block.io", "block-2.io"], ["block.io", "block-2.io"], [], False),
    ("payload reg does not have mirror configured and is in blocked list", f"payload-reg.io/release-image@{DIGEST}",
     ["block.io", "payload-reg.io", "block-2.io"], [("src.io/payload", ["mirror-1.io/payload", "mirror-2.io/payload"])],
     ["block.io", "block-2.io"], ["block.io", "block-2.io"], [], True),
    ("payload reg has mirror configured and is in blocked list", f"payload-reg.io/release-image@{DIGEST}",
     ["block.io", "payload-reg.io", "block-2.io"],
     [("payload-reg.io/release-image", ["mirror-1.io/payload", "mirror-2.io/payload"])],
     ["block.io", "payload-reg.io", "block-2.io"], ["block.io", "payload-reg.io", "block-2.io"],
     ["payload-reg.io/release-image"], False),
    ("payload is blocked; all of mirror is not blocked, but the mirror of the payload is blocked",
     f"quay.io/openshift-release-dev@{DIGEST}", ["quay.io", "block.io/openshift-release-dev"],
     [("quay.io", ["block.io"])], ["block.io/openshift-release-dev"], ["block.io/openshift-release-dev"], [], True),
    ("payload is blocked; parent of the mirror of the payload is blocked", f"quay.io/openshift-release-dev@{DIGEST}",
     ["quay.io", "block.io"], [("quay.io/openshift-release-dev", ["block.io/openshift-release-dev"])],
     ["block.io"], ["block.io"], [], True),
]


@pytest.mark.parametrize(("name", "release", "blocked", "rules", "reg_blocked", "pol_blocked", "allowed", "refused"),
                         PAYLOADS, ids=[c[0] for c in PAYLOADS])
def test_get_valid_blocked_and_allowed_registries(name: str, release: str, blocked: list[str], rules: list[Any],
                                                  reg_blocked: list[str], pol_blocked: list[str],
                                                  allowed: list[str], refused: bool) -> None:
    check = _Check()
    got = plan(image(blocked=blocked), [idms(*rules)] if rules else [], release, check)
    assert list(got.registries_blocked) == reg_blocked
    assert list(got.policy_blocked) == pol_blocked
    assert list(got.allowed) == allowed
    assert check.refusals == []
    warned = [w.message for w in check.warnings]
    assert bool(warned) is refused, warned
    if refused:
        assert warned[0].endswith("to blocked registries, cannot block the repository being used by the payload")


def test_a_release_image_the_mco_cannot_parse_refuses_the_sync() -> None:
    check = _Check()
    plan(image(blocked=["quay.io"]), [], "busybox:latest", check)
    assert [p.message for _, p in check.refusals] == ["error parsing reference of release image"]
    assert check.refusals[0][1].source == "cluster.yaml"


BLAH = f"blah.io/payload/myimage@{DIGEST}"
# container_runtime_config_controller_test.go TestRegistriesValidation (release blah.io/payload/myimage):
# (name, blocked, insecure, digest mirror rules, registries blocked, policy blocked, allowed, refused)
VALIDATION: list[tuple[str, list[str], list[str], list[Any], list[str], list[str], list[str], bool]] = [
    ("adding registry used by payload to blocked registries", ["blah.io", "docker.io"], ["test.io"], [],
     ["docker.io"], ["docker.io"], [], True),
    ("adding registry used by payload to blocked registries with mirror rules configured for the a different repo "
     "in the reg", ["blah.io", "docker.io"], ["test.io"],
     [("blah.io/myuser", ["mirror-1.io/myuser", "mirror-2.io/myuser"])], ["docker.io"], ["docker.io"], [], True),
    ("adding registry used by payload to insecure registries", ["docker.io"], ["blah.io"], [],
     ["docker.io"], ["docker.io"], [], False),
    ("adding registry used by payload to blocked registries with mirror rules configured for the payload reg",
     ["blah.io", "docker.io"], ["test.io"], [("blah.io/payload", ["mirror-1.io/payload", "mirror-2.io/payload"])],
     ["blah.io", "docker.io"], ["blah.io", "docker.io"], ["blah.io/payload/myimage"], False),
    ("adding payload repository to blocked registries with mirror rules configured for the payload registry",
     ["blah.io/payload", "docker.io"], ["test.io"], [("blah.io", ["mirror-1.io", "mirror-2.io"])],
     ["blah.io/payload", "docker.io"], ["blah.io/payload", "docker.io"], ["blah.io/payload/myimage"], False),
]


@pytest.mark.parametrize(("name", "blocked", "insecure", "rules", "reg_blocked", "pol_blocked", "allowed", "refused"),
                         VALIDATION, ids=[c[0] for c in VALIDATION])
def test_registries_validation(name: str, blocked: list[str], insecure: list[str], rules: list[Any],
                               reg_blocked: list[str], pol_blocked: list[str], allowed: list[str],
                               refused: bool) -> None:
    check = _Check()
    got = plan(image(blocked=blocked, insecure=insecure), [idms(*rules)] if rules else [], BLAH, check)
    assert (list(got.registries_blocked), list(got.policy_blocked), list(got.allowed)) == \
        (reg_blocked, pol_blocked, allowed)
    assert bool(check.warnings) is refused, check.warnings


def test_payload_pull_picks_the_longest_prefix_as_find_registry_does() -> None:
    # containers/image sysregistriesv2 FindRegistry: the entry with the longest prefix wins (entries sorted by
    # prefix, first on a tie), not the longest match: `ab.example.com` (14) beats `*.example.com` (13) although
    # both match 14 characters of the payload; its only mirror is blocked, so the payload registry is not blocked
    check = _Check()
    got = plan(image(blocked=["ab.example.com", "blocked-mirror.io"]),
               [idms(("*.example.com", ["good.io"]), ("ab.example.com", ["blocked-mirror.io"]))],
               f"ab.example.com/ocp/release@{DIGEST}", check)
    assert (list(got.registries_blocked), list(got.policy_blocked), list(got.allowed)) == \
        (["blocked-mirror.io"], ["blocked-mirror.io"], [])
    assert [w.message for w in check.warnings] == ['error adding ["ab.example.com"] to blocked registries, cannot '
                                                   "block the repository being used by the payload"]


def test_payload_check_that_fails_drops_every_blocked_and_allowed_registry() -> None:
    # helpers.go getValidBlockedAndAllowedRegistries returns (nil, nil, nil, err) when payloadRepoHasUnblockedMirror
    # fails (here EditRegistriesConfig's wildcard internal error in its scratch registries.conf) and syncImageConfig
    # logs it and goes on with no blocked and no allowed registries: the MCO writes no blocked entry and no policy.json
    check = _Check()
    got = plan(image(blocked=["quay.example.com", "other.io"], allowed=["allow.io"]),
               [idms(("*.example.com", ["m.io"]))], f"quay.example.com/ocp/release@{DIGEST}", check)
    assert (got.registries_blocked, got.policy_blocked, got.allowed) == ((), (), ())
    assert check.refusals == []
    assert [w.message for w in check.warnings] == [
        'internal error: mirrorsAdjustedForNestedScope for a wildcard scope "*.example.com", skipping.... '
        "(the MCO then writes no blocked and no allowed registry)"]


@pytest.mark.parametrize(("insecure", "mirror", "error"), [
    # sysregistriesv2 loads the scratch registries.conf with postProcessRegistries: parseLocation refuses a scheme
    (["http://insecure.io"], "m.io/ocp", "invalid location 'http://insecure.io': URI schemes are not supported"),
    # PullSourcesFromReference rewrites the payload onto each mirror and parses it with reference.ParseNamed, which
    # refuses a name that is not canonical (docker.io/release is docker.io/library/release)
    ([], "docker.io", "rewriting reference: repository name must be canonical"),
], ids=["scheme", "not canonical"])
def test_payload_check_that_cannot_load_or_rewrite_drops_every_blocked_registry(insecure: list[str], mirror: str,
                                                                                error: str) -> None:
    check = _Check()
    got = plan(image(blocked=["quay.io", "other.io"], insecure=insecure), [idms(("quay.io/ocp", [mirror]))],
               f"quay.io/ocp/release@{DIGEST}", check)
    assert (got.registries_blocked, got.policy_blocked, got.allowed) == ((), (), ())
    assert [w.message for w in check.warnings] == [f"{error}, skipping.... (the MCO then writes no blocked and no "
                                                   "allowed registry)"]


@pytest.mark.parametrize(("release", "parsed"), [
    (f"quay.io/openshift-release-dev/ocp-release@{DIGEST}", True),
    ("quay.io/openshift-release-dev/ocp-release:4.16.0-x86_64", True),
    ("registry.local:5000/ocp/release:4.16@" + DIGEST, True),
    ("quay.io/ocp/release@sha512:" + "ab" * 64, True),
    # containers/image docker/reference Parse hands the digest to go-digest digest.Parse: a known algorithm and
    # its exact length of lower-case hex, nothing else
    ("quay.io/ocp/release@sha256:" + "A" * 64, False),
    ("quay.io/ocp/release@sha256:" + "a" * 63, False),
    ("quay.io/ocp/release@md5:" + "a" * 32, False),
    ("quay.io/ocp/release@sha256:" + "g" * 64, False),
    ("busybox:latest", False),
    ("docker.io/busybox", False),
])
def test_the_release_image_is_parsed_as_reference_parse_named_parses_it(release: str, parsed: bool) -> None:
    check = _Check()
    plan(image(blocked=["block.io"]), [], release, check)
    assert (check.refusals == []) is parsed, check.refusals
