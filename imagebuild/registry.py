"""A small client for the registry HTTP API (distribution spec): pull a base, push blobs and a manifest.

Push is what `skopeo copy oci:... docker://...` does, byte for byte (so the registry's digest is the
local manifest digest; nothing is recompressed): for each blob `HEAD` (skip if present), else a
cross-repository mount when the base lives on the same registry, else `POST /v2/<repo>/blobs/uploads/` and
a monolithic `PUT <location>?digest=`; then `PUT /v2/<repo>/manifests/<tag>` with the manifest media type.

`tls_verify=False` (the CLI's `--tls-verify=false`) tries HTTPS without certificate checks, then plain
HTTP, as skopeo and buildah do for insecure registries. Token auth (`WWW-Authenticate: Bearer`) is done
anonymously, or with basic credentials from a containers auth file (`auths.<host>.auth`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import requests
import urllib3

from imagebuild.errors import RegistryError
from imagebuild.oci import (
    INDEX_TYPES,
    MANIFEST_TYPES,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    BaseImage,
    DerivedImage,
    Descriptor,
    describe_manifest,
    parse_image_json,
    pick_platform,
    sha256_digest,
)
from imagebuild.refs import RegistryRef

ACCEPT = ", ".join((MEDIA_MANIFEST, MEDIA_INDEX, *MANIFEST_TYPES[1:], *INDEX_TYPES[1:]))
_CHALLENGE_RE = re.compile(r'(\w+)="([^"]*)"')

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RegistrySettings:
    """How to talk to registries. `auth_file` is a containers/Docker auth JSON (None: REGISTRY_AUTH_FILE, then
    $XDG_RUNTIME_DIR/containers/auth.json, ~/.config/containers/auth.json, ~/.docker/config.json)."""

    tls_verify: bool = True
    auth_file: Path | None = None
    timeout: float = 120.0


def auth_file_candidates(settings: RegistrySettings) -> list[Path]:
    """Where credentials are looked up, in the containers tools' order."""
    if settings.auth_file:
        return [settings.auth_file]
    if os.environ.get("REGISTRY_AUTH_FILE"):
        return [Path(os.environ["REGISTRY_AUTH_FILE"])]
    out = []
    if os.environ.get("XDG_RUNTIME_DIR"):
        out.append(Path(os.environ["XDG_RUNTIME_DIR"]) / "containers/auth.json")
    home = Path.home()
    out += [home / ".config/containers/auth.json", home / ".docker/config.json"]
    return out


def _credentials(settings: RegistrySettings, host: str) -> tuple[str, str] | None:
    path = next((p for p in auth_file_candidates(settings) if p.exists()), None)
    if path is None:
        return None
    try:
        auths = json.loads(path.read_text()).get("auths") or {}
        token = (auths.get(host) or {}).get("auth")
        if not token:
            return None
        user, _, password = base64.b64decode(token).decode().partition(":")
        return user, password
    except (OSError, ValueError) as exc:
        raise RegistryError(str(path), f"cannot read auth file: {exc}") from exc


