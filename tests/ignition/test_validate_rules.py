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


def _among_plain(odd: dict[str, Any], at: int = 7) -> dict[str, Any]:
    """`odd` as file `at` of 12 ordinary files (plain path, mode 0644, a data URL source): the shape
    check_files answers for a whole list at once, so each row checks that one odd file still gets its entries."""
    files: list[dict[str, Any]] = [{"path": f"/etc/plain/{i}", "mode": 0o644, "contents": {"source": f"data:,{i}%0A"}}
                                   for i in range(12)]
    files[at] = odd
    return {"storage": {"files": files}}


# (id, versions, the odd file, expected (severity, code, path inside the config) entries)
AMONG_PLAIN: list[tuple[str, tuple[str, ...], dict[str, Any], list[tuple[str, str, tuple[Any, ...]]]]] = [
    ("plain", ALL, {"path": "/etc/x", "mode": 0o600, "contents": {"source": "data:;base64,eA=="}}, []),
    ("no-contents", ALL, {"path": "/etc/x"}, []),
    ("empty-contents", ALL, {"path": "/etc/x", "contents": {}}, []),
    ("newline-in-path", ALL, {"path": "/etc/x\n/y"}, []),
    ("relative", ALL, {"path": "etc/x"}, [("error", "path-relative", ("storage", "files", 7, "path"))]),
    ("double-slash", ALL, {"path": "/etc//x"}, [("error", "path-dirty", ("storage", "files", 7, "path"))]),
    ("dot", ALL, {"path": "/etc/./x"}, [("error", "path-dirty", ("storage", "files", 7, "path"))]),
    ("trailing-slash", ALL, {"path": "/etc/x/"}, [("error", "path-dirty", ("storage", "files", 7, "path"))]),
    ("empty-path", ALL, {"path": ""}, [("error", "path-empty", ("storage", "files", 7, "path"))]),
    ("special-bits", ALL[:6], {"path": "/etc/x", "mode": 0o4755},
     [("warning", "mode-special-bits", ("storage", "files", 7, "mode"))]),
    ("special-bits-3.6", ("3.6.0",), {"path": "/etc/x", "mode": 0o4755}, []),
    ("mode-too-big", ("3.6.0",), {"path": "/etc/x", "mode": 0o10000},
     [("error", "mode-illegal", ("storage", "files", 7, "mode"))]),
    ("mode-negative", ALL[:6], {"path": "/etc/x", "mode": -1},  # Go tests the bits of the uint32 too
     [("error", "mode-illegal", ("storage", "files", 7, "mode")),
      ("warning", "mode-special-bits", ("storage", "files", 7, "mode"))]),
    ("mode-negative-3.6", ("3.6.0",), {"path": "/etc/x", "mode": -1},
     [("error", "mode-illegal", ("storage", "files", 7, "mode"))]),
    ("overwrite-no-contents", ALL, {"path": "/etc/x", "overwrite": True},
     [("error", "overwrite-without-source", ("storage", "files", 7, "overwrite"))]),
    ("overwrite-empty-contents", ALL, {"path": "/etc/x", "overwrite": True, "contents": {}},
     [("error", "overwrite-without-source", ("storage", "files", 7, "overwrite"))]),
    ("overwrite-with-source", ALL, {"path": "/etc/x", "overwrite": True, "contents": {"source": "data:,x"}}, []),
    ("bad-data-url", ALL, {"path": "/etc/x", "contents": {"source": "data:;base64,eA"}},
     [("error", "data-url", ("storage", "files", 7, "contents", "source"))]),
    ("bad-scheme", ALL, {"path": "/etc/x", "contents": {"source": "ftp://h/x"}},
     [("error", "url-scheme", ("storage", "files", 7, "contents", "source"))]),
    ("https-source", ALL, {"path": "/etc/x", "contents": {"source": "https://h/x"}}, []),
    ("owner-id-and-name", ALL, {"path": "/etc/x", "user": {"id": 1, "name": "a"}},
     [("error", "owner-id-and-name", ("storage", "files", 7, "user"))]),
    ("hash-without-source", ALL, {"path": "/etc/x", "contents": {"verification": {"hash": H512}}},
     [("error", "verification-without-source", ("storage", "files", 7, "contents", "verification", "hash"))]),
    ("append-bad-url", ALL, {"path": "/etc/x", "append": [{"source": "ftp://h/x"}]},
     [("error", "url-scheme", ("storage", "files", 7, "append", 0, "source"))]),
    ("header-dup", ALL[1:], {"path": "/etc/x", "contents": {"source": "https://h/x",
                                                          "httpHeaders": [{"name": "A"}, {"name": "A"}]}},
     [("error", "duplicate", ("storage", "files", 7, "contents", "httpHeaders", 1))]),
    ("same-path-twice", ALL, {"path": "/etc/plain/3"}, [("error", "duplicate", ("storage", "files", 7))]),
]
AMONG_CASES = [(f"{rid}@{v}", v, odd, entries) for rid, versions, odd, entries in AMONG_PLAIN for v in versions]


@pytest.mark.parametrize(("version", "odd", "entries"), [c[1:] for c in AMONG_CASES], ids=[c[0] for c in AMONG_CASES])
def test_odd_file_among_plain_ones(version: str, odd: dict[str, Any], entries: list[tuple[str, str, tuple[Any, ...]]]) -> None:
    """Every entry of one odd file among plain ones, at its index: a list-wide test never hides one."""
    report = validate_dict(_doc(version, _among_plain(odd)))
    assert [(e.severity, e.code, tuple(e.path)) for e in report.entries] == entries, report.format()
