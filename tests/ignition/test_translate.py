"""Translation between spec versions: the corpus cases, each step's refusals, dropped defaults and masked modes,
and what translation never does (change its input, read what it cannot). Properties over generated configs
are in test_translate_properties.py, the command line in test_translate_cli.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ignition.errors import TranslationError
from ignition.translate import translate, translate_with_report, translation_steps
from ignition.translations import STEPS
from ignition.translations.common import CODE_DROPPED_DEFAULT, CODE_MASKED, CODE_UNSUPPORTED, CODE_UNUSED_KEY
from ignition.validate import validate_dict
from ignition.versions import ACCEPTED_VERSIONS
from tests.ignition.configs import cfg, luks

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