class RegistryClient:
    """One registry host; holds the session, the scheme that worked, and bearer tokens per scope."""

    def __init__(self, host: str, *, settings: RegistrySettings | None = None,
                 session: requests.Session | None = None) -> None:
        self.host = host
        self.settings = settings or RegistrySettings()
        self.session = session or requests.Session()
        self.session.verify = self.settings.tls_verify
        if not self.settings.tls_verify:   # asked for: do not warn on every request
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self._base: str | None = None
        self._tokens: dict[str, str] = {}
        self._creds = _credentials(self.settings, host)

    def _endpoint(self) -> str:
        if self._base:
            return self._base
        schemes = ("https",) if self.settings.tls_verify else ("https", "http")
        last: Exception | None = None
        for scheme in schemes:
            url = f"{scheme}://{self.host}/v2/"
            try:
                self.session.get(url, timeout=self.settings.timeout)
                self._base = f"{scheme}://{self.host}"
                return self._base
            except requests.exceptions.RequestException as exc:
                last = exc
        raise RegistryError(f"docker://{self.host}", f"registry not reachable: {last}")

    def _token(self, challenge: str, scope: str) -> str | None:
        params = dict(_CHALLENGE_RE.findall(challenge))
        realm = params.pop("realm", "")
        if not challenge.lower().startswith("bearer") or not realm:
            return None
        params["scope"] = scope
        auth = self._creds
        resp = self.session.get(realm, params=params, auth=auth, timeout=self.settings.timeout)
        if resp.status_code != 200:
            raise RegistryError(f"docker://{self.host}", f"token request failed: HTTP {resp.status_code}")
        body = resp.json()
        return str(body.get("token") or body.get("access_token") or "")

    def request(self, method: str, url_or_path: str, *, repo: str, push: bool = False,
                ok: tuple[int, ...] = (200,), **kwargs: Any) -> requests.Response:
        """One API call with auth; raises RegistryError unless the status is in `ok`."""
        url = url_or_path if "://" in url_or_path else self._endpoint() + url_or_path
        scope = f"repository:{repo}:{'pull,push' if push else 'pull'}"
        headers = dict(kwargs.pop("headers", {}) or {})
        for attempt in range(2):
            if scope in self._tokens:
                headers["Authorization"] = f"Bearer {self._tokens[scope]}"
            elif self._creds:
                headers["Authorization"] = "Basic " + base64.b64encode(":".join(self._creds).encode()).decode()
            try:
                resp = self.session.request(method, url, headers=headers, timeout=self.settings.timeout, **kwargs)
            except requests.exceptions.RequestException as exc:
                raise RegistryError(f"docker://{self.host}/{repo}", f"{method} {url}: {exc}") from exc
            if resp.status_code == 401 and attempt == 0:
                token = self._token(resp.headers.get("WWW-Authenticate", ""), scope)
                if token:
                    self._tokens[scope] = token
                    continue
            break
        if resp.status_code not in ok:
            detail = resp.text[:300].strip()
            raise RegistryError(f"docker://{self.host}/{repo}",
                                f"{method} {url_or_path}: HTTP {resp.status_code} {detail}")
        return resp

    # -- pull -------------------------------------------------------------------------------------------

    def get_manifest(self, repo: str, reference: str) -> tuple[bytes, str]:
        """Manifest (or index) bytes and media type; checked against the digest when pinned."""
        resp = self.request("GET", f"/v2/{repo}/manifests/{reference}", repo=repo, headers={"Accept": ACCEPT})
        raw = resp.content
        if reference.startswith("sha256:") and sha256_digest(raw) != reference:
            raise RegistryError(f"docker://{self.host}/{repo}@{reference}", "manifest does not match its digest")
        media = resp.headers.get("Content-Type", "").split(";")[0].strip()
        return raw, media

    def open_blob(self, repo: str, desc: Descriptor) -> IO[bytes]:
        """A stream of a blob's bytes (the caller verifies the digest while copying)."""
        resp = self.request("GET", f"/v2/{repo}/blobs/{desc.digest}", repo=repo, stream=True)
        resp.raw.decode_content = False
        return resp.raw  # type: ignore[no-any-return,return-value]

    def image(self, ref: RegistryRef, *, arch: str = "amd64") -> BaseImage:
        """Resolve a registry reference to a base image (platform chosen from an index)."""
        raw, media = self.get_manifest(ref.repo, ref.reference)
        where = f"docker://{ref}"
        data = parse_image_json(raw, where)
        if media in INDEX_TYPES or data.get("mediaType") in INDEX_TYPES or "manifests" in data:
            desc = pick_platform(data, where, arch=arch)
            raw, media = self.get_manifest(ref.repo, desc.digest)
            data = parse_image_json(raw, where)
        config_desc, layers = describe_manifest(data, where)
        config_stream = self.open_blob(ref.repo, config_desc)
        config_raw = config_stream.read()
        if sha256_digest(config_raw) != config_desc.digest:
            raise RegistryError(where, "config blob does not match its digest")
        return BaseImage(str(ref), data, sha256_digest(raw), parse_image_json(config_raw, f"{where} config"),
                         config_desc, layers, lambda d: self.open_blob(ref.repo, d), registry_name=ref.name)

    # -- push -------------------------------------------------------------------------------------------

    def has_blob(self, repo: str, digest: str) -> bool:
        """Whether the repository already has the blob."""
        resp = self.request("HEAD", f"/v2/{repo}/blobs/{digest}", repo=repo, push=True, ok=(200, 404))
        return resp.status_code == 200

    def mount_blob(self, repo: str, digest: str, from_repo: str) -> bool:
        """Cross-repository mount; False when the registry started an upload instead (then cancelled)."""
        resp = self.request("POST", f"/v2/{repo}/blobs/uploads/", repo=repo, push=True, ok=(201, 202),
                            params={"mount": digest, "from": from_repo})
        if resp.status_code == 201:
            return True
        location = resp.headers.get("Location")
        if location:
            self.request("DELETE", self._absolute(location), repo=repo, push=True, ok=(200, 202, 204, 404))
        return False

    def _absolute(self, location: str) -> str:
        return location if "://" in location else self._endpoint() + location

    def upload_blob(self, repo: str, desc: Descriptor, data: IO[bytes] | bytes) -> None:
        """Monolithic upload: POST an upload session, PUT the bytes with the digest."""
        resp = self.request("POST", f"/v2/{repo}/blobs/uploads/", repo=repo, push=True, ok=(202,))
        location = resp.headers.get("Location")
        if not location:
            raise RegistryError(f"docker://{self.host}/{repo}", "upload session without a Location")
        url = self._absolute(location)
        url += ("&" if "?" in url else "?") + f"digest={desc.digest}"
        self.request("PUT", url, repo=repo, push=True, ok=(201,), data=data,
                     headers={"Content-Type": "application/octet-stream"})

    def put_manifest(self, repo: str, tag: str, raw: bytes, media_type: str) -> str:
        """Upload a manifest under a tag; returns its digest, checked against the registry's answer."""
        resp = self.request("PUT", f"/v2/{repo}/manifests/{tag}", repo=repo, push=True, ok=(201,),
                            data=raw, headers={"Content-Type": media_type})
        digest = sha256_digest(raw)
        answered = resp.headers.get("Docker-Content-Digest")
        if answered and answered != digest:
            raise RegistryError(f"docker://{self.host}/{repo}:{tag}",
                                f"registry stored digest {answered}, expected {digest}")
        return digest


