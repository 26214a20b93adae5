"""The etcd store over TLS with client-certificate authentication (`--etcd-cacert/--etcd-cert/--etcd-key`), against
a real etcd member that requires client certificates; certificates made with the real openssl."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.etcd_store import EtcdStore
from fleet.etcd_url import parse_url
from fleet.rendered import PoolRecord
from fleet.store import StoreError
from fleet.store_open import open_store
from tests.etcd_cluster import free_ports
from tests.tools import real_tool


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run([str(real_tool("openssl")), *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _certs(d: Path) -> None:
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _openssl("req", "-x509", *ec, "-days", "2", "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=etcd-ca", cwd=d)
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n"), ("stranger", "extendedKeyUsage=clientAuth\n")):
        _openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
        (d / f"{name}.ext").write_text(ext)
        signer = ["-CA", "ca.crt", "-CAkey", "ca.key"] if name != "stranger" else ["-signkey", "stranger.key"]
        _openssl("x509", "-req", "-in", f"{name}.csr", *signer, "-days", "2", "-out", f"{name}.crt",
                 "-extfile", f"{name}.ext", cwd=d)


@pytest.fixture
def tls_etcd(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    etcd = real_tool("etcd")
    _certs(tmp_path)
    client, peer = free_ports(2)
    proc = subprocess.Popen(
        [str(etcd), "--name", "t", "--data-dir", str(tmp_path / "data"),
         "--listen-client-urls", f"https://127.0.0.1:{client}", "--advertise-client-urls", f"https://127.0.0.1:{client}",
         "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-cluster", f"t=http://127.0.0.1:{peer}",
         "--cert-file", str(tmp_path / "server.crt"), "--key-file", str(tmp_path / "server.key"),
         "--trusted-ca-file", str(tmp_path / "ca.crt"), "--client-cert-auth", "--logger", "zap", "--log-outputs", "stderr"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield tmp_path, client
    finally:
        proc.kill()
        proc.wait()


def _store(d: Path, port: int, who: str | None) -> EtcdStore:
    cert = (d / f"{who}.crt") if who else None
    key = (d / f"{who}.key") if who else None
    return open_store(parse_url(f"etcd://127.0.0.1:{port}/tls", cacert=d / "ca.crt", cert=cert, key=key))


def test_tls_client_certificate_is_required_and_works(tls_etcd: tuple[Path, int]) -> None:
    d, port = tls_etcd
    good = _store(d, port, "client")
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                good.put_pool(PoolRecord(name="worker", current="rendered-worker-a"))
                break
            except StoreError:
                assert time.monotonic() < deadline, "TLS etcd never answered"
                time.sleep(0.1)
        assert good.get_pool("worker").current == "rendered-worker-a"
    finally:
        good.conn.close()
    for who in (None, "stranger"):
        refused = _store(d, port, who)
        try:
            with pytest.raises(StoreError):
                refused.list_pools()
        finally:
            refused.conn.close()
