"""Translation between spec versions: the corpus cases, each step's refusals, and properties over generated configs.

Properties (hypothesis):
- a config that uses only features of spec A, translated up to any B and back down to A, is unchanged;
- a config translated down succeeds exactly when every feature it uses exists in the target, and then
  validates under the target (`validate_dict`; and under Debian's real `ignition-validate` for 3.0-3.3);
  when it is refused, the report names a path for every problem.
"""

from __future__ import annotations

import copy
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ignition.dataurl import encode_data_url
from ignition.errors import TranslationError
from ignition.report import Report
from ignition.translate import translate, translate_with_report, translation_steps
from ignition.translations import STEPS
from ignition.translations.common import CODE_DROPPED_DEFAULT, CODE_MASKED, CODE_UNSUPPORTED, CODE_UNUSED_KEY
from ignition.validate import validate_dict
from ignition.versions import ACCEPTED_VERSIONS, SUPPORTED_VERSIONS, version_index
from tests.ignition.real_ignition import fetch_stage, without_empties
from tests.tools import real_tool

CORPUS = Path(__file__).parent / "corpus" / "ignition_cases.jsonl"
TRANSLATE_CASES = [
    c for c in map(json.loads, CORPUS.read_text().splitlines()) if c.get("kind") == "translate"
]


@pytest.mark.parametrize(
    "case",
    TRANSLATE_CASES,
    ids=[
        f"{c['from_version']}-to-{c['to_version']}-{'ok' if c['output'] else 'refused'}"
        for c in TRANSLATE_CASES
    ],
)
def test_corpus_translate(case: dict[str, Any]) -> None:
    assert case["input"]["ignition"]["version"] == case["from_version"]
    if case["output"] is None:
        with pytest.raises(TranslationError) as info:
            translate(case["input"], case["to_version"])
        assert info.value.report.errors
    else:
        assert translate(case["input"], case["to_version"]) == case["output"]


def test_corpus_has_all_translate_cases() -> None:
    assert len(TRANSLATE_CASES) == 5


def test_steps_chain_every_accepted_version() -> None:
    assert [s.FROM for s in STEPS] == list(ACCEPTED_VERSIONS[:-1])
    assert [s.TO for s in STEPS] == list(ACCEPTED_VERSIONS[1:])
    assert [(s.TO, d) for s, d in translation_steps("3.6.0", "3.4.0")] == [
        ("3.6.0", "down"),
        ("3.5.0", "down"),
    ]
    assert translation_steps("3.3.0", "3.3.0") == []


def cfg(version: str, **sections: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"ignition": {"version": version}}
    out.update(sections)
    return out


def luks(**extra: Any) -> dict[str, Any]:
    return {"storage": {"luks": [{"name": "root", "device": "/dev/sdb", **extra}]}}


