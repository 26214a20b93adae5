"""`mco certs init` and `mco ignition pointer`: files, modes, SANs, reuse of the CA, the pointer's shape."""

from __future__ import annotations

import base64
import ipaddress
import json
import subprocess
from pathlib import Path

import pytest
from cryptography import x509

from cli.main import main
from server.certs import CertError, init_certs
from server.pointer import PointerError, config_url, pointer_config
from tests.tools import real_tool


def test_certs_init_files_modes_and_sans(tmp_path: Path) -> None:
    result = init_certs(tmp_path / "c", dns=["mcs.example.test"], ips=["127.0.0.1", "::1"])
    assert result.ca_created
    for name, mode in (("ca.key", 0o600), ("tls.key", 0o600), ("ca.crt", 0o644), ("tls.crt", 0o644)):
        assert ((tmp_path / "c" / name).stat().st_mode & 0o777) == mode, name
    cert = x509.load_pem_x509_certificate((tmp_path / "c/tls.crt").read_bytes())
    ca = x509.load_pem_x509_certificate((tmp_path / "c/ca.crt").read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["mcs.example.test"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]
    cert.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_certs_init_again_reuses_the_ca(tmp_path: Path) -> None:
    first = init_certs(tmp_path, ips=["127.0.0.1"])
    ca_before = (tmp_path / "ca.crt").read_bytes()
    cert_before = (tmp_path / "tls.crt").read_bytes()
    second = init_certs(tmp_path, ips=["127.0.0.1"])
    assert first.ca_created and not second.ca_created
    assert (tmp_path / "ca.crt").read_bytes() == ca_before
    assert (tmp_path / "tls.crt").read_bytes() != cert_before
    x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes()).verify_directly_issued_by(
        x509.load_pem_x509_certificate(ca_before))


@pytest.mark.parametrize(("kwargs", "path"), [
    ({"ips": ["300.1.1.1"]}, "--ip '300.1.1.1'"),
    ({"dns": ["a b"]}, "--dns 'a b'"),
    ({}, "--dns/--ip"),
    ({"ips": ["127.0.0.1"], "days": 0}, "--days"),
], ids=["bad-ip", "bad-dns", "no-san", "bad-days"])
def test_certs_init_refuses(tmp_path: Path, kwargs: dict, path: str) -> None:
    with pytest.raises(CertError) as info:
        init_certs(tmp_path, **kwargs)
    assert info.value.path == path
    assert not (tmp_path / "tls.key").exists()


def test_certs_cli_exit_codes(tmp_path: Path) -> None:
    assert main(["certs", "init", str(tmp_path / "c"), "--ip", "127.0.0.1"]) == 0
    assert main(["certs", "init", str(tmp_path / "d"), "--ip", "nope"]) == 1
    (tmp_path / "c/ca.key").write_text("garbage")
    assert main(["certs", "init", str(tmp_path / "c"), "--ip", "127.0.0.1"]) == 2


@pytest.mark.parametrize(("base", "pool", "url"), [
    ("https://mcs.example.test:22623", "worker", "https://mcs.example.test:22623/config/worker"),
    ("https://mcs.example.test:22623/", "worker", "https://mcs.example.test:22623/config/worker"),
    ("http://10.0.0.1:22624/config/infra", "infra", "http://10.0.0.1:22624/config/infra"),
    ("https://lb/mcs", "master", "https://lb/mcs/config/master"),
], ids=["plain", "slash", "already-full", "prefix"])
def test_config_url(base: str, pool: str, url: str) -> None:
    assert config_url(base, pool) == url


@pytest.mark.parametrize(("kwargs", "path"), [
    ({"pool": "../etc", "url": "https://h"}, "--pool"),
    ({"pool": "worker\n", "url": "https://h"}, "--pool"),
    ({"pool": "worker", "url": "ftp://h"}, "--url"),
    ({"pool": "worker", "url": "https://h?x=1"}, "--url"),
    ({"pool": "worker", "url": "https://h", "ca_pem": b"not pem"}, "--ca"),
    ({"pool": "worker", "url": "https://h", "token": "two words"}, "--token-file"),
    ({"pool": "worker", "url": "https://h", "token": "t", "version": "3.0.0"}, "--spec-version"),
    ({"pool": "worker", "url": "https://h", "version": "2.2.0"}, "--spec-version"),
    ({"pool": "worker", "url": "https://h", "node": "Node_A"}, "--node"),
    ({"pool": "worker", "url": "https://h", "node": "node-a", "machine": ["mac=52:54:00:00:00:0a"]}, "--node"),
    ({"pool": "worker", "url": "https://h", "node_token": "t"}, "--node-token-file"),
    ({"pool": "worker", "url": "https://h", "node": "node-a", "node_token": "t", "token": "p"}, "--node-token-file"),
    ({"pool": "worker", "url": "https://h", "node": "node-a", "node_token": "two words"}, "--node-token-file"),
], ids=["traversal", "trailing-newline", "scheme", "query", "bad-ca", "bad-token", "headers-need-3.1", "bad-version",
        "bad-node", "node-and-facts", "node-token-without-node", "node-token-and-pool-token", "bad-node-token"])
