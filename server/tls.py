"""TLS for the HTTPS listener: TLS 1.2 or newer, HTTP/1.1 only, certificates reloaded without a restart.

The reloader polls the certificate and key files (size, mtime, inode). When they change it first loads
them into a scratch context, so a half-written or mismatched pair is rejected and the old certificate
stays in use; then it loads them into the live context, which every new handshake uses.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from pathlib import Path

from server.errors import PathError

log = logging.getLogger("mco.server")


class TLSSettingsError(PathError, ValueError):
    """The certificate or key cannot be used; `path` names the file."""


def _load(ctx: ssl.SSLContext, cert: Path, key: Path) -> None:
    try:
        ctx.load_cert_chain(str(cert), str(key))
    except FileNotFoundError as exc:
        raise TLSSettingsError(str(exc.filename or cert), "no such file") from None
    except (ssl.SSLError, OSError) as exc:
        raise TLSSettingsError(f"{cert} / {key}", f"cannot load certificate and key: {exc}") from None


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server context with our certificate: TLS >= 1.2, no compression, ALPN http/1.1."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.options |= ssl.OP_NO_COMPRESSION | ssl.OP_CIPHER_SERVER_PREFERENCE
    ctx.set_ciphers("ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:!aNULL:!MD5:!DSS")
    ctx.set_alpn_protocols(["http/1.1"])
    _load(ctx, cert, key)
    return ctx


def _stamp(*paths: Path) -> tuple[tuple[int, int, int], ...]:
    out = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((0, 0, 0))
    return tuple(out)


class CertReloader:
    """Watches cert/key files and reloads them into the live context when a valid new pair appears."""

    def __init__(self, ctx: ssl.SSLContext, cert: Path, key: Path, *, interval: float = 2.0) -> None:
        self.ctx = ctx
        self.cert = cert
        self.key = key
        self.interval = interval
        self.reloads = 0
        self.last_error: str | None = None
        self._stamp = _stamp(cert, key)

    def check(self) -> bool:
        """Reload if the files changed and the new pair is valid; True when a reload happened."""
        stamp = _stamp(self.cert, self.key)
        if stamp == self._stamp:
            return False
        try:
            scratch = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            _load(scratch, self.cert, self.key)
            _load(self.ctx, self.cert, self.key)
        except TLSSettingsError as exc:
            if self.last_error != str(exc):
                log.error("new certificate not loaded, keeping the old one: %s", exc)
            self.last_error = str(exc)
            return False
        self._stamp = stamp
        self.last_error = None
        self.reloads += 1
        log.info("reloaded TLS certificate %s", self.cert)
        return True

    async def run(self) -> None:
        """Poll forever (cancel the task to stop)."""
        while True:
            await asyncio.sleep(self.interval)
            self.check()