REFUSALS = [
    (
        "luks-to-3.1-lists-every-leaf",
        cfg("3.2.0", **luks(clevis={"tpm2": True})),
        "3.1.0",
        {"$.storage.luks.0.name", "$.storage.luks.0.device", "$.storage.luks.0.clevis.tpm2"},
    ),
    (
        "kargs-to-3.2",
        cfg("3.3.0", kernelArguments={"shouldExist": ["a", "b"], "shouldNotExist": ["c"]}),
        "3.2.0",
        {
            "$.kernelArguments.shouldExist.0",
            "$.kernelArguments.shouldExist.1",
            "$.kernelArguments.shouldNotExist.0",
        },
    ),
    (
        "discard-to-3.3",
        cfg("3.4.0", **luks(discard=True, clevis={"tpm2": True})),
        "3.3.0",
        {"$.storage.luks.0.discard"},
    ),
    (
        "open-options-to-3.3",
        cfg("3.4.0", **luks(openOptions=["--perf-no_read_workqueue"], clevis={"tpm2": True})),
        "3.3.0",
        {"$.storage.luks.0.openOptions.0"},
    ),
    (
        "tang-advertisement-to-3.3",
        cfg(
            "3.4.0", **luks(clevis={"tang": [{"url": "http://t", "thumbprint": "x", "advertisement": "{}"}]})
        ),
        "3.3.0",
        {"$.storage.luks.0.clevis.tang.0.advertisement"},
    ),
    ("cex-to-3.4", cfg("3.5.0", **luks(cex={"enabled": True})), "3.4.0", {"$.storage.luks.0.cex.enabled"}),
    (
        "special-mode-bits-to-3.5",
        cfg(
            "3.6.0",
            storage={"files": [{"path": "/s", "mode": 2541}], "directories": [{"path": "/t", "mode": 1023}]},
        ),
        "3.5.0",
        {"$.storage.files.0.mode", "$.storage.directories.0.mode"},
    ),
    (
        "custom-clevis-pin-to-3.5",
        cfg("3.6.0", **luks(clevis={"custom": {"pin": "fido2", "config": "{}"}})),
        "3.5.0",
        {"$.storage.luks.0.clevis.custom.pin"},
    ),
    (
        "format-none-to-3.2",
        cfg("3.3.0", storage={"filesystems": [{"device": "/dev/sdc", "format": "none"}]}),
        "3.2.0",
        {"$.storage.filesystems.0.format"},
    ),
    (
        "gs-source-to-3.1",
        cfg("3.2.0", storage={"files": [{"path": "/f", "contents": {"source": "gs://bucket/obj"}}]}),
        "3.1.0",
        {"$.storage.files.0.contents.source"},
    ),
    (
        "arn-source-to-3.3",
        cfg(
            "3.4.0",
            ignition={"version": "3.4.0", "config": {"merge": [{"source": "arn:aws:s3:::bucket/key"}]}},
        ),
        "3.3.0",
        {"$.ignition.config.merge.0.source"},
    ),
    (
        "sha256-to-3.0",
        cfg(
            "3.1.0",
            storage={
                "files": [
                    {
                        "path": "/f",
                        "contents": {"source": "data:,x", "verification": {"hash": "sha256-" + "a" * 64}},
                    }
                ]
            },
        ),
        "3.0.0",
        {"$.storage.files.0.contents.verification.hash"},
    ),
    (
        "headers-proxy-mount-options-to-3.0",
        cfg(
            "3.1.0",
            ignition={
                "version": "3.1.0",
                "proxy": {"httpProxy": "http://p:3128"},
                "config": {"replace": {"source": "https://x/c.ign", "compression": "gzip"}},
            },
            storage={
                "files": [
                    {
                        "path": "/f",
                        "contents": {"source": "https://x/f", "httpHeaders": [{"name": "A", "value": "b"}]},
                    }
                ],
                "filesystems": [{"device": "/dev/sdc", "format": "ext4", "mountOptions": ["noatime"]}],
            },
        ),
        "3.0.0",
        {
            "$.ignition.proxy.httpProxy",
            "$.ignition.config.replace.compression",
            "$.storage.files.0.contents.httpHeaders.0.name",
            "$.storage.files.0.contents.httpHeaders.0.value",
            "$.storage.filesystems.0.mountOptions.0",
        },
    ),
    (
        "user-deletion-and-resize-to-3.1",
        cfg(
            "3.2.0",
            passwd={
                "users": [{"name": "old", "shouldExist": False}],
                "groups": [{"name": "g", "shouldExist": False}],
            },
            storage={"disks": [{"device": "/dev/sdd", "partitions": [{"number": 1, "resize": True}]}]},
        ),
        "3.1.0",
        {
            "$.passwd.users.0.shouldExist",
            "$.passwd.groups.0.shouldExist",
            "$.storage.disks.0.partitions.0.resize",
        },
    ),
    (
        "every-problem-across-many-steps",
        cfg(
            "3.6.0",
            kernelArguments={"shouldExist": ["quiet"]},
            storage={
                "files": [{"path": "/s", "mode": 3565}],
                "luks": [{"name": "r", "device": "/dev/sdb", "cex": {"enabled": True}}],
            },
        ),
        "3.1.0",
        {
            "$.storage.files.0.mode",
            "$.storage.luks.0.cex.enabled",
            "$.kernelArguments.shouldExist.0",
            "$.storage.luks.0.name",
            "$.storage.luks.0.device",
        },
    ),
    (
        "virtiofs-to-3.6",
        cfg(
            "3.7.0-experimental",
            storage={"filesystems": [{"device": "tag", "format": "virtiofs", "path": "/mnt"}]},
        ),
        "3.6.0",
        {
            "$.storage.filesystems.0.format",
            "$.storage.filesystems.0.device",
        },  # a tag is not a path under 3.6 rules
    ),
    (
        "invalid-result-under-target-rules",
        cfg("3.4.0", storage={"files": [{"path": "relative"}]}),
        "3.3.0",
        {"$.storage.files.0.path"},
    ),
]