def test_pointer_refuses(kwargs: dict, path: str) -> None:
    with pytest.raises(PointerError) as info:
        pointer_config(**kwargs)
    assert info.value.path == path


def test_pointer_shape(tmp_path: Path) -> None:
    init_certs(tmp_path, ips=["127.0.0.1"])
    pem = (tmp_path / "ca.crt").read_bytes()
    config = pointer_config(pool="worker", url="https://127.0.0.1:22623", ca_pem=pem, token="abc")
    ign = config["ignition"]
    assert ign["version"] == "3.1.0"
    assert ign["config"]["merge"] == [{"source": "https://127.0.0.1:22623/config/worker",
                                       "httpHeaders": [{"name": "Authorization", "value": "Bearer abc"}]}]
    ca_source = ign["security"]["tls"]["certificateAuthorities"][0]["source"]
    assert ca_source.startswith("data:text/plain;charset=utf-8;base64,")
    assert base64.b64decode(ca_source.split(",", 1)[1]) == pem
    replaced = pointer_config(pool="worker", url="http://h", replace=True)["ignition"]
    assert replaced["config"] == {"replace": {"source": "http://h/config/worker"}}
    assert "security" not in replaced


@pytest.mark.parametrize("version", ["3.1.0", "3.2.0", "3.3.0"])
@pytest.mark.parametrize("replace", [False, True], ids=["merge", "replace"])
def test_pointer_passes_the_real_validator(tmp_path: Path, version: str, replace: bool) -> None:
    validate = real_tool("ignition-validate")
    init_certs(tmp_path, ips=["127.0.0.1"])
    (tmp_path / "token").write_text("s3cret\n")
    args = ["ignition", "pointer", "--pool", "worker", "--url", "https://127.0.0.1:22623", "--ca",
            str(tmp_path / "ca.crt"), "--token-file", str(tmp_path / "token"), "--spec-version", version,
            "--output-file", str(tmp_path / "pointer.ign")]
    assert main(args + (["--replace"] if replace else [])) == 0
    assert (tmp_path / "pointer.ign").stat().st_mode & 0o777 == 0o600  # it holds a token
    assert json.loads((tmp_path / "pointer.ign").read_text())["ignition"]["version"] == version
    done = subprocess.run([str(validate), str(tmp_path / "pointer.ign")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "" and done.stderr.strip() == ""


def test_pointer_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ignition", "pointer", "--pool", "worker", "--url", "http://h:22624"]) == 0
    assert json.loads(capsys.readouterr().out)["ignition"]["config"]["merge"][0]["source"] == "http://h:22624/config/worker"
    assert main(["ignition", "pointer", "--pool", "Bad/Pool", "--url", "http://h"]) == 1
    assert main(["ignition", "pointer", "--pool", "worker", "--url", "http://h", "--ca", str(tmp_path / "none")]) == 2


def test_pointer_names_a_node_with_its_own_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--node NAME --node-token-file F`: the reference asks for NAME's own config (`?node=NAME`) with NAME's node
    token, the one credential the server serves a registered node's config to; the file is a secret (0600)."""
    reference = pointer_config(pool="worker", url="https://h:22623", node="node-a", node_token="n0de")[
        "ignition"]["config"]["merge"][0]
    assert reference == {"source": "https://h:22623/config/worker?node=node-a",
                         "httpHeaders": [{"name": "Authorization", "value": "Bearer n0de"}]}
    (tmp_path / "node-a.token").write_text("n0de\n")
    out = tmp_path / "node-a.ign"
    args = ["ignition", "pointer", "--pool", "worker", "--url", "https://h:22623", "--node", "node-a"]
    assert main([*args, "--node-token-file", str(tmp_path / "node-a.token"), "--output-file", str(out)]) == 0
    assert json.loads(out.read_text())["ignition"]["config"]["merge"][0] == reference
    assert out.stat().st_mode & 0o777 == 0o600
    assert main([*args, "--node-token-file", str(tmp_path / "none")]) == 2
    assert main([*args, "--machine", "hostname=node-a"]) == 1
    assert "--node" in capsys.readouterr().err