def push_image(client: RegistryClient, dest: RegistryRef, image: DerivedImage, *,
               open_local: Callable[[Descriptor], IO[bytes] | None], base: BaseImage | None = None,
               progress: Progress = lambda _m: None) -> str:
    """Push every blob then the manifest; returns the manifest digest the registry now serves."""
    mount_from = ""
    if base is not None and base.registry_name.startswith(client.host + "/"):
        mount_from = base.registry_name[len(client.host) + 1:]
    for desc in (*image.layers, image.config_descriptor):
        short = desc.digest[7:19]
        if client.has_blob(dest.repo, desc.digest):
            progress(f"blob {short} already in {dest.name}")
            continue
        if mount_from and client.mount_blob(dest.repo, desc.digest, mount_from):
            progress(f"blob {short} mounted from {client.host}/{mount_from}")
            continue
        if desc.digest == image.config_descriptor.digest:
            client.upload_blob(dest.repo, desc, image.config_bytes)
        else:
            stream = open_local(desc)
            if stream is None:
                raise RegistryError(f"docker://{dest}", f"blob {desc.digest} is not available to upload")
            with stream, _seekable(stream) as body:
                progress(f"uploading blob {short} ({desc.size} bytes)")
                client.upload_blob(dest.repo, desc, body)
    progress(f"writing manifest {dest}")
    return client.put_manifest(dest.repo, dest.tag or "latest", image.manifest_bytes, image.manifest_descriptor.media_type)


@contextlib.contextmanager
def _seekable(stream: IO[bytes]) -> Iterator[IO[bytes]]:
    """A local file as is; anything else (a registry stream) spooled to a temporary file first."""
    try:
        stream.fileno()
        yield stream
        return
    except (OSError, AttributeError, ValueError):
        pass
    with tempfile.TemporaryFile() as spool:
        shutil.copyfileobj(stream, spool, 1 << 20)
        spool.seek(0)
        yield spool