@pytest.mark.parametrize(
    ("config", "target", "paths"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_refusal_lists_every_path(config: dict[str, Any], target: str, paths: set[str]) -> None:
    with pytest.raises(TranslationError) as info:
        translate(config, target)
    report = info.value.report
    assert {e.path_str() for e in report.errors} == paths
    for entry in report.errors:
        if entry.code == CODE_UNSUPPORTED:
            assert entry.message.endswith(f"spec {target}"), entry.message


def test_refusal_message_format() -> None:
    with pytest.raises(TranslationError) as info:
        translate(cfg("3.2.0", **luks(clevis={"tpm2": True})), "3.1.0")
    lines = info.value.report.format().splitlines()
    assert "error at $.storage.luks.0.clevis.tpm2: not supported in spec 3.1.0" in lines


DEFAULT_DROPS = [
    (
        "discard-false",
        cfg("3.4.0", **luks(discard=False, clevis={"tpm2": True})),
        "3.3.0",
        "$.storage.luks.0.discard",
    ),
    (
        "cex-disabled",
        cfg("3.5.0", **luks(cex={"enabled": False}, clevis={"tpm2": True})),
        "3.4.0",
        "$.storage.luks.0.cex",
    ),
    ("empty-kargs", cfg("3.3.0", kernelArguments={"shouldExist": []}), "3.2.0", "$.kernelArguments"),
    (
        "user-should-exist-true",
        cfg("3.2.0", passwd={"users": [{"name": "core", "shouldExist": True}]}),
        "3.1.0",
        "$.passwd.users.0.shouldExist",
    ),
    ("empty-luks", cfg("3.2.0", storage={"luks": []}), "3.1.0", "$.storage.luks"),
    (
        "empty-compression",
        cfg(
            "3.1.0",
            ignition={
                "version": "3.1.0",
                "config": {"replace": {"source": "https://x/y", "compression": ""}},
            },
        ),
        "3.0.0",
        "$.ignition.config.replace.compression",
    ),
]


@pytest.mark.parametrize(
    ("config", "target", "dropped"), [r[1:] for r in DEFAULT_DROPS], ids=[r[0] for r in DEFAULT_DROPS]
)
def test_default_values_are_dropped_with_a_warning(config: dict[str, Any], target: str, dropped: str) -> None:
    result, report = translate_with_report(config, target)
    assert result["ignition"]["version"] == target
    assert [e.path_str() for e in report.warnings if e.code == CODE_DROPPED_DEFAULT] == [dropped]
    assert not validate_dict(result, version=target).is_fatal


def test_up_to_3_6_masks_special_bits_with_warning() -> None:
    config = cfg(
        "3.4.0",
        storage={"files": [{"path": "/s", "mode": 2541}], "directories": [{"path": "/d", "mode": 1023}]},
    )
    result, report = translate_with_report(config, "3.6.0")
    assert result["storage"] == {
        "files": [{"path": "/s", "mode": 493}],
        "directories": [{"path": "/d", "mode": 511}],
    }
    assert [e.path_str() for e in report.warnings if e.code == CODE_MASKED] == [
        "$.storage.files.0.mode",
        "$.storage.directories.0.mode",
    ]
    # below 3.6 the bits are inert in both versions and are kept as written
    assert translate(config, "3.5.0")["storage"]["files"][0]["mode"] == 2541


def test_unknown_keys_do_not_spring_to_life_in_a_newer_spec() -> None:
    config = cfg(
        "3.2.0", kernelArguments={"shouldExist": ["x"]}, storage={"files": [{"path": "/f", "Mode": 420}]}
    )
    result, report = translate_with_report(config, "3.3.0")
    assert "kernelArguments" not in result
    assert result["storage"]["files"] == [{"path": "/f", "mode": 420}]
    # as Ignition: an odd-cased key is applied and still warned about (2.14: "Unused key Overwrite")
    assert [e.path_str() for e in report.warnings if e.code == CODE_UNUSED_KEY] == [
        "$.kernelArguments",
        "$.storage.files.0.Mode",
    ]


@pytest.mark.parametrize(
    ("config", "target"),
    [
        (cfg("3.9.0"), "3.0.0"),
        ({"ignition": {}}, "3.0.0"),
        (cfg("3.2.0"), "4.0.0"),
        (cfg("3.2.0", storage={"files": [{"path": "/f", "mode": "0644"}]}), "3.3.0"),
    ],
    ids=["unknown-source-version", "no-version", "unknown-target", "wrong-json-type"],
)
def test_unreadable_inputs_are_refused_with_a_path(config: dict[str, Any], target: str) -> None:
    with pytest.raises(TranslationError) as info:
        translate(config, target)
    assert info.value.report.errors and all(e.path for e in info.value.report.errors)


def test_translate_does_not_modify_its_input() -> None:
    config = cfg("3.5.0", storage={"files": [{"path": "/s", "mode": 2541}]})
    before = json.dumps(config, sort_keys=True)
    translate(config, "3.6.0")
    assert json.dumps(config, sort_keys=True) == before


# ---------------------------------------------------------------------------------------------------
# Generated configs: each feature is valid in every spec from the one that introduced it.


@dataclass(frozen=True)
class Generated:
    config: dict[str, Any]
    needs: str  # the oldest spec that can express it


def _data(draw: st.DrawFn) -> str:
    return encode_data_url(draw(st.binary(max_size=24)), base64=draw(st.sampled_from([True, False, None])))


def _newest(versions: list[str]) -> str:
    return max(versions, key=version_index)


@st.composite
def generated(draw: st.DrawFn, version: str) -> Generated:
    """A valid config of `version`, using a random selection of the features that version has."""
    v = version_index(version)

    def has(minimum: str) -> bool:
        return v >= version_index(minimum)

    needs = ["3.0.0"]
    storage: dict[str, Any] = {}
    ignition: dict[str, Any] = {"version": version}

    files = []
    for i in range(draw(st.integers(0, 3))):
        f: dict[str, Any] = {"path": f"/etc/gen/f{i}"}
        if draw(st.booleans()):
            f["mode"] = draw(st.sampled_from([420, 384, 493, 256]))
        if draw(st.booleans()):
            f["contents"] = {"source": _data(draw)}
            if draw(st.booleans()):
                f["overwrite"] = True
            if has("3.1.0") and draw(st.booleans()):
                f["contents"] = {
                    "source": "https://example.com/f",
                    "httpHeaders": [{"name": "X-A", "value": "1"}],
                }
                needs.append("3.1.0")
            elif draw(st.booleans()):
                algo = draw(st.sampled_from(["sha512", "sha256"] if has("3.1.0") else ["sha512"]))
                f["contents"]["verification"] = {"hash": f"{algo}-" + "0" * (128 if algo == "sha512" else 64)}
                needs.append("3.1.0" if algo == "sha256" else "3.0.0")
        if draw(st.booleans()):
            f["append"] = [{"source": _data(draw)}]
        if draw(st.booleans()):
            f["user"] = draw(st.sampled_from([{"name": "core"}, {"id": 0}]))
        if has("3.6.0") and draw(st.integers(0, 4)) == 0:
            f["mode"] = draw(st.sampled_from([2541, 3565, 1023]))
            needs.append("3.6.0")
        files.append(f)
    if files:
        storage["files"] = files
    if draw(st.booleans()):
        storage["directories"] = [{"path": "/var/gen/d", "mode": draw(st.sampled_from([493, 448]))}]
    if draw(st.booleans()):
        storage["links"] = [{"path": "/usr/local/gen/l", "target": "/etc/gen/f0", "hard": False}]
    if draw(st.booleans()):
        fs: dict[str, Any] = {"device": "/dev/vdb", "format": "xfs", "path": "/var/srv", "label": "srv"}
        if has("3.1.0") and draw(st.booleans()):
            fs["mountOptions"] = ["noatime"]
            needs.append("3.1.0")
        if draw(st.booleans()):
            fs["options"] = ["-m", "crc=1"]
        storage["filesystems"] = [fs]
        if has("3.3.0") and draw(st.booleans()):
            storage["filesystems"].append({"device": "/dev/vdg", "format": "none"})
            needs.append("3.3.0")
    if draw(st.booleans()):
        part: dict[str, Any] = {"number": 1, "label": "data", "sizeMiB": 100, "startMiB": 0}
        if has("3.2.0") and draw(st.booleans()):
            part["resize"] = True
            needs.append("3.2.0")
        storage["disks"] = [{"device": "/dev/vdc", "wipeTable": True, "partitions": [part]}]
    if draw(st.booleans()):
        storage["raid"] = [
            {"name": "md0", "level": "raid1", "devices": ["/dev/vdd", "/dev/vde"], "spares": 0}
        ]
    if has("3.2.0") and draw(st.booleans()):
        needs.append("3.2.0")
        volume: dict[str, Any] = {"name": "crypt", "device": "/dev/vdf", "wipeVolume": True}
        choice = draw(st.sampled_from(["tpm2", "tang", "key", "cex", "custom"]))
        if choice == "tang":
            tang: dict[str, Any] = {"url": "http://tang.example", "thumbprint": "abc"}
            if has("3.4.0") and draw(st.booleans()):
                tang["advertisement"] = '{"payload": "x"}'
                needs.append("3.4.0")
            volume["clevis"] = {"tang": [tang], "threshold": 1}
        elif choice == "key":
            volume["keyFile"] = {"source": _data(draw)}
        elif choice == "cex" and has("3.5.0"):
            volume["cex"] = {"enabled": True}
            needs.append("3.5.0")
        elif choice == "custom" and has("3.6.0"):
            volume["clevis"] = {"custom": {"pin": "fido2", "config": "{}"}}
            needs.append("3.6.0")
        else:
            volume["clevis"] = {"tpm2": True}
        if has("3.4.0") and draw(st.booleans()):
            volume["discard"] = True
            volume["openOptions"] = ["--allow-discards"]
            needs.append("3.4.0")
        storage["luks"] = [volume]
    if has("3.2.0") and draw(st.booleans()):
        storage.setdefault("files", []).append(
            {"path": "/etc/gen/gs", "contents": {"source": "gs://bucket/object"}}
        )
        needs.append("3.2.0")
    if has("3.4.0") and draw(st.booleans()):
        storage.setdefault("files", []).append(
            {"path": "/etc/gen/arn", "contents": {"source": "arn:aws:s3:::bucket/key"}}
        )
        needs.append("3.4.0")

    out: dict[str, Any] = {"ignition": ignition}
    if has("3.1.0") and draw(st.booleans()):
        ignition["proxy"] = {"httpProxy": "http://proxy:3128", "noProxy": ["internal.example"]}
        needs.append("3.1.0")
    if draw(st.booleans()):
        merge_item: dict[str, Any] = {"source": "https://example.com/base.ign"}
        if has("3.1.0") and draw(st.booleans()):
            merge_item["httpHeaders"] = [{"name": "Authorization", "value": "Bearer x"}]
            needs.append("3.1.0")
        ignition["config"] = {"merge": [merge_item]}
    if draw(st.booleans()):
        ignition["timeouts"] = {"httpTotal": draw(st.integers(0, 600))}
    if storage:
        out["storage"] = storage
    if draw(st.booleans()):
        unit: dict[str, Any] = {
            "name": "gen.service",
            "enabled": True,
            "contents": "[Unit]\nDescription=g\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
        }
        if draw(st.booleans()):
            unit["dropins"] = [{"name": "10-env.conf", "contents": "[Service]\nEnvironment=A=1\n"}]
        out["systemd"] = {"units": [unit, {"name": "masked.service", "mask": True}]}
    if draw(st.booleans()):
        user: dict[str, Any] = {
            "name": "core",
            "sshAuthorizedKeys": ["ssh-ed25519 AAAA gen"],
            "groups": ["wheel"],
        }
        groups: list[dict[str, Any]] = [{"name": "ops", "gid": 1500}]
        if has("3.2.0") and draw(st.booleans()):
            groups.append({"name": "legacy", "shouldExist": False})
            needs.append("3.2.0")
        out["passwd"] = {"users": [user], "groups": groups}
    if has("3.3.0") and draw(st.booleans()):
        out["kernelArguments"] = {"shouldExist": ["console=ttyS0"], "shouldNotExist": ["quiet"]}
        needs.append("3.3.0")
    return Generated(out, _newest(needs))


PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(st.sampled_from(SUPPORTED_VERSIONS).flatmap(lambda v: st.tuples(st.just(v), generated(v))), st.data())
def test_up_then_down_returns_the_original(pair: tuple[str, Generated], data: st.DataObject) -> None:
    version, gen = pair
    assert not validate_dict(gen.config, version=version).is_fatal, validate_dict(
        gen.config, version=version
    ).format()
    newer = [v for v in ACCEPTED_VERSIONS if version_index(v) >= version_index(version)]
    target = data.draw(st.sampled_from(newer))
    up = translate(gen.config, target)
    assert up["ignition"]["version"] == target
    assert translate(up, version) == gen.config


def _check_refusal_or_valid(gen: Generated, target: str) -> dict[str, Any] | None:
    expressible = version_index(gen.needs) <= version_index(target)
    try:
        result = translate(gen.config, target)
    except TranslationError as exc:
        assert not expressible, exc.report.format()
        assert exc.report.errors and all(e.path for e in exc.report.errors)
        return None
    assert expressible, f"{gen.needs} features were translated to {target}"
    assert result["ignition"]["version"] == target
    report: Report = validate_dict(result, version=target)
    assert not report.is_fatal, report.format()
    return result


@PROPERTY_SETTINGS
@given(generated("3.6.0"), st.sampled_from(SUPPORTED_VERSIONS[:-1]))
def test_down_succeeds_exactly_when_expressible_and_validates(gen: Generated, target: str) -> None:
    _check_refusal_or_valid(gen, target)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["3.0.0", "3.1.0", "3.2.0", "3.3.0"]).flatmap(
        lambda v: st.tuples(st.just(v), generated(v))
    )
)
def test_downward_results_pass_the_real_ignition_validate(pair: tuple[str, Generated]) -> None:
    """Debian's ignition-validate 2.14 reads 3.0-3.3: it accepts what we translate down from 3.6 to those."""
    tool = real_tool("ignition-validate")
    target, gen = pair
    newest = translate(gen.config, "3.6.0")
    result = _check_refusal_or_valid(Generated(newest, gen.needs), target)
    assert result is not None
    run = subprocess.run([str(tool), "-"], input=json.dumps(result).encode(), capture_output=True, timeout=30)
    assert run.returncode == 0, (run.stdout + run.stderr).decode()


