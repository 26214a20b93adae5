"""Rules per spec version, beyond the corpus: each row runs on every version it names (habit 10).

Verdicts for 3.0-3.3 rows were cross-checked with Debian's ignition-validate 2.14 while writing them;
3.4+ rows follow the notes (Ignition HEAD).
"""

from __future__ import annotations

from typing import Any

import pytest

from ignition import validate_dict

ALL = ("3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0")
H512 = "sha512-" + "a" * 128
H256 = "sha256-" + "b" * 64


def _file(**kw: Any) -> dict[str, Any]:
    return {"storage": {"files": [{"path": "/etc/f", **kw}]}}


def _src(source: str, **kw: Any) -> dict[str, Any]:
    return _file(contents={"source": source, **kw})


# (id, versions, config without `ignition.version`, expected error codes (sorted); [] means valid)
ROWS: list[tuple[str, tuple[str, ...], dict[str, Any], list[str]]] = [
    ("sha512-ok", ALL, _src("data:,x", verification={"hash": H512}), []),
    ("sha256-3.0", ("3.0.0",), _src("data:,x", verification={"hash": H256}), ["hash-function"]),
    ("sha256-3.1+", ALL[1:], _src("data:,x", verification={"hash": H256}), []),
    ("sha256-short", ALL[1:], _src("data:,x", verification={"hash": "sha256-" + "b" * 128}), ["hash-size"]),
    ("hash-without-source", ALL, _file(contents={"verification": {"hash": H512}}), ["verification-without-source"]),
    ("gs-before-3.2", ALL[:2], _src("gs://b/o"), ["url-scheme"]),
    ("gs-3.2+", ALL[2:], _src("gs://b/o"), []),
    ("arn-before-3.4", ALL[:4], _src("arn:aws:s3:::bucket/key"), ["url-scheme"]),
    ("arn-3.4+", ALL[4:], _src("arn:aws:s3:::bucket/key?versionId=v1"), []),
    ("arn-empty-version-id", ALL[4:], _src("arn:aws:s3:::bucket/key?versionId="), ["s3-version-id"]),
    ("arn-not-s3", ALL[4:], _src("arn:aws:iam::123:role/x"), ["s3-arn-invalid"]),
    ("s3-empty-version-id", ALL, _src("s3://b/k?versionId="), ["s3-version-id"]),
    ("data-newline-is-ctl", ALL, _src("data:;base64,aGVs\nbG8="), ["url-invalid"]),
    ("data-bad-base64", ALL, _src("data:;base64,aGVsbG8"), ["data-url"]),
    ("data-media-type-needs-subtype", ALL, _src("data:text,x"), ["data-url"]),
    ("empty-source-is-empty-file", ALL, _file(overwrite=True, contents={"source": ""}), []),
    ("overwrite-without-source", ALL, _file(overwrite=True), ["overwrite-without-source"]),
    ("headers-3.1+", ALL[1:], _src("https://x/y", httpHeaders=[{"name": "A", "value": "b"}]), []),
    ("headers-data-scheme", ALL[1:], _src("data:,x", httpHeaders=[{"name": "A", "value": "b"}]), ["http-headers-scheme"]),
    ("header-without-value", ALL[1:], _src("https://x/y", httpHeaders=[{"name": "A"}]), []),
    ("header-empty-value", ALL[1:], _src("https://x/y", httpHeaders=[{"name": "A", "value": ""}]), ["http-header-invalid"]),
    ("header-dup", ALL[1:], _src("https://x/y", httpHeaders=[{"name": "A"}, {"name": "A"}]), ["duplicate"]),
    ("special-bits-warn-only", ALL, _file(mode=0o4755), []),
    ("mode-too-big", ALL, _file(mode=0o10000), ["mode-illegal"]),
    ("format-none-before-3.3", ALL[:3], {"storage": {"filesystems": [{"device": "/dev/sda", "format": "none"}]}}, ["filesystem-format"]),
    ("format-none-3.3+", ALL[3:], {"storage": {"filesystems": [{"device": "/dev/sda", "format": "none"}]}}, []),
    ("raid-empty-level-before-3.3", ALL[:3], {"storage": {"raid": [{"name": "md0", "devices": ["/dev/a"]}]}}, ["raid-level"]),
    ("raid-missing-level-3.3+", ALL[3:], {"storage": {"raid": [{"name": "md0", "devices": ["/dev/a"]}]}}, ["raid-level-required"]),
    ("link-no-target-before-3.3", ALL[:3], {"storage": {"links": [{"path": "/l"}]}}, []),
    ("link-no-target-3.3+", ALL[3:], {"storage": {"links": [{"path": "/l"}]}}, ["link-target-required"]),
    ("hard-link-to-dir-relative", ALL, {"storage": {"directories": [{"path": "/a/b/c"}], "links": [{"path": "/a/b", "target": "c", "hard": True}]}},
     ["hard-link-to-directory", "path-through-link"]),
    ("file-dir-same-path", ALL, {"storage": {"files": [{"path": "/x"}], "directories": [{"path": "/x"}]}}, ["duplicate"]),
    ("kargs-both-lists", ALL[3:], {"kernelArguments": {"shouldExist": ["quiet"], "shouldNotExist": ["quiet"]}}, ["duplicate"]),
    ("custom-pin-3.3-3.5", ALL[3:6], {"storage": {"luks": [{"name": "d", "device": "/dev/sdb", "clevis": {"custom": {"pin": "x", "config": "{}"}}}]}}, ["clevis-pin"]),
    ("custom-pin-3.6", ("3.6.0",), {"storage": {"luks": [{"name": "d", "device": "/dev/sdb", "clevis": {"custom": {"pin": "x", "config": "{}"}}}]}}, []),
    ("tang-advertisement", ALL[4:], {"storage": {"luks": [{"name": "d", "device": "/dev/sdb", "clevis": {"tang": [{"url": "http://t", "thumbprint": "t", "advertisement": "{"}]}}]}}, ["tang-advertisement"]),
    ("cex-with-tpm2", ALL[5:], {"storage": {"luks": [{"name": "d", "device": "/dev/sdb", "cex": {"enabled": True}, "clevis": {"tpm2": True}}]}}, ["cex-with-clevis"]),
    ("partition-zero-and-should-not-exist", ALL, {"storage": {"disks": [{"device": "/dev/sda", "partitions": [{"number": 1, "shouldExist": False}, {"label": "z"}]}]}},
     ["partition-zero-with-should-not-exist"]),
    ("unit-line-too-long", ALL, {"systemd": {"units": [{"name": "a.service", "contents": "[Unit]\nDescription=" + "x" * 2100 + "\n"}]}}, ["unit-content"]),
    ("unit-path-conflict", ALL, {"systemd": {"units": [{"name": "a.service", "contents": "[Unit]\n"}]},
                                 "storage": {"files": [{"path": "/etc/systemd/system/a.service"}]}}, ["path-conflicts-systemd"]),
    ("proxy-ftp", ALL[1:], {"ignition": {"proxy": {"httpProxy": "ftp://p"}}}, ["proxy-scheme"]),
    ("merge-without-source-3.0", ("3.0.0",), {"ignition": {"config": {"merge": [{"verification": {"hash": H512}}]}}}, []),
    ("merge-without-source-3.1+", ALL[1:], {"ignition": {"config": {"merge": [{}]}}}, ["source-required"]),
]


def _doc(version: str, body: dict[str, Any]) -> dict[str, Any]:
    doc = {k: v for k, v in body.items() if k != "ignition"}
    doc["ignition"] = {"version": version, **body.get("ignition", {})}
    return doc


CASES = [(f"{rid}@{v}", v, body, codes) for rid, versions, body, codes in ROWS for v in versions]


@pytest.mark.parametrize(("version", "body", "codes"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(version: str, body: dict[str, Any], codes: list[str]) -> None:
    report = validate_dict(_doc(version, body))
    assert sorted({e.code for e in report.errors}) == codes, report.format()
