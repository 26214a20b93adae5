"""`mco certs init DIR`: a CA and a serving certificate for the HTTPS listener, made with `cryptography`.

Files in DIR: `ca.crt`, `ca.key`, `tls.crt`, `tls.key` (the MCS's names); keys are written 0600 and
every file atomically. An existing CA in DIR is reused, so running it again renews only the serving
certificate: pointer configs that pin `ca.crt` keep working, and a running server picks the new
certificate up without a restart.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from fleet.atomic import write_atomic
from fleet.clock import system_clock
from server.errors import PathError


class CertError(PathError):
    """Certificates cannot be made or the existing CA is unusable; `path` names the file or flag."""


@dataclass(frozen=True)
class CertResult:
    """Paths written and whether the CA was created or reused."""

    ca_cert: Path
    ca_key: Path
    cert: Path
    key: Path
    ca_created: bool


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _key_bytes(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def subject_alt_names(dns: Sequence[str], ips: Sequence[str]) -> list[x509.GeneralName]:
    """SAN entries; raises CertError naming the flag of a bad value."""
    names: list[x509.GeneralName] = []
    for name in dns:
        if not name or any(c.isspace() for c in name) or "/" in name:
            raise CertError(f"--dns {name!r}", "not a DNS name")
        names.append(x509.DNSName(name))
    for ip in ips:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(ip)))
        except ValueError:
            raise CertError(f"--ip {ip!r}", "not an IP address") from None
    if not names:
        raise CertError("--dns/--ip", "at least one subject alternative name is required")
    return names


def _load_ca(cert_path: Path, key_path: Path) -> tuple[x509.Certificate, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey]:
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise CertError(str(cert_path), f"existing CA unusable: {exc}") from None
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise CertError(str(key_path), "CA key must be RSA or EC")
    spki = serialization.PublicFormat.SubjectPublicKeyInfo
    if (cert.public_key().public_bytes(serialization.Encoding.DER, spki)
            != key.public_key().public_bytes(serialization.Encoding.DER, spki)):
        raise CertError(str(key_path), "CA key does not match ca.crt")
    return cert, key


def init_certs(directory: Path, *, dns: Sequence[str] = (), ips: Sequence[str] = (), days: int = 365,
               ca_days: int = 3650, common_name: str = "mco-server", now: dt.datetime | None = None) -> CertResult:
    """Create (or reuse) the CA in `directory` and issue a serving certificate with the given SANs."""
    if days <= 0 or ca_days <= 0:
        raise CertError("--days", "must be positive")
    sans = subject_alt_names(dns, ips)
    now = now or system_clock()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CertError(str(directory), f"cannot create: {exc.strerror}") from None
    ca_cert_path, ca_key_path = directory / "ca.crt", directory / "ca.key"
    created = not (ca_cert_path.exists() and ca_key_path.exists())
    if created:
        ca_key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = rsa.generate_private_key(65537, 2048)
        ca_cert = (
            x509.CertificateBuilder()
            .subject_name(_name(f"{common_name}-ca")).issuer_name(_name(f"{common_name}-ca"))
            .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=ca_days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
    else:
        ca_cert, ca_key = _load_ca(ca_cert_path, ca_key_path)
    key = rsa.generate_private_key(65537, 2048)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name)).issuer_name(ca_cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=False,
                                     crl_sign=False, content_commitment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    try:
        if created:
            write_atomic(ca_key_path, _key_bytes(ca_key), mode=0o600)
            write_atomic(ca_cert_path, ca_cert.public_bytes(pem), mode=0o644)
        # key first: a server polling the pair only reloads when both parse and match
        write_atomic(directory / "tls.key", _key_bytes(key), mode=0o600)
        write_atomic(directory / "tls.crt", cert.public_bytes(pem), mode=0o644)
    except OSError as exc:
        raise CertError(str(directory), f"cannot write: {exc.strerror or exc}") from None
    os.chmod(ca_key_path, 0o600)
    return CertResult(ca_cert_path, ca_key_path, directory / "tls.crt", directory / "tls.key", created)