# ---------------------------------------------------------------------------------------------------
# `mco ignition translate`


def _write(tmp_path: Path, name: str, config: Any) -> str:
    target = tmp_path / name
    target.write_text(config if isinstance(config, str) else json.dumps(config))
    return str(target)


CLI_CASES = [
    ("up", cfg("3.2.0", storage={"files": [{"path": "/a", "mode": 420}]}), "3.4.0", 0, "", ""),
    ("down", cfg("3.4.0", systemd={"units": [{"name": "a.service", "mask": True}]}), "3.2.0", 0, "", ""),
    (
        "refused",
        cfg("3.3.0", kernelArguments={"shouldExist": ["foo"]}),
        "3.2.0",
        1,
        "",
        "error at $.kernelArguments.shouldExist.0",
    ),
    (
        "invalid-input",
        cfg("3.3.0", storage={"files": [{"path": "rel"}]}),
        "3.2.0",
        1,
        "",
        "f.ign:1:67): path not absolute",
    ),
    ("not-json", '{"ignition": ', "3.2.0", 1, "", "error"),
    ("unknown-target", cfg("3.3.0"), "3.9.0", 2, "", "unknown spec version"),
    (
        "result-invalid-after-up",
        cfg("3.2.0", storage={"links": [{"path": "/l"}]}),
        "3.3.0",
        1,
        "",
        "link target is required",
    ),
]


@pytest.mark.parametrize(
    ("config", "to", "code", "stdout", "stderr"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_cli_translate(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    config: Any,
    to: str,
    code: int,
    stdout: str,
    stderr: str,
) -> None:
    from cli.main import main

    path = _write(tmp_path, "f.ign", config)
    assert main(["ignition", "translate", "--to", to, path]) == code
    out, err = capsys.readouterr()
    assert stderr in err
    if code == 0:
        assert out.endswith("\n")
        assert json.loads(out) == translate(config, to)
    else:
        assert out == ""


def test_cli_translate_unreadable_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    assert main(["ignition", "translate", "--to", "3.3.0", str(tmp_path / "missing.ign")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_cli_translate_missing_to_is_usage_error(tmp_path: Path) -> None:
    from cli.main import main

    with pytest.raises(SystemExit) as info:
        main(["ignition", "translate", _write(tmp_path, "f.ign", cfg("3.3.0"))])
    assert info.value.code == 2


def test_cli_translate_prints_canonical_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    path = _write(
        tmp_path, "f.ign", {"storage": {"files": [{"path": "/a"}]}, "ignition": {"version": "3.1.0"}}
    )
    assert main(["ignition", "translate", "--to", "3.1.0", path]) == 0
    assert capsys.readouterr().out == '{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"/a"}]}}\n'


# ---------------------------------------------------------------------------------------------------
# Differential: the real Ignition 2.14 binary translates every config it reads (3.0-3.3) up to its newest
# spec before caching it. Ours, translated to 3.3.0, must hold the same fields (ignoring the version and Go's
# always-present empty structs). Remote config references are left out: the fetch stage would fetch them.


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.sampled_from(["3.0.0", "3.1.0", "3.2.0", "3.3.0"]).flatmap(generated))
def test_upward_translation_holds_what_the_real_ignition_holds(tmp_path: Path, gen: Generated) -> None:
    config = copy.deepcopy(gen.config)
    config["ignition"].pop("config", None)
    ours = translate(config, "3.3.0")
    ours["ignition"].pop("version")
    assert without_empties(ours) == fetch_stage(config, tmp_path)


def test_cli_translate_report_has_positions_and_no_repeats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli.main import main

    text = '{"ignition": {"version": "3.4.0"},\n "storage": {"files": [{"path": "/s", "Bogus": 1}],\n  "luks": [{"name": "r", "device": "/dev/sdb", "discard": true}]}}'
    path = _write(tmp_path, "f.ign", text)
    assert main(["ignition", "translate", "--to", "3.3.0", path]) == 1
    err = capsys.readouterr().err.splitlines()
    assert f"error at $.storage.luks.0.discard ({path}:3:59): not supported in spec 3.3.0" in err
    assert sum("unused key Bogus" in line for line in err) == 1


def test_cli_merge_translates_the_older_input_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    parent = _write(tmp_path, "p.ign", cfg("3.5.0", storage={"files": [{"path": "/s", "mode": 2541}]}))
    child = _write(tmp_path, "c.ign", cfg("3.6.0", storage={"files": [{"path": "/s", "overwrite": False}]}))
    assert main(["ignition", "merge", parent, child]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["storage"]["files"] == [{"path": "/s", "mode": 493, "overwrite": False}]
    assert f"warning at $.storage.files.0.mode ({parent}:1:" in err and "masked" in err


# ---------------------------------------------------------------------------------------------------
# Robustness: whatever JSON comes in, the transforms answer or raise an IgnitionError (never crash).

_SHAPED_KEYS = st.sampled_from(
    [
        "storage",
        "files",
        "directories",
        "links",
        "luks",
        "path",
        "mode",
        "contents",
        "source",
        "append",
        "httpHeaders",
        "name",
        "value",
        "kernelArguments",
        "shouldExist",
        "passwd",
        "users",
        "ignition",
        "config",
        "merge",
        "replace",
        "clevis",
        "custom",
        "pin",
        "cex",
        "Mode",
        "bogus",
    ]
)
_ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5000, 5000)
    | st.sampled_from(["", "/a", "data:,x", "gs://b/o", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_SHAPED_KEYS, inner, max_size=4),
    max_leaves=25,
)


def _document(version: str, body: dict[str, Any]) -> dict[str, Any]:
    doc = dict(body)
    ign = doc.get("ignition")
    doc["ignition"] = {**(ign if isinstance(ign, dict) else {}), "version": version}
    return doc


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(ACCEPTED_VERSIONS),
    st.sampled_from(ACCEPTED_VERSIONS),
    st.dictionaries(_SHAPED_KEYS, _ANY_JSON, max_size=4),
    st.dictionaries(_SHAPED_KEYS, _ANY_JSON, max_size=4),
)
def test_transforms_never_crash_on_any_json(
    source: str, target: str, a: dict[str, Any], b: dict[str, Any]
) -> None:
    from ignition.errors import IgnitionError
    from ignition.merge import merge
    from ignition.references import render_references

    one, other = _document(source, a), _document(source, b)
    for run in (
        lambda: translate(one, target),
        lambda: merge(one, other),
        lambda: render_references(one, version=target),
    ):
        try:
            result = run()
        except IgnitionError as exc:
            assert str(exc)
            continue
        assert isinstance(result, dict)
